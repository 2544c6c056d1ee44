// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Thin clones: lvm2 thin snapshots of the golden image, or of a thin
 * volume it is imported into once, in a thin pool of the volume group.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "provision.h"

/*
 * Whether lvm extends a filling thin pool by itself: a threshold below
 * 100, a percent above 0, and dmeventd monitoring on. Else the reason.
 */
const char *no_autoextend(char *buf, size_t len)
{
	int threshold = lvm_setting("activation/thin_pool_autoextend_threshold", 100);
	int percent = lvm_setting("activation/thin_pool_autoextend_percent", 20);
	int monitoring = lvm_setting("activation/monitoring", 1);

	if (threshold >= 100)
		snprintf(buf, len, "activation/thin_pool_autoextend_threshold = %d", threshold);
	else if (percent <= 0)
		snprintf(buf, len, "activation/thin_pool_autoextend_percent = %d", percent);
	else if (!monitoring)
		snprintf(buf, len, "activation/monitoring = 0");
	else
		return NULL;
	return buf;
}

/* The thin volume of @pool that is the block device @path, if any. */
const struct lv *thin_volume_at(const struct provision *o,
				       const struct lv *lvs, int nlvs,
				       const char *path)
{
	struct stat a, b;
	char p[400];
	int i;

	if (stat(path, &a) || !S_ISBLK(a.st_mode))
		return NULL;
	for (i = 0; i < nlvs; i++) {
		if (lvs[i].attr[0] != 'V' || strcmp(lvs[i].pool, o->thin_pool))
			continue;
		snprintf(p, sizeof(p), "/dev/%s/%s", o->vg, lvs[i].name);
		if (!stat(p, &b) && S_ISBLK(b.st_mode) && a.st_rdev == b.st_rdev)
			return &lvs[i];
	}
	return NULL;
}

/*
 * The clones' origin: the golden image itself when it is a thin volume
 * of the pool, else a thin volume "<golden>-thin" the golden image is
 * copied into (once: a re-run finds it by its tags).
 */
int thin_origin(struct provision *o, const struct lv *lvs, int nlvs)
{
	char lv[300], size[32];
	char *create[] = { "lvcreate", "-y", "-n", o->origin, "-V", size,
			   "-T", lv, "--addtag", CLONE_TAG, "--addtag",
			   PARTIAL_TAG, "--addtag", (char *)o->tag,
			   "--addtag", o->golden_tag, NULL };
	char *deltag[] = { "lvchange", "--deltag", PARTIAL_TAG, lv, NULL };
	const struct lv *have;
	struct dmcopy_ctx *ctx;
	char path[400];
	int r;

	have = thin_volume_at(o, lvs, nlvs, o->golden);
	if (have) {
		snprintf(o->origin, sizeof(o->origin), "%s", have->name);
		return 0;
	}
	snprintf(o->origin, sizeof(o->origin), "%.100s-thin",
		 basename_of(o->golden));
	have = find_lv(lvs, nlvs, o->origin);
	if (have && !has_tag(have, CLONE_TAG)) {
		warnx("%s/%s exists and was not made by dmcopy provision: cannot import the golden image into it; nothing was changed",
		      o->vg, o->origin);
		return -1;
	}
	if (have && (have->attr[0] != 'V' || strcmp(have->pool, o->thin_pool))) {
		warnx("%s/%s is not a thin volume of %s; nothing was changed",
		      o->vg, o->origin, o->thin_pool);
		return -1;
	}
	if (have && !has_tag(have, PARTIAL_TAG))
		return 0;
	if (!have) {
		snprintf(lv, sizeof(lv), "%s/%s", o->vg, o->thin_pool);
		snprintf(size, sizeof(size), "%" PRIu64 "b", o->size);
		r = run(create, NULL);
		if (r) {
			warnx("lvcreate of the thin origin %s/%s failed (exit %d, see above)",
			      o->vg, o->origin, r);
			return -1;
		}
	}
	snprintf(path, sizeof(path), "/dev/%s/%s", o->vg, o->origin);
	ctx = new_ctx();
	r = dmcopy_copy(ctx, o->golden, 0, path, 0, o->size,
			&(struct dmcopy_copy_opts){ .size = sizeof(struct dmcopy_copy_opts),
						    .force = true,
						    .stop = &stop_signal },
			&o->import);
	if (r) {
		warnx("copying the golden image into %s failed: %s", path,
		      r == -EINTR ? "interrupted" : dmcopy_last_error(ctx));
		dmcopy_free(ctx);
		return -1;
	}
	dmcopy_free(ctx);
	snprintf(lv, sizeof(lv), "%s/%s", o->vg, o->origin);
	if (run(deltag, NULL)) {
		warnx("lvchange --deltag %s %s failed (see above)", PARTIAL_TAG, lv);
		return -1;
	}
	return 0;
}

