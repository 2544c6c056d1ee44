/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of dmcopy provision share: the batch of clones and its
 * state (provision.c), the lvm2 commands (lvm.c), the three ways to make a
 * clone (provision-thick.c, provision-thin.c, provision-hydrate.c) and the
 * summary (provision-report.c).
 */
#ifndef DMCOPY_PROVISION_H
#define DMCOPY_PROVISION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libdmcopy.h"
#include "dmcopy.h"

#define PARTIAL_TAG	"dmcopy_partial"
#define CLONE_TAG	"dmcopy_clone"
#define HYDRATING_TAG	"dmcopy_hydrating"
#define GOLDEN_TAG_PREFIX "dmcopy_golden:"
#define HMETA_SUFFIX	"-hmeta"
/* dm-clone's unit of hydration, sectors: 512 KiB */
#define HYDRATE_REGION	1024U
#define DEFAULT_TAG	"dmcopy"
#define MAX_CLONES	10000
#define VERIFY_CHUNK	(4U << 20)

enum clone_state {
	CLONE_NEW,		/* to be created */
	CLONE_PARTIAL,		/* made by an earlier run, copy unfinished */
	CLONE_DONE,		/* made and copied by an earlier run */
	CLONE_NOT_CREATED,	/* lvcreate failed, or was not tried */
	CLONE_COPIED,		/* copied by this run */
	CLONE_FAILED,		/* copy, new UUID or verification failed */
	CLONE_INTERRUPTED,	/* a signal stopped its copy */
	CLONE_CHANGED,		/* finished earlier, written since: left alone */
	CLONE_IN_USE,		/* half made, but open: not written */
};

struct clone {
	char name[128];
	char path[320];
	enum clone_state state;
	bool created;			/* by this run */
	const char *mode;		/* "thick", "thin" or "hydrate" */
	char dm[300];			/* hydrate: the dm-clone device */
	char kname[32];			/* its kernel name, dm-N */
	char devno[32];			/* MAJ:MIN, as dm-clone logs it */
	uint64_t hydrated, regions;	/* hydrate: progress */
	uint64_t hydrated0, offloaded0;	/* hydrate: when this run began */
	struct dmcopy_copy_report rep;
	double seconds;
	int verified;			/* -1 not checked, 0 differs, 1 same */
	char error[1024];
};

struct provision {
	const char *golden, *vg, *pattern, *tag;
	const char *thin_pool;		/* --thin: clones are its snapshots */
	char golden_tag[160];		/* GOLDEN_TAG_PREFIX + its identity */
	bool golden_known;		/* the golden image is there to name */
	char origin[128];		/* their origin, a thin volume */
	struct dmcopy_copy_report import; /* the golden image into it */
	unsigned int count, jobs;
	bool verify, new_uuid, json, rollback, quiet, show_progress, hydrate;
	uint64_t size;			/* of the golden image, bytes */
	struct clone *clones;

	/* shared by the copy workers */
	pthread_mutex_t lock;
	unsigned int next;		/* the next clone to copy */
	uint64_t done_before;		/* bytes of the clones already over */
	uint64_t total;			/* bytes all copies of this run move */
	struct worker *workers;
	struct progress progress;
};

struct worker {
	struct provision *o;
	pthread_t thread;
	uint64_t done;			/* bytes of its current clone */
};

struct lv {
	char name[128];
	uint64_t size;
	char attr[16];		/* lv_attr: 't' first for a thin pool */
	char pool[128];		/* pool_lv: a thin volume's pool */
	double data_percent;	/* a thin pool's data in use */
	char tags[1024];	/* comma-separated, as lvs prints them */
};

struct totals {
	unsigned int clones, copied, failed;
	uint64_t bytes, offloaded, emulated, userspace;
};

/* lvm.c: lvm2's commands */
int run(char *const argv[], char **out);
bool lvm_word(const char *s);
bool has_tag(const struct lv *lv, const char *tag);
int list_lvs(const char *vg, const char *select, struct lv **lvs);
const struct lv *find_lv(const struct lv *lvs, int n, const char *name);
int lv_remove(const char *vg, const char *name);
int lvm_setting(const char *key, int dflt);

/* provision.c: what every way of making a clone ends with */
const char *basename_of(const char *path);
int same_bytes(const char *a, const char *b, uint64_t size, char *err,
	       size_t errlen);
bool same_uuid(const char *a, const char *b);
int new_uuid(struct clone *c, const char *dev);
int finish_clone(const struct provision *o, struct clone *c, const char *what);

/* provision-thick.c: LVs of the golden image's size, copied into */
int thick_clones(struct provision *o, bool *create_failed);

/* provision-thin.c: thin snapshots of the golden image in a pool */
const struct lv *thin_volume_at(const struct provision *o,
				const struct lv *lvs, int nlvs,
				const char *path);
int thin_room(const struct provision *o, const struct lv *lvs, int nlvs,
	      unsigned int new_clones, bool import);
int thin_origin(struct provision *o, const struct lv *lvs, int nlvs);
void thin_clones(struct provision *o, bool *create_failed);

/* provision-hydrate.c: usable at once through dm-clone */
void hydrate_clones(struct provision *o, bool *create_failed);
int remove_hydrate_dm(const char *vg, const char *name);

/* provision-report.c: the summary, as a table or JSON */
void sum_up(const struct provision *o, struct totals *t);
int print_json(const struct provision *o, const struct totals *t,
	       double seconds);
void print_table(const struct provision *o, const struct totals *t,
		 double seconds);

#endif /* DMCOPY_PROVISION_H */
