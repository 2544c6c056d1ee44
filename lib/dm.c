// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Live device-mapper tables through libdevmapper.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <libdevmapper.h>

#include "dmcopy-private.h"

/*
 * libdm logs through a global function; while a call of ours runs, its
 * errors go into the context that made it instead of stderr. Calls into
 * libdm are serialised by dm_lock, so threads may use the library at
 * once (dmcopy provision --jobs copies in threads, and a copy reads dm
 * tables); libdm's log function is then libdm's default again, as
 * libdm.h documents for libdmcopy users.
 */
static pthread_mutex_t dm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dmcopy_ctx *dm_log_ctx;
static int dm_log_errno;

static void dm_log_to_ctx(int level, const char *file, int line, int dm_errno,
			  const char *fmt, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	/* level carries flags above the log level (_LOG_STDERR...) */
	if ((level & 7) > 3 || !dm_log_ctx)
		return;
	/* errors carry an errno, or 0 or -1 when there is none */
	if (dm_errno > 0)
		dm_log_errno = dm_errno;
	va_start(ap, fmt);
	vsnprintf(dm_log_ctx->err, sizeof(dm_log_ctx->err), fmt, ap);
	va_end(ap);
}

static void dm_log_begin(struct dmcopy_ctx *ctx)
{
	pthread_mutex_lock(&dm_lock);
	dm_log_ctx = ctx;
	dm_log_errno = 0;
	dm_log_with_errno_init(dm_log_to_ctx);
}

static void dm_log_end(void)
{
	dm_log_with_errno_init(NULL);
	dm_log_ctx = NULL;
	pthread_mutex_unlock(&dm_lock);
}

/*
 * Is there a device-mapper to talk to? libdm's own message for a kernel
 * without one ("Incompatible libdevmapper ... and kernel driver (unknown
 * version)") is not what the user needs to read.
 */
static bool dm_available(void)
{
	char version[64];

	return dm_driver_version(version, sizeof(version));
}

static int copy_targets(struct dmcopy_ctx *ctx, struct dm_task *dmt,
			struct dmcopy_dm_target **targets, size_t *count)
{
	struct dmcopy_dm_target *list = NULL, *grown;
	uint64_t start, length;
	char *type, *params;
	size_t n = 0;
	void *next = NULL;

	do {
		next = dm_get_next_target(dmt, next, &start, &length, &type,
					  &params);
		/* a device without a live table yields one empty target */
		if (!type)
			break;
		grown = realloc(list, (n + 1) * sizeof(*list));
		if (!grown) {
			free(list);
			return dmcopy_err(ctx, -ENOMEM, "out of memory");
		}
		list = grown;
		list[n].start = start;
		list[n].length = length;
		snprintf(list[n].type, sizeof(list[n].type), "%s", type);
		n++;
	} while (next);

	*targets = list;
	*count = n;
	return 0;
}

int dmcopy_dm_targets(struct dmcopy_ctx *ctx, const char *dm_name,
		      struct dmcopy_dm_target **targets, size_t *count)
{
	struct dm_task *dmt;
	struct dm_info info;
	int r = -EIO;

	*targets = NULL;
	*count = 0;
	ctx->err[0] = '\0';
	dm_log_begin(ctx);

	/* fails also when the kernel has no device-mapper (it logs why) */
	if (!(dmt = dm_task_create(DM_DEVICE_TABLE))) {
		r = dm_available() ? -(dm_log_errno ?: ENODEV) : -ENODEV;
		if (!ctx->err[0] || r == -ENODEV)
			dmcopy_err(ctx, r, "%s: device-mapper not available (no dm_mod in this kernel, or /dev/mapper/control missing)",
				   dm_name);
		goto out;
	}
	if (!dm_task_set_name(dmt, dm_name)) {
		r = dmcopy_err(ctx, -EINVAL, "%s: invalid dm name", dm_name);
		goto out;
	}
	if (!dm_task_run(dmt)) {
		r = dm_task_get_errno(dmt) > 0 ? -dm_task_get_errno(dmt) :
			-(dm_log_errno ?: EIO);
		if (!ctx->err[0])
			dmcopy_err(ctx, r, "%s: cannot read the table: %s",
				   dm_name, strerror(-r));
		goto out;
	}
	if (!dm_task_get_info(dmt, &info) || !info.exists) {
		r = dmcopy_err(ctx, -ENXIO, "%s: no such dm device", dm_name);
		goto out;
	}
	r = copy_targets(ctx, dmt, targets, count);
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r;
}

