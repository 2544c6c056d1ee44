// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Thick clones: a logical volume of the golden image's size each, copied
 * into by the library's copy engine (offloaded where the device copies),
 * --jobs of them at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "provision.h"

/* One display for the whole batch: the bytes of every copy of this run. */
static void batch_progress(uint64_t done, uint64_t total, void *data)
{
	struct worker *w = data;
	struct provision *o = w->o;
	uint64_t sum;
	unsigned int i;

	(void)total;
	pthread_mutex_lock(&o->lock);
	w->done = done;
	sum = o->done_before;
	for (i = 0; i < o->jobs; i++)
		sum += o->workers[i].done;
	on_progress(sum, o->total, &o->progress);
	pthread_mutex_unlock(&o->lock);
}

static void copy_one(struct worker *w, struct clone *c)
{
	struct provision *o = w->o;
	struct dmcopy_copy_opts opts = {
		.size = sizeof(opts),
		/* a new LV may hold anything, signatures included */
		.force = true,
		.stop = &stop_signal,
		.progress = o->progress.kind != PROGRESS_NONE ?
			    batch_progress : NULL,
		.progress_data = w,
	};
	struct dmcopy_ctx *ctx = new_ctx();
	struct timespec t0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = dmcopy_copy(ctx, o->golden, 0, c->path, 0, o->size, &opts, &c->rep);
	c->seconds = seconds_since(&t0);
	pthread_mutex_lock(&o->lock);
	w->done = 0;
	o->done_before += c->rep.copied;
	pthread_mutex_unlock(&o->lock);
	if (r == -EINTR) {
		c->state = CLONE_INTERRUPTED;
		snprintf(c->error, sizeof(c->error), "interrupted after %" PRIu64 " of %" PRIu64 " bytes",
			 c->rep.copied, o->size);
		dmcopy_free(ctx);
		return;
	}
	if (r) {
		c->state = CLONE_FAILED;
		snprintf(c->error, sizeof(c->error), "copy failed: %s",
			 dmcopy_last_error(ctx));
		dmcopy_free(ctx);
		return;
	}
	dmcopy_free(ctx);
	if (!finish_clone(o, c, "copied"))
		c->state = CLONE_COPIED;
}

static void *copy_worker(void *data)
{
	struct worker *w = data;
	struct provision *o = w->o;

	for (;;) {
		struct clone *c = NULL;

		pthread_mutex_lock(&o->lock);
		while (!stop_signal && o->next < o->count) {
			struct clone *n = &o->clones[o->next++];

			if (n->state == CLONE_PARTIAL || n->state == CLONE_NEW) {
				c = n;
				break;
			}
		}
		pthread_mutex_unlock(&o->lock);
		if (!c)
			return NULL;
		copy_one(w, c);
	}
}


/*
 * The LVs, one lvcreate after the other (they take the VG lock anyway),
 * then --jobs workers copy into the new and the half-made ones. -1 when
 * nothing could start (out of memory).
 */
int thick_clones(struct provision *o, bool *create_failed)
{
	char lvname[300], sizearg[32];
	/* signatures are copied over anyway: no wiping */
	char *lvcreate[] = { "lvcreate", "-y", "-Wn", "-n", lvname,
			     "-L", sizearg, "--addtag", CLONE_TAG,
			     "--addtag", PARTIAL_TAG,
			     "--addtag", (char *)o->tag,
			     "--addtag", o->golden_tag, (char *)o->vg,
			     NULL };
	unsigned int i, to_copy = 0, nthreads;

	snprintf(sizearg, sizeof(sizearg), "%" PRIu64 "b", o->size);
	for (i = 0; i < o->count; i++) {
		struct clone *c = &o->clones[i];
		int r;

		if (c->state != CLONE_NEW)
			continue;
		if (*create_failed || stop_signal) {
			c->state = CLONE_NOT_CREATED;
			continue;
		}
		snprintf(lvname, sizeof(lvname), "%s", c->name);
		r = run(lvcreate, NULL);
		if (r) {
			c->state = CLONE_NOT_CREATED;
			snprintf(c->error, sizeof(c->error),
				 "lvcreate failed (exit %d, see above)", r);
			*create_failed = true;
			continue;
		}
		c->created = true;
	}
	for (i = 0; i < o->count; i++)
		if (o->clones[i].state == CLONE_NEW ||
		    o->clones[i].state == CLONE_PARTIAL)
			to_copy++;
	o->total = (uint64_t)to_copy * o->size;

	if (o->jobs > to_copy)
		o->jobs = to_copy ? to_copy : 1;
	pthread_mutex_init(&o->lock, NULL);
	o->workers = calloc(o->jobs, sizeof(*o->workers));
	if (!o->workers) {
		warnx("out of memory");
		return -1;
	}
	if (to_copy && o->progress.kind != PROGRESS_NONE)
		on_progress(0, o->total, &o->progress);
	for (i = 0; i < o->jobs; i++)
		o->workers[i].o = o;
	for (i = 0; i < o->jobs; i++)
		if (pthread_create(&o->workers[i].thread, NULL,
				   copy_worker, &o->workers[i]))
			break;
	/* fewer threads than asked: the ones there take all clones */
	nthreads = i;
	if (!nthreads)
		copy_worker(&o->workers[0]);
	for (i = 0; i < nthreads; i++)
		pthread_join(o->workers[i].thread, NULL);
	progress_end(&o->progress);
	free(o->workers);
	o->workers = NULL;
	pthread_mutex_destroy(&o->lock);
	return 0;
}
