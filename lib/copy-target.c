// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The "copy" target's lines: INFO status and table parameters, parsed the
 * way dm-copy.ko reads them and printed the way it prints them, so that
 * format(parse(line)) gives back every line the kernel prints.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "dmcopy-private.h"

/* Status and table lines are short; longer input is not one of them. */
#define MAX_LINE	1024
#define MAX_WORDS	16

static const char * const mode_names[] = {
	[DMCOPY_MODE_AUTO] = "auto",
	[DMCOPY_MODE_OFFLOAD] = "offload",
	[DMCOPY_MODE_EMULATE] = "emulate",
};

const char *dmcopy_mode_name(enum dmcopy_mode mode)
{
	if ((unsigned int)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return NULL;
	return mode_names[mode];
}

int dmcopy_parse_mode(const char *s, enum dmcopy_mode *mode)
{
	unsigned int i;

	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (!strcasecmp(s, mode_names[i])) {
			*mode = (enum dmcopy_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * Split @params into words at spaces and tabs, as dm_split_args() does
 * (without its backslash escapes, which no copy line uses).
 */
struct words {
	char buf[MAX_LINE];
	char *w[MAX_WORDS];
	unsigned int n;
};

static int split_words(struct dmcopy_ctx *ctx, const char *what,
		       const char *params, struct words *words)
{
	char *p, *save = NULL;

	if (!params)
		return dmcopy_err(ctx, -EINVAL, "no %s", what);
	if (strlen(params) >= sizeof(words->buf))
		return dmcopy_err(ctx, -EINVAL, "%s too long", what);
	strcpy(words->buf, params);
	words->n = 0;
	for (p = strtok_r(words->buf, " \t\n", &save); p;
	     p = strtok_r(NULL, " \t\n", &save)) {
		if (words->n == MAX_WORDS)
			return dmcopy_err(ctx, -EINVAL, "too many words in %s",
					  what);
		words->w[words->n++] = p;
	}
	return 0;
}

static int parse_counter(struct dmcopy_ctx *ctx, const char *word,
			 const char *name, uint64_t *value)
{
	if (dmcopy_parse_u64(word, value) < 0)
		return dmcopy_err(ctx, -EINVAL,
				  "copy status: invalid %s '%s'", name, word);
	return 0;
}

int dmcopy_parse_copy_status(struct dmcopy_ctx *ctx, const char *params,
			     struct dmcopy_copy_status *status)
{
	static const char * const names[] = {
		"offloaded copies", "offloaded bytes", "emulated copies",
		"emulated bytes", "errors", "copies in flight",
	};
	struct dmcopy_copy_status st = { .size = sizeof(st) };
	uint64_t *counters[] = {
		&st.offloaded_copies, &st.offloaded_bytes,
		&st.emulated_copies, &st.emulated_bytes,
		&st.errors, &st.in_flight,
	};
	struct words words;
	unsigned int i;
	int r;

	r = dmcopy_check_size(ctx, status->size, DMCOPY_COPY_STATUS_SIZE_V1,
			      "dmcopy_copy_status");
	if (r)
		return r;
	r = split_words(ctx, "copy status", params, &words);
	if (r)
		return r;
	if (words.n != 7)
		return dmcopy_err(ctx, -EINVAL,
				  "copy status: %u words, expected 7", words.n);
	if (dmcopy_parse_mode(words.w[0], &st.mode))
		return dmcopy_err(ctx, -EINVAL, "copy status: invalid mode '%s'",
				  words.w[0]);
	for (i = 0; i < 6; i++) {
		r = parse_counter(ctx, words.w[i + 1], names[i], counters[i]);
		if (r)
			return r;
	}
	dmcopy_struct_out(status, &st, sizeof(st));
	return 0;
}

int dmcopy_format_copy_status(const struct dmcopy_copy_status *status,
			      char *buf, size_t len)
{
	struct dmcopy_copy_status st;
	const char *mode;

	if (dmcopy_check_size(NULL, status->size, DMCOPY_COPY_STATUS_SIZE_V1,
			      "dmcopy_copy_status"))
		return -EINVAL;
	dmcopy_struct_in(&st, sizeof(st), status);
	status = &st;
	mode = dmcopy_mode_name(status->mode);
	if (!mode)
		return -EINVAL;
	return dmcopy_snprintf(buf, len,
			       "%s %llu %llu %llu %llu %llu %llu", mode,
			       (unsigned long long)status->offloaded_copies,
			       (unsigned long long)status->offloaded_bytes,
			       (unsigned long long)status->emulated_copies,
			       (unsigned long long)status->emulated_bytes,
			       (unsigned long long)status->errors,
			       (unsigned long long)status->in_flight);
}

static int parse_max_copy_bytes(struct dmcopy_ctx *ctx, const char *word,
				uint64_t *bytes)
{
	if (dmcopy_parse_u64(word, bytes) < 0)
		return dmcopy_err(ctx, -EINVAL, "copy table: invalid max_copy_bytes '%s'",
				  word);
	if (!*bytes)
		return dmcopy_err(ctx, -EINVAL,
				  "copy table: max_copy_bytes must not be 0");
	if (*bytes % 512)
		return dmcopy_err(ctx, -EINVAL,
				  "copy table: max_copy_bytes %s is not whole sectors",
				  word);
	if (*bytes > DMCOPY_MAX_COPY_BYTES)
		return dmcopy_err(ctx, -EINVAL,
				  "copy table: max_copy_bytes %s is larger than one copy can be",
				  word);
	return 0;
}

/* The feature group: words[first] is the count, then that many words. */
static int parse_features(struct dmcopy_ctx *ctx, struct words *words,
			  unsigned int first, struct dmcopy_copy_table *t)
{
	bool have_mode = false, have_max = false;
	unsigned int i, end;
	enum dmcopy_mode mode;
	uint64_t count;

	if (dmcopy_parse_u64(words->w[first], &count) < 0 || count > 4)
		return dmcopy_err(ctx, -EINVAL,
				  "copy table: invalid number of feature args '%s'",
				  words->w[first]);
	end = first + 1 + (unsigned int)count;
	if (end != words->n)
		return dmcopy_err(ctx, -EINVAL,
				  "copy table: %llu feature args announced, %u given",
				  (unsigned long long)count, words->n - first - 1);

	for (i = first + 1; i < end; i += 2) {
		const char *name = words->w[i];

		if (i + 1 == end)
			return dmcopy_err(ctx, -EINVAL,
					  "copy table: feature %s needs an argument",
					  name);
		if (!strcasecmp(name, "mode")) {
			if (dmcopy_parse_mode(words->w[i + 1], &mode))
				return dmcopy_err(ctx, -EINVAL,
						  "copy table: invalid mode '%s': need auto, offload or emulate",
						  words->w[i + 1]);
			if (have_mode)
				return dmcopy_err(ctx, -EINVAL, "copy table: %s",
						  mode == t->mode ?
						  "duplicate feature mode" :
						  "conflicting mode features");
			have_mode = true;
			t->mode = mode;
		} else if (!strcasecmp(name, "max_copy_bytes")) {
			if (have_max)
				return dmcopy_err(ctx, -EINVAL,
						  "copy table: duplicate feature max_copy_bytes");
			if (parse_max_copy_bytes(ctx, words->w[i + 1],
						 &t->max_copy_bytes))
				return -EINVAL;
			have_max = true;
		} else {
			return dmcopy_err(ctx, -EINVAL,
					  "copy table: unrecognised feature '%s'",
					  name);
		}
	}
	return 0;
}

int dmcopy_parse_copy_table(struct dmcopy_ctx *ctx, const char *params,
			    struct dmcopy_copy_table *table)
{
	struct dmcopy_copy_table t;
	struct words words;
	int r;

	r = split_words(ctx, "copy table", params, &words);
	if (r)
		return r;
	if (words.n < 2)
		return dmcopy_err(ctx, -EINVAL,
				  "copy table: need <dev> <offset> [<#features> <feature>...]");
	memset(&t, 0, sizeof(t));
	if (strlen(words.w[0]) >= sizeof(t.device))
		return dmcopy_err(ctx, -EINVAL, "copy table: device name too long");
	strcpy(t.device, words.w[0]);
	if (dmcopy_parse_u64(words.w[1], &t.offset) < 0)
		return dmcopy_err(ctx, -EINVAL,
				  "copy table: invalid device sector '%s'",
				  words.w[1]);
	if (words.n > 2) {
		r = parse_features(ctx, &words, 2, &t);
		if (r)
			return r;
	}
	*table = t;
	return 0;
}

int dmcopy_format_copy_table(const struct dmcopy_copy_table *table,
			     char *buf, size_t len)
{
	const char *mode = dmcopy_mode_name(table->mode);
	unsigned int features;
	int n, m;

	if (!mode || !table->device[0])
		return -EINVAL;
	features = (table->mode != DMCOPY_MODE_AUTO ? 2 : 0) +
		(table->max_copy_bytes ? 2 : 0);
	n = dmcopy_snprintf(buf, len, "%s %llu", table->device,
			    (unsigned long long)table->offset);
	if (n < 0 || !features)
		return n;
	m = dmcopy_snprintf(buf + n, len - (size_t)n, " %u", features);
	if (m < 0)
		return m;
	n += m;
	if (table->mode != DMCOPY_MODE_AUTO) {
		m = dmcopy_snprintf(buf + n, len - (size_t)n, " mode %s", mode);
		if (m < 0)
			return m;
		n += m;
	}
	if (table->max_copy_bytes) {
		m = dmcopy_snprintf(buf + n, len - (size_t)n,
				    " max_copy_bytes %llu",
				    (unsigned long long)table->max_copy_bytes);
		if (m < 0)
			return m;
		n += m;
	}
	return n;
}