int dmcopy_dm_types(const struct dmcopy_dm_target *targets, size_t count,
		    char *buf, size_t len)
{
	size_t i, j, used = 0;
	int n;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	for (i = 0; i < count; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(targets[j].type, targets[i].type))
				break;
		if (j < i)
			continue;
		n = dmcopy_snprintf(buf + used, len - used, "%s%s",
				    used ? "," : "", targets[i].type);
		if (n < 0)
			return n;
		used += (size_t)n;
	}
	return 0;
}

/*
 * Mapped devices made, changed and removed: one dm_task per ioctl, the
 * way dmsetup does it. udev does work on create, resume and remove (nodes,
 * links, blkid); those tasks carry a cookie and dm_udev_wait() waits for
 * the rules. Without udev sync (DM_DISABLE_UDEV=1, no udevd, or
 * dmcopy_set_udev_sync(ctx, false)) the cookie is 0 and dm_udev_wait()
 * has libdevmapper make the /dev/mapper nodes itself.
 */

void dmcopy_set_udev_sync(struct dmcopy_ctx *ctx, bool sync)
{
	ctx->udev_sync = sync;
}

bool dmcopy_udev_sync(struct dmcopy_ctx *ctx)
{
	return ctx->udev_sync && dm_udev_get_sync_support();
}

/* The errno of a failed dm_task_run(), and a message if libdm left none. */
static int task_failed(struct dmcopy_ctx *ctx, struct dm_task *dmt,
		       const char *name, const char *what)
{
	int r = dm_task_get_errno(dmt) > 0 ? -dm_task_get_errno(dmt) :
		-(dm_log_errno ?: EIO);

	if (!dm_available())
		return dmcopy_err(ctx, -ENODEV,
				  "%s: %s failed: device-mapper not available (no dm_mod in this kernel, or /dev/mapper/control missing)",
				  name, what);
	if (!ctx->err[0])
		dmcopy_err(ctx, r, "%s: %s failed: %s", name, what, strerror(-r));
	return r;
}

/* A task for @name, with libdm's log going to @ctx. */
static struct dm_task *new_task(struct dmcopy_ctx *ctx, int type,
				const char *name, int *r)
{
	struct dm_task *dmt;

	ctx->err[0] = '\0';
	dm_log_begin(ctx);
	if (!name || !*name || strlen(name) >= DMCOPY_NAME_LEN || strchr(name, '/')) {
		*r = dmcopy_err(ctx, -EINVAL, "%s: invalid dm name",
				name ? name : "");
		return NULL;
	}
	dmt = dm_task_create(type);
	if (!dmt) {
		*r = dm_available() ? -(dm_log_errno ?: ENODEV) : -ENODEV;
		if (!ctx->err[0] || *r == -ENODEV)
			dmcopy_err(ctx, *r, "%s: device-mapper not available (no dm_mod in this kernel, or /dev/mapper/control missing)",
				   name);
		return NULL;
	}
	if (!dm_task_set_name(dmt, name)) {
		*r = dmcopy_err(ctx, -EINVAL, "%s: invalid dm name", name);
		dm_task_destroy(dmt);
		return NULL;
	}
	return dmt;
}

