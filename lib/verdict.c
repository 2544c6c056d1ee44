// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whether a copy would be offloaded, emulated in the kernel or left to
 * user space; the rules are in libdmcopy.h above dmcopy_verdict().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmcopy-private.h"

#define NO_COPY_SYSFS "kernel without copy offload: copies go through user space"

const char *dmcopy_path_name(enum dmcopy_path path)
{
	switch (path) {
	case DMCOPY_OFFLOAD:
		return "offload";
	case DMCOPY_EMULATE_KERNEL:
		return "emulate-kernel";
	case DMCOPY_USERSPACE:
		return "userspace";
	}
	return "unknown";
}

static void set_verdict(struct dmcopy_verdict *v, enum dmcopy_path path,
			const char *fmt, const char *a, const char *b)
{
	v->path = path;
	snprintf(v->reason, sizeof(v->reason), fmt, a, b);
}

void dmcopy_caps_verdict(const struct dmcopy_caps *caps,
			 struct dmcopy_verdict *v)
{
	if (!caps->has_copy_sysfs)
		set_verdict(v, DMCOPY_USERSPACE, NO_COPY_SYSFS, "", "");
	else if (!caps->copy_max_hw_bytes)
		set_verdict(v, DMCOPY_EMULATE_KERNEL, "%s cannot offload copies",
			    caps->disk, "");
	else if (!caps->copy_max_bytes)
		set_verdict(v, DMCOPY_EMULATE_KERNEL,
			    "offload off on %s (copy_max_bytes 0)", caps->disk, "");
	else
		set_verdict(v, DMCOPY_OFFLOAD, "%s offloads copies", caps->disk, "");
}

/* Rule 1: what copy_file_range() refuses with EINVAL. */
static int check_ranges(struct dmcopy_ctx *ctx, const struct dmcopy_caps *src,
			uint64_t src_off, const struct dmcopy_caps *dst,
			uint64_t dst_off, uint64_t len)
{
	uint64_t s, d;

	if (!len)
		return dmcopy_err(ctx, -EINVAL, "nothing to copy: length 0");
	if (src_off > src->size_bytes || len > src->size_bytes - src_off)
		return dmcopy_err(ctx, -EINVAL, "source range runs past the end of %s",
				  src->name);
	if (dst_off > dst->size_bytes || len > dst->size_bytes - dst_off)
		return dmcopy_err(ctx, -EINVAL,
				  "destination range runs past the end of %s",
				  dst->name);
	if (strcmp(src->disk, dst->disk))
		return 0;
	s = src->partition_start + src_off;
	d = dst->partition_start + dst_off;
	if (s < d + len && d < s + len)
		return dmcopy_err(ctx, -EINVAL, "overlapping ranges on %s",
				  src->disk);
	return 0;
}

static bool misaligned(uint64_t lbs, uint64_t src_off, uint64_t dst_off,
		       uint64_t len)
{
	return src_off % lbs || dst_off % lbs || len % lbs;
}

/* Does [off, off + len) (bytes into the dm disk) span two targets? */
static bool crosses_target(const struct dmcopy_dm_target *t, size_t n,
			   uint64_t off, uint64_t len)
{
	uint64_t first = off / 512, last = (off + len - 1) / 512;
	size_t i;

	for (i = 0; i < n; i++)
		if (first >= t[i].start && first < t[i].start + t[i].length)
			return last >= t[i].start + t[i].length;
	return false;
}

/*
 * Rule 7, for dm disks of the running kernel; a table that cannot be read
 * (no root) decides nothing.
 */
static bool crosses_dm_boundary(struct dmcopy_ctx *ctx,
				const struct dmcopy_caps *src, uint64_t src_off,
				const struct dmcopy_caps *dst, uint64_t dst_off,
				uint64_t len)
{
	struct dmcopy_dm_target *targets;
	size_t count;
	bool crosses;

	if (!ctx->real_sysfs || !dst->is_dm || !dst->dm_name[0])
		return false;
	if (dmcopy_dm_targets(ctx, dst->dm_name, &targets, &count) < 0)
		return false;
	crosses = crosses_target(targets, count, src->partition_start + src_off, len) ||
		crosses_target(targets, count, dst->partition_start + dst_off, len);
	free(targets);
	return crosses;
}

static void decide(struct dmcopy_ctx *ctx, const struct dmcopy_caps *src,
		   uint64_t src_off, const struct dmcopy_caps *dst,
		   uint64_t dst_off, uint64_t len, struct dmcopy_verdict *v)
{
	uint64_t lbs;
	char what[64];

	if (!src->has_copy_sysfs || !dst->has_copy_sysfs) {
		set_verdict(v, DMCOPY_USERSPACE, NO_COPY_SYSFS, "", "");
		return;
	}
	lbs = src->logical_block_size > dst->logical_block_size ?
		src->logical_block_size : dst->logical_block_size;
	if (misaligned(lbs, src_off, dst_off, len)) {
		snprintf(what, sizeof(what), "%llu", (unsigned long long)lbs);
		set_verdict(v, DMCOPY_EMULATE_KERNEL,
			    "misaligned to %s-byte logical blocks", what, "");
		return;
	}
	if (strcmp(src->disk, dst->disk)) {
		set_verdict(v, DMCOPY_EMULATE_KERNEL, "different disks: %s and %s",
			    src->disk, dst->disk);
		return;
	}
	dmcopy_caps_verdict(dst, v);
	if (v->path == DMCOPY_OFFLOAD &&
	    crosses_dm_boundary(ctx, src, src_off, dst, dst_off, len))
		set_verdict(v, DMCOPY_EMULATE_KERNEL,
			    "crosses a dm target boundary", "", "");
}

int dmcopy_verdict(struct dmcopy_ctx *ctx,
		   const char *src, uint64_t src_off,
		   const char *dst, uint64_t dst_off,
		   uint64_t len, struct dmcopy_verdict *verdict)
{
	struct dmcopy_caps s = { .size = sizeof(s) }, d = { .size = sizeof(d) };
	int r;

	r = dmcopy_device_caps(ctx, src, &s);
	if (r)
		return r;
	r = dmcopy_device_caps(ctx, dst, &d);
	if (r) {
		dmcopy_caps_release(&s);
		return r;
	}
	r = check_ranges(ctx, &s, src_off, &d, dst_off, len);
	if (!r) {
		decide(ctx, &s, src_off, &d, dst_off, len, verdict);
		ctx->err[0] = '\0';
	}
	dmcopy_caps_release(&s);
	dmcopy_caps_release(&d);
	return r;
}
