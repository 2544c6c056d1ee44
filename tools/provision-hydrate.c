// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Hydrating clones: each LV is usable at once through a dm-clone device
 * over the golden image, which dm-kcopyd copies into the LV in the
 * background (offloaded where the device copies); hydrated, the device
 * becomes a linear mapping of its LV. Every device-mapper call goes
 * through libdmcopy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "provision.h"

/*
 * Whether the mapped device @name is there; its kernel name (dm-N) and
 * MAJ:MIN, as dm-clone names it in the kernel log, into @c when it is.
 */
static bool dm_present(struct dmcopy_ctx *ctx, const char *name,
		       struct clone *c)
{
	struct dmcopy_dm_info info = { .size = sizeof(info) };

	if (dmcopy_dm_info(ctx, name, &info))
		return false;
	if (c) {
		snprintf(c->kname, sizeof(c->kname), "dm-%u", info.minor);
		snprintf(c->devno, sizeof(c->devno), "%u:%u", info.major,
			 info.minor);
	}
	return true;
}

/*
 * The metadata volume of a hydrating clone: dm-clone's bitmap of hydrated
 * regions, a bit each, in 4 KiB blocks of a persistent btree; 4 MiB and
 * twice the bitmap is plenty. lvcreate zeroes its first 4 KiB, so dm-clone
 * formats it.
 */
static int hydrate_metadata(const struct provision *o, const struct clone *c)
{
	uint64_t regions = (o->size / 512 + HYDRATE_REGION - 1) / HYDRATE_REGION;
	char name[300], vg[200], size[32];
	char *create[] = { "lvcreate", "-y", "-Wn", "-n", name, "-L", size,
			   "--addtag", CLONE_TAG, "--addtag", (char *)o->tag,
			   vg, NULL };

	snprintf(name, sizeof(name), "%s%s", c->name, HMETA_SUFFIX);
	snprintf(vg, sizeof(vg), "%s", o->vg);
	snprintf(size, sizeof(size), "%" PRIu64 "b",
		 (uint64_t)(4 << 20) + ((regions / 8 + 4095) & ~(uint64_t)4095) * 2);
	return run(create, NULL);
}

/*
 * The clone, usable at once: dm-clone over the golden image (source) and
 * the clone's LV (destination); reads of what is not hydrated yet come
 * from the golden image, writes go to the LV, and the rest is copied in
 * the background with dm-kcopyd (offloaded where the device copies).
 */
static int hydrate_start(struct dmcopy_ctx *ctx, const struct provision *o,
			 struct clone *c, bool paused)
{
	struct dmcopy_table *table = dmcopy_table_new(ctx);
	char params[1200];
	int r = -ENOMEM;

	snprintf(params, sizeof(params), "/dev/%s/%s%s /dev/%s/%s %s %u%s",
		 o->vg, c->name, HMETA_SUFFIX, o->vg, c->name, o->golden,
		 HYDRATE_REGION, paused ? " 1 no_hydration" : "");
	if (table)
		r = dmcopy_table_add_target(table, o->size / 512, "clone", params);
	if (!r)
		r = dmcopy_dm_create(ctx, c->dm, table);
	dmcopy_table_free(table);
	if (r) {
		snprintf(c->error, sizeof(c->error),
			 "creating the dm-clone device %s failed: %s", c->dm,
			 dmcopy_last_error(ctx));
		return -1;
	}
	dm_present(ctx, c->dm, c);
	return 0;
}

/*
 * Bytes the device copied into @path by offload so far: offloaded_bytes of
 * its disk's copy_stat (dm-clone hydrates through dm-kcopyd, which offers
 * copies to the device below the clone's LV). 0 when the kernel has no
 * copy_stat.
 */