static int add_targets(struct dmcopy_ctx *ctx, struct dm_task *dmt,
		       const struct dmcopy_table *table)
{
	const char *type, *params;
	uint64_t start, length;
	size_t i;

	if (!dmcopy_table_count(table))
		return dmcopy_err(ctx, -EINVAL, "empty table");
	for (i = 0; i < dmcopy_table_count(table); i++) {
		dmcopy_table_target(table, i, &start, &length, &type, &params);
		if (!dm_task_add_target(dmt, start, length, type, params))
			return dmcopy_err(ctx, -ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * Run @dmt with a udev cookie and wait for udev (or, without udev sync,
 * have libdm make the nodes). libdm's sync switch is global: it is turned
 * off for this call only when @ctx says so, then put back as it was.
 */
static int run_with_cookie(struct dmcopy_ctx *ctx, struct dm_task *dmt,
			   const char *name, const char *what)
{
	int was_sync = dm_udev_get_sync_support();
	uint32_t cookie = 0;
	int r = 0;

	if (!ctx->udev_sync)
		dm_udev_set_sync_support(0);
	if (!dm_task_set_cookie(dmt, &cookie, 0))
		r = dmcopy_err(ctx, -ENOMEM, "%s: cannot make a udev cookie",
			       name);
	else if (!dm_task_run(dmt))
		r = task_failed(ctx, dmt, name, what);
	/* also after a failure: the cookie's semaphore goes away */
	(void)dm_udev_wait(cookie);
	if (!ctx->udev_sync)
		dm_udev_set_sync_support(was_sync);
	return r;
}

int dmcopy_dm_create(struct dmcopy_ctx *ctx, const char *name,
		     const struct dmcopy_table *table)
{
	char uuid[DMCOPY_UUID_LEN];
	struct dm_task *dmt;
	int r;

	dmt = new_task(ctx, DM_DEVICE_CREATE, name, &r);
	if (!dmt)
		goto out;
	r = dmcopy_snprintf(uuid, sizeof(uuid), "%s%s", DMCOPY_UUID_PREFIX, name);
	if (r < 0) {
		r = dmcopy_err(ctx, -ENAMETOOLONG,
			       "%s: name too long for the uuid " DMCOPY_UUID_PREFIX "<name>",
			       name);
		goto out;
	}
	if (!dm_task_set_uuid(dmt, uuid)) {
		r = dmcopy_err(ctx, -EINVAL, "%s: invalid uuid", uuid);
		goto out;
	}
	r = add_targets(ctx, dmt, table);
	if (r)
		goto out;
	/* create, load and resume: udev sees the device once it has a table */
	r = run_with_cookie(ctx, dmt, name, "create");
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r;
}

int dmcopy_dm_load(struct dmcopy_ctx *ctx, const char *name,
		   const struct dmcopy_table *table)
{
	struct dm_task *dmt;
	int r;

	dmt = new_task(ctx, DM_DEVICE_RELOAD, name, &r);
	if (!dmt)
		goto out;
	r = add_targets(ctx, dmt, table);
	if (r)
		goto out;
	if (!dm_task_run(dmt))
		r = task_failed(ctx, dmt, name, "load");
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r;
}

int dmcopy_dm_suspend(struct dmcopy_ctx *ctx, const char *name)
{
	struct dm_task *dmt;
	int r = 0;

	dmt = new_task(ctx, DM_DEVICE_SUSPEND, name, &r);
	if (!dmt)
		goto out;
	if (!dm_task_run(dmt))
		r = task_failed(ctx, dmt, name, "suspend");
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r;
}

int dmcopy_dm_resume(struct dmcopy_ctx *ctx, const char *name)
{
	struct dm_task *dmt;
	int r;

	dmt = new_task(ctx, DM_DEVICE_RESUME, name, &r);
	if (!dmt)
		goto out;
	r = run_with_cookie(ctx, dmt, name, "resume");
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r;
}

int dmcopy_dm_remove(struct dmcopy_ctx *ctx, const char *name)
{
	struct dm_task *dmt;
	int r;

	dmt = new_task(ctx, DM_DEVICE_REMOVE, name, &r);
	if (!dmt)
		goto out;
	/* udev's blkid may hold the device open for a moment: try again */
	if (!dm_task_retry_remove(dmt)) {
		r = dmcopy_err(ctx, -ENOMEM, "out of memory");
		goto out;
	}
	r = run_with_cookie(ctx, dmt, name, "remove");
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r;
}

int dmcopy_dm_uuid(struct dmcopy_ctx *ctx, const char *name, char *uuid,
		   size_t len)
{
	struct dm_task *dmt;
	struct dm_info info;
	const char *u;
	int r = 0;

	dmt = new_task(ctx, DM_DEVICE_INFO, name, &r);
	if (!dmt)
		goto out;
	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &info)) {
		r = task_failed(ctx, dmt, name, "info");
		goto out;
	}
	if (!info.exists) {
		r = dmcopy_err(ctx, -ENODEV, "%s: no such mapped device", name);
		goto out;
	}
	u = dm_task_get_uuid(dmt);
	r = dmcopy_snprintf(uuid, len, "%s", u ? u : "");
	if (r < 0)
		dmcopy_err(ctx, r, "%s: uuid too long", name);
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r < 0 ? r : 0;
}

int dmcopy_dm_info(struct dmcopy_ctx *ctx, const char *name,
		   struct dmcopy_dm_info *out)
{
	struct dmcopy_dm_info got = { .size = sizeof(got) };
	struct dm_task *dmt;
	struct dm_info info;
	int r;

	r = dmcopy_check_size(ctx, out->size, DMCOPY_DM_INFO_SIZE_V1,
			      "dmcopy_dm_info");
	if (r)
		return r;
	dmt = new_task(ctx, DM_DEVICE_INFO, name, &r);
	if (!dmt)
		goto out;
	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &info)) {
		r = task_failed(ctx, dmt, name, "info");
		goto out;
	}
	if (!info.exists) {
		r = -ENODEV;
		ctx->err[0] = '\0';
		goto out;
	}
	got.major = info.major;
	got.minor = info.minor;
	got.open_count = info.open_count;
	got.suspended = info.suspended;
	got.live_table = info.live_table;
	got.inactive_table = info.inactive_table;
	dmcopy_struct_out(out, &got, sizeof(got));
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r;
}

