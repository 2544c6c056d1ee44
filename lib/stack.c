// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The stack of block devices under a device (dm tables over dm tables
 * over disks, read from slaves/ in sysfs) and which layer of it decides
 * how a copy into the top device goes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmcopy-private.h"

/* Deeper than any real stack; stops a loop in a broken sysfs tree. */
#define STACK_MAX_DEPTH		16
#define STACK_MAX_LAYERS	256

struct stack_walk {
	struct dmcopy_ctx *ctx;
	struct dmcopy_layer **layers;
	size_t count, alloc;
};

static void layer_types(struct dmcopy_ctx *ctx, struct dmcopy_layer *l)
{
	struct dmcopy_dm_target *targets;
	size_t n;

	l->types[0] = '\0';
	/* only the running kernel has tables; not root: types unknown */
	if (!ctx->real_sysfs || !l->caps.is_dm || !l->caps.dm_name[0])
		return;
	if (dmcopy_dm_targets(ctx, l->caps.dm_name, &targets, &n) < 0)
		return;
	if (dmcopy_dm_types(targets, n, l->types, sizeof(l->types)) < 0)
		l->types[0] = '\0';
	free(targets);
}

static int walk(struct stack_walk *w, const char *name, unsigned int depth)
{
	struct dmcopy_layer *l, **grown;
	size_t i;
	int r;

	if (depth >= STACK_MAX_DEPTH || w->count >= STACK_MAX_LAYERS)
		return dmcopy_err(w->ctx, -ELOOP,
				  "%s: the device stack is deeper than %d layers",
				  name, STACK_MAX_DEPTH);
	if (w->count == w->alloc) {
		size_t n = w->alloc ? 2 * w->alloc : 4;

		grown = realloc(w->layers, n * sizeof(*grown));
		if (!grown)
			return dmcopy_err(w->ctx, -ENOMEM, "out of memory");
		w->layers = grown;
		w->alloc = n;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return dmcopy_err(w->ctx, -ENOMEM, "out of memory");
	l->size = sizeof(*l);
	l->caps.size = sizeof(l->caps);
	r = dmcopy_device_caps(w->ctx, name, &l->caps);
	if (r) {
		free(l);
		return r;
	}
	l->depth = depth;
	w->layers[w->count++] = l;
	layer_types(w->ctx, l);
	for (i = 0; i < l->caps.nr_slaves; i++) {
		r = walk(w, l->caps.slaves[i], depth + 1);
		if (r)
			return r;
	}
	return 0;
}

int dmcopy_device_stack(struct dmcopy_ctx *ctx, const char *name,
			struct dmcopy_layer ***layers, size_t *count)
{
	struct stack_walk w = { .ctx = ctx };
	int r;

	r = walk(&w, name, 0);
	if (r) {
		dmcopy_stack_free(w.layers, w.count);
		return r;
	}
	*layers = w.layers;
	*count = w.count;
	return 0;
}

void dmcopy_stack_free(struct dmcopy_layer **layers, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		dmcopy_caps_release(&layers[i]->caps);
		free(layers[i]);
	}
	free(layers);
}

/* Is @type one of the comma separated @types? */
static bool has_type(const char *types, const char *type)
{
	size_t n = strlen(type);
	const char *p;

	for (p = types; *p; p += strcspn(p, ",") + !!p[strcspn(p, ",")])
		if (!strncmp(p, type, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* The first target type other than linear and copy, or NULL. */
static const char *foreign_type(const char *types, char *buf, size_t len)
{
	const char *p;
	size_t n;

	for (p = types; *p; p += n + !!p[n]) {
		n = strcspn(p, ",");
		if ((n == 6 && !strncmp(p, "linear", 6)) ||
		    (n == 4 && !strncmp(p, "copy", 4)))
			continue;
		snprintf(buf, len, "%.*s", (int)n, p);
		return buf;
	}
	return NULL;
}

/* Index of the layer after @i's subtree. */
static size_t subtree_end(struct dmcopy_layer *const *layers,
			  size_t count, size_t i)
{
	size_t j = i + 1;

	while (j < count && layers[j]->depth > layers[i]->depth)
		j++;
	return j;
}

static size_t decide(struct dmcopy_layer *const *layers, size_t count,
		     size_t i, char *why, size_t len)
{
	const struct dmcopy_caps *c = &layers[i]->caps;
	struct dmcopy_verdict v;
	size_t j, end, d, first = count;
	char type[64];

	if (!c->has_copy_sysfs) {
		snprintf(why, len, "kernel without copy offload: copies go through user space");
		return i;
	}
	if (has_type(layers[i]->types, "copy")) {
		snprintf(why, len, "the copy target of %s serves copies", c->name);
		return i;
	}
	if (c->copy_max_hw_bytes && !c->copy_max_bytes) {
		snprintf(why, len, "offload off on %s (copy_max_bytes 0)", c->name);
		return i;
	}
	if (foreign_type(layers[i]->types, type, sizeof(type))) {
		snprintf(why, len, "%s: its %s target passes no copies down",
			 c->name, type);
		return i;
	}
	end = subtree_end(layers, count, i);
	for (j = i + 1; j < end; j = subtree_end(layers, count, j)) {
		d = decide(layers, count, j, why, len);
		/* a layer below that stops offload decides for all */
		if (!layers[d]->caps.copy_max_bytes)
			return d;
		if (first == count)
			first = d;
	}
	/* its own limit is 0 although the devices below copy */
	if (first < count && c->copy_max_hw_bytes)
		return decide(layers, count, first, why, len);
	dmcopy_caps_verdict(c, &v);
	snprintf(why, len, "%s", v.reason);
	return i;
}

size_t dmcopy_stack_decider(struct dmcopy_layer *const *layers,
			    size_t count, char *why, size_t len)
{
	if (why && len)
		why[0] = '\0';
	if (!count)
		return 0;
	if (!why || !len) {
		char buf[DMCOPY_STACK_WHY_LEN];

		return decide(layers, count, 0, buf, sizeof(buf));
	}
	return decide(layers, count, 0, why, len);
}
