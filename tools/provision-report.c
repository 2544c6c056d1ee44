// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The summary of a provision run: a table for people, or JSON.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libsmartcols.h>

#include "provision.h"

static const char *state_name(const struct clone *c)
{
	switch (c->state) {
	case CLONE_DONE: return "kept";
	case CLONE_COPIED:
		return !strcmp(c->mode, "thin") ? "made" :
		       !strcmp(c->mode, "hydrate") ? "hydrated" : "copied";
	case CLONE_FAILED: return "failed";
	case CLONE_INTERRUPTED: return "interrupted";
	case CLONE_NOT_CREATED: return "not created";
	case CLONE_CHANGED: return "changed";
	case CLONE_IN_USE: return "in use";
	default: return "not copied";
	}
}

static const char *verified_name(const struct clone *c)
{
	return c->verified == 1 ? "yes" : c->verified == 0 ? "DIFFERS" : "-";
}

void sum_up(const struct provision *o, struct totals *t)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < o->count; i++) {
		const struct clone *c = &o->clones[i];

		/* a clone in use since it was made is a clone, not a failure */
		if (c->state == CLONE_COPIED || c->state == CLONE_DONE ||
		    c->state == CLONE_CHANGED)
			t->clones++;
		if (c->state == CLONE_COPIED)
			t->copied++;
		if (c->state == CLONE_FAILED || c->state == CLONE_INTERRUPTED ||
		    c->state == CLONE_NOT_CREATED || c->state == CLONE_IN_USE)
			t->failed++;
		t->bytes += c->rep.copied;
		t->offloaded += c->rep.offloaded;
		t->emulated += c->rep.emulated;
		t->userspace += c->rep.userspace;
	}
}

static struct json_object *json_str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

/* Seconds to the millisecond, as the table shows them to the tenth. */
static struct json_object *json_seconds(double seconds)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3f", seconds);
	return json_object_new_double_s(seconds, text);
}

/* The report of a clone; NULL when out of memory. */
static struct json_object *clone_json(const struct clone *c)
{
	struct json_object *j = json_object_new_object();

	if (!j)
		return NULL;
	if (json_object_object_add(j, "name", json_object_new_string(c->name)) ||
	    json_object_object_add(j, "path", json_object_new_string(c->path)) ||
	    json_object_object_add(j, "state", json_object_new_string(state_name(c))) ||
	    json_object_object_add(j, "mode", json_object_new_string(c->mode)) ||
	    json_object_object_add(j, "seconds", json_seconds(c->seconds)) ||
	    json_object_object_add(j, "copied", json_object_new_uint64(c->rep.copied)) ||
	    json_object_object_add(j, "offloaded", json_object_new_uint64(c->rep.offloaded)) ||
	    json_object_object_add(j, "emulated", json_object_new_uint64(c->rep.emulated)) ||
	    json_object_object_add(j, "userspace", json_object_new_uint64(c->rep.userspace)) ||
	    json_object_object_add(j, "verified", c->verified < 0 ? NULL :
				   json_object_new_boolean(c->verified == 1)) ||
	    json_object_object_add(j, "error", json_str_or_null(c->error))) {
		json_object_put(j);
		return NULL;
	}
	return j;
}

/*
 * The summary as one JSON object on stdout, through json-c (which does the
 * escaping): the batch, "clones" (one object each) and "total". -1 when
 * out of memory.
 */