int dmcopy_message(struct dmcopy_ctx *ctx, const char *name, uint64_t sector,
		   const char *text)
{
	struct dm_task *dmt;
	int r = 0;

	dmt = new_task(ctx, DM_DEVICE_TARGET_MSG, name, &r);
	if (!dmt)
		goto out;
	if (!text || !*text) {
		r = dmcopy_err(ctx, -EINVAL, "%s: empty message", name);
		goto out;
	}
	if (!dm_task_set_sector(dmt, sector) || !dm_task_set_message(dmt, text)) {
		r = dmcopy_err(ctx, -ENOMEM, "out of memory");
		goto out;
	}
	if (!dm_task_run(dmt))
		r = task_failed(ctx, dmt, name, "message");
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r;
}

/*
 * status_of_target - run DM_DEVICE_STATUS on @name and hand the status
 * parameters of the first target of type @type in its live table to
 * @parse, and return what it returns; -EINVAL when there is none.
 */
static int target_params(struct dmcopy_ctx *ctx, int task, const char *name,
			 const char *type,
			 int (*parse)(struct dmcopy_ctx *ctx, const char *params,
				      void *arg),
			 void *arg);

static int status_of_target(struct dmcopy_ctx *ctx, const char *name,
			    const char *type,
			    int (*parse)(struct dmcopy_ctx *ctx,
					 const char *params, void *arg),
			    void *arg)
{
	return target_params(ctx, DM_DEVICE_STATUS, name, type, parse, arg);
}

/*
 * The status (DM_DEVICE_STATUS) or table line (DM_DEVICE_TABLE) of the
 * first target of @type in the live table of @name, given to @parse.
 */
static int target_params(struct dmcopy_ctx *ctx, int task, const char *name,
			 const char *type,
			 int (*parse)(struct dmcopy_ctx *ctx, const char *params,
				      void *arg),
			 void *arg)
{
	uint64_t start, length;
	char *target_type, *params;
	struct dm_task *dmt;
	struct dm_info info;
	void *next = NULL;
	int r;

	dmt = new_task(ctx, task, name, &r);
	if (!dmt)
		goto out;
	if (!dm_task_run(dmt)) {
		r = task_failed(ctx, dmt, name,
				task == DM_DEVICE_STATUS ? "status" : "table");
		goto out;
	}
	if (!dm_task_get_info(dmt, &info) || !info.exists) {
		r = dmcopy_err(ctx, -ENXIO, "%s: no such dm device", name);
		goto out;
	}
	r = dmcopy_err(ctx, -EINVAL, "%s: no %s target in the live table",
		       name, type);
	do {
		next = dm_get_next_target(dmt, next, &start, &length,
					  &target_type, &params);
		if (target_type && !strcmp(target_type, type)) {
			r = parse(ctx, params ? params : "", arg);
			break;
		}
	} while (next);
	if (!r)
		ctx->err[0] = '\0';
out:
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r;
}

static int parse_copy_status(struct dmcopy_ctx *ctx, const char *params,
			     void *status)
{
	return dmcopy_parse_copy_status(ctx, params, status);
}

