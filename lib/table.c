// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tables built from segments, checked against sysfs before anything
 * reaches the kernel: the kernel's own refusal ("device-mapper: reload
 * ioctl failed: Invalid argument") says little about which segment was
 * wrong.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmcopy-private.h"

struct table_target {
	uint64_t start;		/* sectors */
	uint64_t length;	/* sectors */
	const char *type;	/* static, or in @owned */
	char *params;		/* allocated, or in @owned */
	char *owned;		/* a raw target's type and parameters */
};

struct dmcopy_table {
	struct dmcopy_ctx *ctx;
	struct table_target *targets;
	size_t count;
	uint64_t sectors;
	char *text;
};

struct dmcopy_table *dmcopy_table_new(struct dmcopy_ctx *ctx)
{
	struct dmcopy_table *t = calloc(1, sizeof(*t));

	if (t)
		t->ctx = ctx;
	return t;
}

void dmcopy_table_free(struct dmcopy_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->count; i++) {
		if (t->targets[i].owned)
			free(t->targets[i].owned);
		else
			free(t->targets[i].params);
	}
	free(t->targets);
	free(t->text);
	free(t);
}

size_t dmcopy_table_count(const struct dmcopy_table *t)
{
	return t->count;
}

uint64_t dmcopy_table_sectors(const struct dmcopy_table *t)
{
	return t->sectors;
}

int dmcopy_table_target(const struct dmcopy_table *t, size_t i,
			uint64_t *start, uint64_t *length,
			const char **type, const char **params)
{
	if (i >= t->count)
		return -ERANGE;
	*start = t->targets[i].start;
	*length = t->targets[i].length;
	*type = t->targets[i].type;
	*params = t->targets[i].params;
	return 0;
}

static int check_extent(struct dmcopy_ctx *ctx, const struct dmcopy_segment *seg,
			const struct dmcopy_caps *caps)
{
	uint64_t unit = caps->logical_block_size > 512 ?
		caps->logical_block_size : 512;

	if (!seg->length)
		return dmcopy_err(ctx, -EINVAL, "%s: segment length 0", seg->device);
	if (seg->offset % unit || seg->length % unit)
		return dmcopy_err(ctx, -EINVAL,
				  "%s: offset %llu and length %llu must be multiples of %llu bytes",
				  seg->device, (unsigned long long)seg->offset,
				  (unsigned long long)seg->length,
				  (unsigned long long)unit);
	if (seg->offset > caps->size_bytes ||
	    seg->length > caps->size_bytes - seg->offset)
		return dmcopy_err(ctx, -ERANGE,
				  "%s: segment at %llu of %llu bytes runs past its end (%llu bytes)",
				  seg->device, (unsigned long long)seg->offset,
				  (unsigned long long)seg->length,
				  (unsigned long long)caps->size_bytes);
	return 0;
}

static int check_copy_features(struct dmcopy_ctx *ctx,
			       const struct dmcopy_segment *seg,
			       const struct dmcopy_caps *caps)
{
	uint64_t max = seg->max_copy_bytes;

	if (!dmcopy_mode_name(seg->mode))
		return dmcopy_err(ctx, -EINVAL, "%s: invalid copy mode",
				  seg->device);
	if (max && (max % 512 || max % caps->logical_block_size ||
		    max > DMCOPY_MAX_COPY_BYTES))
		return dmcopy_err(ctx, -EINVAL,
				  "%s: max_copy_bytes %llu must be whole %llu-byte blocks, at most %llu",
				  seg->device, (unsigned long long)max,
				  (unsigned long long)caps->logical_block_size,
				  DMCOPY_MAX_COPY_BYTES);
	return 0;
}

/* The parameters of the target line: "<MAJ:MIN> <sector>[ features]". */
static char *target_params(const struct dmcopy_segment *seg,
			   const struct dmcopy_caps *caps)
{
	struct dmcopy_copy_table ct = {
		.offset = seg->offset / 512,
		.mode = seg->mode,
		.max_copy_bytes = seg->max_copy_bytes,
	};
	char buf[DMCOPY_DEV_LEN + 128];

	snprintf(ct.device, sizeof(ct.device), "%u:%u", caps->major,
		 caps->minor);
	if (seg->type == DMCOPY_TARGET_LINEAR)
		snprintf(buf, sizeof(buf), "%s %llu", ct.device,
			 (unsigned long long)ct.offset);
	else if (dmcopy_format_copy_table(&ct, buf, sizeof(buf)) < 0)
		return NULL;
	return strdup(buf);
}