int print_json(const struct provision *o, const struct totals *t,
	       double seconds)
{
	struct json_object *doc = json_object_new_object();
	struct json_object *clones = json_object_new_array();
	struct json_object *total = json_object_new_object();
	unsigned int i;
	int r = -1;

	if (!doc || !clones || !total)
		goto out;
	for (i = 0; i < o->count; i++) {
		struct json_object *c = clone_json(&o->clones[i]);

		if (!c || json_object_array_add(clones, c)) {
			json_object_put(c);
			goto out;
		}
	}
	if (json_object_object_add(total, "clones", json_object_new_int64(t->clones)) ||
	    json_object_object_add(total, "copied", json_object_new_int64(t->copied)) ||
	    json_object_object_add(total, "failed", json_object_new_int64(t->failed)) ||
	    json_object_object_add(total, "seconds", json_seconds(seconds)) ||
	    json_object_object_add(total, "bytes", json_object_new_uint64(t->bytes)) ||
	    json_object_object_add(total, "offloaded", json_object_new_uint64(t->offloaded)) ||
	    json_object_object_add(total, "emulated", json_object_new_uint64(t->emulated)) ||
	    json_object_object_add(total, "userspace", json_object_new_uint64(t->userspace)))
		goto out;
	if (json_object_object_add(doc, "golden", json_object_new_string(o->golden)) ||
	    json_object_object_add(doc, "vg", json_object_new_string(o->vg)) ||
	    json_object_object_add(doc, "size", json_object_new_uint64(o->size)) ||
	    json_object_object_add(doc, "origin",
				   o->thin_pool ? json_object_new_string(o->origin) : NULL))
		goto out;
	/* doc owns them from here */
	if (json_object_object_add(doc, "clones", clones)) {
		clones = NULL;
		goto out;
	}
	clones = NULL;
	if (json_object_object_add(doc, "total", total)) {
		total = NULL;
		goto out;
	}
	total = NULL;
	printf("%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
	r = 0;
out:
	json_object_put(clones);
	json_object_put(total);
	json_object_put(doc);
	if (r)
		warnx("out of memory for the JSON report");
	return r;
}

void print_table(const struct provision *o, const struct totals *t,
			double seconds)
{
	static const char *const heads[] = {
		"NAME", "SIZE", "MODE", "STATE", "TIME", "OFFLOADED",
		"EMULATED", "USERSPACE", "VERIFIED",
	};
	struct libscols_table *tb = scols_new_table();
	char b[4][32];
	unsigned int i, k;

	if (!tb) {
		warnx("out of memory");
		return;
	}
	for (k = 0; k < sizeof(heads) / sizeof(heads[0]); k++)
		scols_table_new_column(tb, heads[k], 0,
				       k ? SCOLS_FL_RIGHT : 0);
	for (i = 0; i < o->count; i++) {
		const struct clone *c = &o->clones[i];
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		if (!ln)
			break;
		human_size(o->size, b[0], sizeof(b[0]));
		scols_line_set_data(ln, 0, c->name);
		scols_line_set_data(ln, 1, b[0]);
		scols_line_set_data(ln, 2, c->mode);
		scols_line_set_data(ln, 3, state_name(c));
		snprintf(b[1], sizeof(b[1]), "%.1fs", c->seconds);
		scols_line_set_data(ln, 4, c->state == CLONE_DONE ||
				    c->state == CLONE_CHANGED ||
				    c->state == CLONE_IN_USE ? "-" : b[1]);
		human_size(c->rep.offloaded, b[1], sizeof(b[1]));
		human_size(c->rep.emulated, b[2], sizeof(b[2]));
		human_size(c->rep.userspace, b[3], sizeof(b[3]));
		scols_line_set_data(ln, 5, b[1]);
		scols_line_set_data(ln, 6, b[2]);
		scols_line_set_data(ln, 7, b[3]);
		scols_line_set_data(ln, 8, verified_name(c));
	}
	scols_print_table(tb);
	scols_unref_table(tb);
	human_size(t->bytes, b[0], sizeof(b[0]));
	human_size(t->offloaded, b[1], sizeof(b[1]));
	human_size(t->emulated, b[2], sizeof(b[2]));
	human_size(t->userspace, b[3], sizeof(b[3]));
	printf("%u of %u clones ready (%u made now) in %.1fs; %s copied: %s offloaded, %s emulated in the kernel, %s in user space\n",
	       t->clones, o->count, t->copied, seconds, b[0], b[1], b[2], b[3]);
	if (o->import.copied) {
		human_size(o->import.copied, b[0], sizeof(b[0]));
		human_size(o->import.offloaded, b[1], sizeof(b[1]));
		human_size(o->import.emulated, b[2], sizeof(b[2]));
		human_size(o->import.userspace, b[3], sizeof(b[3]));
		printf("the golden image was imported into %s/%s, the clones' origin: %s copied, %s offloaded, %s emulated in the kernel, %s in user space\n",
		       o->vg, o->origin, b[0], b[1], b[2], b[3]);
	}
	for (i = 0; i < o->count; i++)
		if (o->clones[i].error[0])
			printf("%s: %s\n", o->clones[i].name, o->clones[i].error);
}