static uint64_t offloaded_into(const char *path)
{
	struct dmcopy_ctx *ctx = new_ctx();
	struct dmcopy_caps caps = { .size = sizeof(caps) };
	uint64_t bytes = 0;

	if (!dmcopy_device_caps(ctx, path, &caps)) {
		bytes = caps.offloaded_bytes;
		dmcopy_caps_release(&caps);
	}
	dmcopy_free(ctx);
	return bytes;
}

/*
 * What this run saw of a clone's hydration: the regions hydrated since it
 * began waiting, of which the device copied offloaded_into() the LV; the
 * rest dm-kcopyd read and wrote in the kernel.
 */
static void hydrate_report(const struct provision *o, struct clone *c)
{
	const uint64_t region = (uint64_t)HYDRATE_REGION * 512;
	uint64_t from = c->hydrated0 * region;
	uint64_t now = offloaded_into(c->path);
	uint64_t offloaded = now > c->offloaded0 ? now - c->offloaded0 : 0;

	c->rep.copied = from < o->size ? o->size - from : 0;
	c->rep.offloaded = offloaded < c->rep.copied ? offloaded : c->rep.copied;
	c->rep.emulated = c->rep.copied - c->rep.offloaded;
	c->rep.userspace = 0;
}

/* dm-clone's progress, <hydrated>/<regions>; -1 on failure. */
static int hydrate_progress(struct dmcopy_ctx *ctx, struct clone *c)
{
	return dmcopy_dm_hydration(ctx, c->dm, &c->hydrated, &c->regions) ?
	       -1 : 0;
}

/*
 * Hydrated: the clone device becomes a plain linear mapping of the LV, in
 * place (whoever has it open goes on), dm-clone's metadata goes, and the
 * device itself too when nobody has it open: the clone is its LV.
 */
static int hydrate_finish(struct dmcopy_ctx *ctx, const struct provision *o,
			  struct clone *c)
{
	struct dmcopy_dm_info info = { .size = sizeof(info) };
	struct dmcopy_segment seg = {
		.size = sizeof(seg),
		.type = DMCOPY_TARGET_LINEAR,
		.device = c->path,
		.length = o->size,
	};
	struct dmcopy_table *table = dmcopy_table_new(ctx);
	char lv[300], meta[300];
	char *deltag[] = { "lvchange", "--deltag", PARTIAL_TAG, "--deltag",
			   HYDRATING_TAG, lv, NULL };
	int r = -ENOMEM;

	if (table)
		r = dmcopy_table_add_segment(table, &seg);
	if (!r)
		r = dmcopy_dm_load(ctx, c->dm, table);
	if (!r)
		r = dmcopy_dm_suspend(ctx, c->dm);
	if (!r)
		r = dmcopy_dm_resume(ctx, c->dm);
	dmcopy_table_free(table);
	if (r) {
		snprintf(c->error, sizeof(c->error),
			 "hydrated, but switching %s to linear failed: %s",
			 c->dm, dmcopy_last_error(ctx));
		/* never left suspended: whoever has it open goes on */
		dmcopy_dm_resume(ctx, c->dm);
		return -1;
	}
	if (!dmcopy_dm_info(ctx, c->dm, &info) && !info.open_count)
		dmcopy_dm_remove(ctx, c->dm);
	snprintf(meta, sizeof(meta), "%s%s", c->name, HMETA_SUFFIX);
	lv_remove(o->vg, meta);
	snprintf(lv, sizeof(lv), "%s/%s", o->vg, c->name);
	if (run(deltag, NULL)) {
		snprintf(c->error, sizeof(c->error),
			 "hydrated, but lvchange --deltag failed (see above)");
		return -1;
	}
	return 0;
}

/*
 * dm-clone retries a region it failed to hydrate for ever, logging
 * "hydration failed". Read the kernel log for that, for our devices.
 */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