/*
 * Refuse, with the numbers, a batch the pool could not hold once every
 * clone is written all over, when lvm will not extend the pool by itself.
 */
int thin_room(const struct provision *o, const struct lv *lvs,
		     int nlvs, unsigned int new_clones, bool import)
{
	const struct lv *pool = find_lv(lvs, nlvs, o->thin_pool);
	uint64_t used, free_bytes, need;
	char b[4][32], why[96];
	const char *off;

	if (!pool || pool->attr[0] != 't') {
		warnx("%s/%s is not a thin pool%s; nothing was changed", o->vg,
		      o->thin_pool, pool ? "" : " (no such logical volume)");
		return -1;
	}
	if (pool->data_percent < 0) {
		warnx("thin pool %s/%s is not active, so its use is unknown: activate it (lvchange -ay %s/%s); nothing was changed",
		      o->vg, o->thin_pool, o->vg, o->thin_pool);
		return -1;
	}
	used = (uint64_t)(pool->size * pool->data_percent / 100.0);
	free_bytes = pool->size > used ? pool->size - used : 0;
	need = (uint64_t)new_clones * o->size + (import ? o->size : 0);
	off = need > free_bytes ? no_autoextend(why, sizeof(why)) : NULL;
	if (!off)
		return 0;
	human_size(need, b[0], sizeof(b[0]));
	human_size(free_bytes, b[1], sizeof(b[1]));
	human_size(pool->size, b[2], sizeof(b[2]));
	human_size(need - free_bytes, b[3], sizeof(b[3]));
	warnx("thin pool %s/%s cannot hold the worst case: %u new clones%s may need %s once written all over, it has %s free of %s and autoextend is off (%s); extend it (lvextend -L +%s %s/%s) or turn autoextend on; nothing was changed",
	      o->vg, o->thin_pool, new_clones,
	      import ? " and the golden image's import" : "", b[0], b[1],
	      b[2], off, b[3], o->vg, o->thin_pool);
	return -1;
}

/* Thin snapshots of the origin, one after the other (lvm takes its lock). */
void thin_clones(struct provision *o, bool *create_failed)
{
	char origin[300];
	char *create[] = { "lvcreate", "-y", "-s", "-kn", "-n", NULL,
			   "--addtag", CLONE_TAG, "--addtag", PARTIAL_TAG,
			   "--addtag", (char *)o->tag, "--addtag", o->golden_tag,
			   origin, NULL };
	unsigned int i;
	int r;

	snprintf(origin, sizeof(origin), "%s/%s", o->vg, o->origin);
	for (i = 0; i < o->count; i++) {
		struct clone *c = &o->clones[i];
		struct timespec t0;

		if (c->state != CLONE_NEW && c->state != CLONE_PARTIAL)
			continue;
		if (*create_failed || stop_signal) {
			c->state = stop_signal ? CLONE_INTERRUPTED : CLONE_NOT_CREATED;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		/* half made: a snapshot is cheap to make again */
		if (c->state == CLONE_PARTIAL && lv_remove(o->vg, c->name)) {
			c->state = CLONE_FAILED;
			snprintf(c->error, sizeof(c->error),
				 "cannot remove the half-made snapshot to make it again");
			continue;
		}
		create[5] = c->name;
		r = run(create, NULL);
		if (r) {
			c->state = CLONE_NOT_CREATED;
			snprintf(c->error, sizeof(c->error),
				 "lvcreate failed (exit %d, see above)", r);
			*create_failed = true;
			continue;
		}
		c->created = true;
		if (finish_clone(o, c, "made"))
			continue;
		c->seconds = seconds_since(&t0);
		c->state = CLONE_COPIED;
	}
}
