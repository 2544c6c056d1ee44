// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Live device-mapper tables through libdevmapper.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdevmapper.h>

#include "dmcopy-private.h"

/*
 * libdm logs through a global function; while a call of ours runs, its
 * errors go into the context that made it instead of stderr.
 */
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
	dm_log_ctx = ctx;
	dm_log_errno = 0;
	dm_log_with_errno_init(dm_log_to_ctx);
}

static void dm_log_end(void)
{
	dm_log_with_errno_init(NULL);
	dm_log_ctx = NULL;
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
		r = -(dm_log_errno ?: ENODEV);
		if (!ctx->err[0])
			dmcopy_err(ctx, r, "cannot talk to device-mapper");
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