static void kmsg_failures(struct dmcopy_ctx *ctx, int fd, struct provision *o)
{
	char rec[2048];
	ssize_t n;
	unsigned int i;

	if (fd < 0)
		return;
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		char *msg;

		if (n <= 0)
			continue;	/* EPIPE: records were overwritten */
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg || !strstr(msg, "hydration failed"))
			continue;
		for (i = 0; i < o->count; i++) {
			struct clone *c = &o->clones[i];
			char needle[64];

			if (c->state != CLONE_PARTIAL || !c->devno[0])
				continue;
			snprintf(needle, sizeof(needle), "clone: %s: ", c->devno);
			if (!strstr(msg, needle))
				continue;
			/* stop the retries; the clone stays usable as it is */
			dmcopy_message(ctx, c->dm, 0, "disable_hydration");
			c->state = CLONE_FAILED;
			snprintf(c->error, sizeof(c->error),
				 "hydration failed at an I/O error (see the kernel log): %s stays a dm-clone device over the golden image, usable, with %" PRIu64 " of %" PRIu64 " regions hydrated; a re-run tries again",
				 c->dm, c->hydrated, c->regions);
		}
	}
}

/*
 * Make every clone usable through its dm-clone device, then wait for
 * them to hydrate, switching each to its plain LV as it is done.
 */