static int check_segment(struct dmcopy_ctx *ctx, const struct dmcopy_segment *seg,
			 struct dmcopy_caps *caps)
{
	int r;

	if (seg->type != DMCOPY_TARGET_LINEAR && seg->type != DMCOPY_TARGET_COPY)
		return dmcopy_err(ctx, -EINVAL, "invalid target type");
	if (!seg->device)
		return dmcopy_err(ctx, -EINVAL, "segment without a device");
	r = dmcopy_device_caps(ctx, seg->device, caps);
	if (r)
		return r;
	r = check_extent(ctx, seg, caps);
	if (!r && seg->type == DMCOPY_TARGET_COPY)
		r = check_copy_features(ctx, seg, caps);
	if (r)
		dmcopy_caps_release(caps);
	return r;
}

int dmcopy_table_add_segment(struct dmcopy_table *t,
			     const struct dmcopy_segment *callers)
{
	struct table_target *grown, *target;
	struct dmcopy_caps caps = { .size = sizeof(caps) };
	struct dmcopy_segment full;
	const struct dmcopy_segment *seg = &full;
	char *params;
	int r;

	r = dmcopy_check_size(t->ctx, callers->size, DMCOPY_SEGMENT_SIZE_V1,
			      "dmcopy_segment");
	if (r)
		return r;
	dmcopy_struct_in(&full, sizeof(full), callers);
	r = check_segment(t->ctx, seg, &caps);
	if (r)
		return r;
	params = target_params(seg, &caps);
	dmcopy_caps_release(&caps);
	if (!params)
		return dmcopy_err(t->ctx, -ENOMEM, "out of memory");
	grown = realloc(t->targets, (t->count + 1) * sizeof(*grown));
	if (!grown) {
		free(params);
		return dmcopy_err(t->ctx, -ENOMEM, "out of memory");
	}
	t->targets = grown;
	target = &t->targets[t->count++];
	target->start = t->sectors;
	target->length = seg->length / 512;
	target->type = seg->type == DMCOPY_TARGET_COPY ? "copy" : "linear";
	target->params = params;
	target->owned = NULL;
	t->sectors += target->length;
	t->ctx->err[0] = '\0';
	return 0;
}

static bool target_name(const char *s)
{
	size_t n = 0;

	for (; *s; s++, n++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && *s != '-' && *s != '_')
			return false;
	return n && n < DMCOPY_TYPE_LEN;
}

int dmcopy_table_add_target(struct dmcopy_table *t, uint64_t sectors,
			    const char *type, const char *params)
{
	struct table_target *grown, *target;
	char *copy;

	if (!type || !target_name(type))
		return dmcopy_err(t->ctx, -EINVAL, "invalid target type \"%s\"",
				  type ? type : "");
	if (!params || !*params || strpbrk(params, "\n\r"))
		return dmcopy_err(t->ctx, -EINVAL,
				  "%s: the parameters must be one line, not empty",
				  type);
	if (!sectors || sectors > UINT64_MAX - t->sectors)
		return dmcopy_err(t->ctx, -EINVAL, "%s: invalid length %llu sectors",
				  type, (unsigned long long)sectors);
	copy = malloc(strlen(type) + 1 + strlen(params) + 1);
	if (!copy)
		return dmcopy_err(t->ctx, -ENOMEM, "out of memory");
	grown = realloc(t->targets, (t->count + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return dmcopy_err(t->ctx, -ENOMEM, "out of memory");
	}
	t->targets = grown;
	/* the type's name, then its parameters, in one allocation */
	strcpy(copy, type);
	strcpy(copy + strlen(type) + 1, params);
	target = &t->targets[t->count++];
	target->start = t->sectors;
	target->length = sectors;
	target->type = copy;
	target->params = copy + strlen(type) + 1;
	target->owned = copy;
	t->sectors += sectors;
	if (t->ctx)
		t->ctx->err[0] = '\0';
	return 0;
}

const char *dmcopy_table_text(struct dmcopy_table *t)
{
	size_t i, len = 1, used = 0;
	char *text;

	for (i = 0; i < t->count; i++)
		len += strlen(t->targets[i].params) + 64;
	text = malloc(len);
	if (!text)
		return NULL;
	text[0] = '\0';
	for (i = 0; i < t->count; i++)
		used += (size_t)snprintf(text + used, len - used, "%llu %llu %s %s\n",
				(unsigned long long)t->targets[i].start,
				(unsigned long long)t->targets[i].length,
				t->targets[i].type, t->targets[i].params);
	free(t->text);
	t->text = text;
	return text;
}