int dmcopy_dm_copy_status(struct dmcopy_ctx *ctx, const char *name,
			  struct dmcopy_copy_status *status)
{
	int r = dmcopy_check_size(ctx, status->size, DMCOPY_COPY_STATUS_SIZE_V1,
				  "dmcopy_copy_status");

	return r ? r : status_of_target(ctx, name, "copy", parse_copy_status,
					 status);
}

struct hydration {
	uint64_t hydrated, regions;
};

static int parse_clone_status(struct dmcopy_ctx *ctx, const char *params,
			      void *arg)
{
	struct hydration *h = arg;

	/* <mbs> <used>/<total> <region> <hydrated>/<regions> ... */
	if (sscanf(params, "%*s %*s %*s %" SCNu64 "/%" SCNu64,
		   &h->hydrated, &h->regions) != 2)
		return dmcopy_err(ctx, -EINVAL,
				  "unexpected clone status \"%s\"", params);
	return 0;
}

struct clone_devices {
	char *src, *dst;
	size_t len;
};

static int parse_clone_table(struct dmcopy_ctx *ctx, const char *params,
			     void *arg)
{
	struct clone_devices *d = arg;
	unsigned int dmaj, dmin, smaj, smin;

	/* <metadata dev> <destination dev> <source dev> <region size> ... */
	if (sscanf(params, "%*s %u:%u %u:%u", &dmaj, &dmin, &smaj, &smin) != 4)
		return dmcopy_err(ctx, -EINVAL, "unexpected clone table \"%s\"",
				  params);
	if (dmcopy_snprintf(d->src, d->len, "%u:%u", smaj, smin) < 0 ||
	    dmcopy_snprintf(d->dst, d->len, "%u:%u", dmaj, dmin) < 0)
		return dmcopy_err(ctx, -ENOSPC, "buffer too small");
	return 0;
}

int dmcopy_dm_clone_devices(struct dmcopy_ctx *ctx, const char *name,
			    char *src, char *dst, size_t len)
{
	struct clone_devices d = { .src = src, .dst = dst, .len = len };

	return target_params(ctx, DM_DEVICE_TABLE, name, "clone",
			     parse_clone_table, &d);
}

int dmcopy_dm_hydration(struct dmcopy_ctx *ctx, const char *name,
			uint64_t *hydrated, uint64_t *regions)
{
	struct hydration h;
	int r;

	r = status_of_target(ctx, name, "clone", parse_clone_status, &h);
	if (!r) {
		*hydrated = h.hydrated;
		*regions = h.regions;
	}
	return r;
}

int dmcopy_dm_segments(struct dmcopy_ctx *ctx, const char *dm_name,
		       struct dmcopy_dm_segment **segs, size_t *count)
{
	struct dmcopy_dm_segment *list = NULL, *grown;
	uint64_t start, length;
	char *type, *params;
	struct dm_task *dmt;
	struct dm_info info;
	void *next = NULL;
	size_t n = 0;
	int r = 0;

	*segs = NULL;
	*count = 0;
	dmt = new_task(ctx, DM_DEVICE_TABLE, dm_name, &r);
	if (!dmt)
		goto out;
	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &info)) {
		r = task_failed(ctx, dmt, dm_name, "table");
		goto out;
	}
	if (!info.exists) {
		r = dmcopy_err(ctx, -ENODEV, "%s: no such mapped device", dm_name);
		goto out;
	}
	do {
		next = dm_get_next_target(dmt, next, &start, &length, &type,
					  &params);
		if (!type)
			break;
		grown = realloc(list, (n + 1) * sizeof(*list));
		if (!grown) {
			r = dmcopy_err(ctx, -ENOMEM, "out of memory");
			goto out;
		}
		list = grown;
		list[n] = (struct dmcopy_dm_segment){
			.start = start, .length = length,
		};
		/* the kernel prints a linear target's device as MAJ:MIN */
		list[n].linear = !strcmp(type, "linear") && params &&
			sscanf(params, "%u:%u %" SCNu64, &list[n].major,
			       &list[n].minor, &list[n].offset) == 3;
		n++;
	} while (next);
	*segs = list;
	*count = n;
	list = NULL;
out:
	free(list);
	if (dmt)
		dm_task_destroy(dmt);
	dm_log_end();
	return r < 0 ? r : 0;
}