void hydrate_clones(struct provision *o, bool *create_failed)
{
	char sizearg[32], name[300], vg[200];
	char *create[] = { "lvcreate", "-y", "-Wn", "-n", name,
			   "-L", sizearg, "--addtag", CLONE_TAG,
			   "--addtag", PARTIAL_TAG, "--addtag", HYDRATING_TAG,
			   "--addtag", (char *)o->tag, "--addtag", o->golden_tag,
			   vg, NULL };
	struct dmcopy_ctx *ctx = new_ctx();
	struct timespec t0;
	unsigned int i, pending = 0;
	int kmsg = kmsg_open();

	snprintf(sizearg, sizeof(sizearg), "%" PRIu64 "b", o->size);
	snprintf(vg, sizeof(vg), "%s", o->vg);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < o->count; i++) {
		struct clone *c = &o->clones[i];
		char meta[300], mapped[320];
		bool earlier;

		if (c->state != CLONE_NEW && c->state != CLONE_PARTIAL)
			continue;
		if (*create_failed || stop_signal) {
			c->state = stop_signal ? CLONE_INTERRUPTED : CLONE_NOT_CREATED;
			continue;
		}
		snprintf(name, sizeof(name), "%s", c->name);
		if (c->state == CLONE_NEW) {
			int r = run(create, NULL);

			if (r) {
				c->state = CLONE_NOT_CREATED;
				snprintf(c->error, sizeof(c->error),
					 "lvcreate failed (exit %d, see above)", r);
				*create_failed = true;
				continue;
			}
			c->created = true;
			c->state = CLONE_PARTIAL;
		} else {
			char lv[300];
			char *addtag[] = { "lvchange", "--addtag", HYDRATING_TAG,
					   lv, NULL };

			/* a half-made clone of any mode hydrates from here */
			snprintf(lv, sizeof(lv), "%s/%s", o->vg, c->name);
			run(addtag, NULL);
		}
		/* A re-run finds the metadata of the first, and goes on. */
		snprintf(meta, sizeof(meta), "/dev/%s/%s%s", o->vg, c->name,
			 HMETA_SUFFIX);
		earlier = !access(meta, F_OK);
		if (!earlier && hydrate_metadata(o, c)) {
			c->state = CLONE_NOT_CREATED;
			snprintf(c->error, sizeof(c->error),
				 "lvcreate of its metadata %s failed (see above)", meta);
			*create_failed = true;
			continue;
		}
		/*
		 * An earlier run's progress is in the metadata (and its device
		 * may still be there, stopped by a hydration error): read it
		 * with hydration stopped, then (re)start hydration.
		 */
		c->offloaded0 = offloaded_into(c->path);
		c->hydrated0 = 0;
		if (!dm_present(ctx, c->dm, c) &&
		    hydrate_start(ctx, o, c, earlier)) {
			c->state = CLONE_FAILED;
			continue;
		}
		if (earlier) {
			if (hydrate_progress(ctx, c) ||
			    dmcopy_message(ctx, c->dm, 0, "enable_hydration")) {
				c->state = CLONE_FAILED;
				snprintf(c->error, sizeof(c->error),
					 "cannot resume the hydration of %s (see above)",
					 c->dm);
				continue;
			}
			c->hydrated0 = c->hydrated;
		}
		snprintf(mapped, sizeof(mapped), "/dev/mapper/%s", c->dm);
		/* also when an earlier run stopped before the new UUID */
		if (o->new_uuid && (c->created || same_uuid(o->golden, mapped)) &&
		    new_uuid(c, mapped)) {
			c->state = CLONE_FAILED;
			snprintf(c->error + strlen(c->error),
				 sizeof(c->error) - strlen(c->error),
				 "; /dev/mapper/%s hydrates on, usable", c->dm);
			continue;
		}
		if (!o->json)
			printf("%s: usable now as /dev/mapper/%s, hydrating\n",
			       c->name, c->dm);
		pending++;
	}
	fflush(stdout);

	while (pending && !stop_signal) {
		uint64_t done = 0, total = 0;
		struct timespec pause = { 0, 200 * 1000 * 1000 };

		kmsg_failures(ctx, kmsg, o);
		pending = 0;
		for (i = 0; i < o->count; i++) {
			struct clone *c = &o->clones[i];

			if (c->state != CLONE_PARTIAL)
				continue;
			if (hydrate_progress(ctx, c)) {
				c->state = CLONE_FAILED;
				snprintf(c->error, sizeof(c->error),
					 "cannot read the status of %s", c->dm);
				continue;
			}
			done += c->hydrated;
			total += c->regions;
			if (c->hydrated < c->regions) {
				pending++;
				continue;
			}
			c->seconds = seconds_since(&t0);
			hydrate_report(o, c);
			if (hydrate_finish(ctx, o, c)) {
				c->state = CLONE_FAILED;
				continue;
			}
			if (o->verify) {
				c->verified = same_bytes(o->golden, c->path,
							 o->size, c->error,
							 sizeof(c->error));
				if (c->verified != 1) {
					c->state = CLONE_FAILED;
					continue;
				}
			}
			c->state = CLONE_COPIED;
		}
		if (o->progress.kind != PROGRESS_NONE && total)
			on_progress(done * HYDRATE_REGION * 512,
				    total * HYDRATE_REGION * 512, &o->progress);
		if (pending)
			nanosleep(&pause, NULL);
	}
	progress_end(&o->progress);
	if (kmsg >= 0)
		close(kmsg);
	dmcopy_free(ctx);
	for (i = 0; stop_signal && i < o->count; i++) {
		struct clone *c = &o->clones[i];

		if (c->state == CLONE_PARTIAL && c->kname[0])
			snprintf(c->error, sizeof(c->error),
				 "still hydrating in the kernel (%" PRIu64 " of %" PRIu64 " regions), usable as /dev/mapper/%s; run the same command again to wait for it and make it its plain LV",
				 c->hydrated, c->regions, c->dm);
	}
}

/* The dm-clone device of a hydrating clone goes before its volumes. */
int remove_hydrate_dm(const char *vg, const char *name)
{
	struct dmcopy_ctx *ctx = new_ctx();
	char dm[300];
	int r = 0;

	snprintf(dm, sizeof(dm), "dmcopy-%s-%s", vg, name);
	if (dm_present(ctx, dm, NULL)) {
		r = dmcopy_dm_remove(ctx, dm);
		if (r)
			warnx("could not remove %s, which still uses %s/%s: %s",
			      dm, vg, name, dmcopy_last_error(ctx));
		else
			printf("removed /dev/mapper/%s\n", dm);
	}
	dmcopy_free(ctx);
	return r ? -1 : 0;
}
