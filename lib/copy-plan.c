// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The copy engine's decisions, apart from its I/O so that they can be
 * tested: copy specs, the length, overlap and alignment, the progress
 * line and the report.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dmcopy-private.h"

int dmcopy_parse_copy_spec(struct dmcopy_ctx *ctx, const char *spec,
			   char *path, size_t len, uint64_t *offset)
{
	const char *colon;
	uint64_t off = 0;
	size_t plen;
	int r;

	if (!spec || !*spec)
		return dmcopy_err(ctx, -EINVAL, "empty path");
	colon = strrchr(spec, ':');
	plen = strlen(spec);
	if (colon && !colon[1])
		return dmcopy_err(ctx, -EINVAL, "'%s': empty offset after ':'", spec);
	if (colon) {
		r = dmcopy_parse_size(colon + 1, &off);
		if (r == -ERANGE)
			return dmcopy_err(ctx, r, "'%s': offset too large", spec);
		/* not a size: the ':' belongs to the path */
		if (!r)
			plen = (size_t)(colon - spec);
	}
	if (!plen)
		return dmcopy_err(ctx, -EINVAL, "'%s': empty path", spec);
	if (plen >= len)
		return dmcopy_err(ctx, -ENAMETOOLONG, "'%.32s...': path too long",
				  spec);
	memcpy(path, spec, plen);
	path[plen] = '\0';
	*offset = off;
	return 0;
}

bool dmcopy_ranges_overlap(const char *src_id, uint64_t src_abs,
			   const char *dst_id, uint64_t dst_abs, uint64_t len)
{
	if (!len || strcmp(src_id, dst_id))
		return false;
	/* [s, s + len) and [d, d + len) meet; no sums that could wrap */
	return src_abs < dst_abs ? dst_abs - src_abs < len :
		src_abs - dst_abs < len;
}

static int check_offset(struct dmcopy_ctx *ctx, const struct dmcopy_copy_end *e,
			uint64_t off)
{
	/* a growing file takes any offset: dd's seek, a hole before it */
	if (off < e->size || e->grows)
		return 0;
	return dmcopy_err(ctx, -EINVAL, "%s: offset %" PRIu64
			  " is past its end (%" PRIu64 " bytes)",
			  e->path, off, e->size);
}

static int check_fits(struct dmcopy_ctx *ctx, const struct dmcopy_copy_end *e,
		      uint64_t off, uint64_t len)
{
	if (e->grows || len <= e->size - off)
		return 0;
	return dmcopy_err(ctx, -EINVAL, "%s: %" PRIu64 " bytes at %" PRIu64
			  " run past its end (%" PRIu64 " bytes)",
			  e->path, len, off, e->size);
}

/* @value must be whole blocks of both ends; @mine is the end it is of. */
static int check_aligned(struct dmcopy_ctx *ctx, const char *what,
			 uint64_t value, const struct dmcopy_copy_end *mine,
			 const struct dmcopy_copy_end *other)
{
	const struct dmcopy_copy_end *e = other->align > mine->align ? other : mine;

	if (!e->align || value % e->align == 0)
		return 0;
	return dmcopy_err(ctx, -EINVAL, "%s %" PRIu64 " is not a multiple of the %"
			  PRIu64 "-byte logical block size of %s (O_DIRECT)",
			  what, value, e->align, e->path);
}

/*
 * The kernel takes offsets and ends below 2^63 (loff_t): past that, a copy
 * would fail half way with EINVAL or EFBIG, so it is refused before any I/O.
 */
static int check_kernel_range(struct dmcopy_ctx *ctx,
			      const struct dmcopy_copy_end *e, uint64_t off,
			      uint64_t len)
{
	if (off > INT64_MAX)
		return dmcopy_err(ctx, -EINVAL, "%s: offset %" PRIu64
				  " is past what the kernel takes (%" PRId64 ")",
				  e->path, off, INT64_MAX);
	if (len != DMCOPY_LENGTH_FIT && len > (uint64_t)INT64_MAX - off)
		return dmcopy_err(ctx, -EINVAL, "%s: %" PRIu64 " bytes at %" PRIu64
				  " end past what the kernel takes (%" PRId64 ")",
				  e->path, len, off, INT64_MAX);
	return 0;
}

int dmcopy_copy_plan(struct dmcopy_ctx *ctx,
		     const struct dmcopy_copy_end *src, uint64_t src_off,
		     const struct dmcopy_copy_end *dst, uint64_t dst_off,
		     uint64_t *len)
{
	uint64_t n = *len;
	int r;

	r = check_kernel_range(ctx, src, src_off, n);
	if (!r)
		r = check_kernel_range(ctx, dst, dst_off, n);
	if (!r)
		r = check_offset(ctx, src, src_off);
	if (!r)
		r = check_offset(ctx, dst, dst_off);
	if (r)
		return r;
	if (n == DMCOPY_LENGTH_FIT) {
		n = src->size - src_off;
		if (!dst->grows && dst->size - dst_off < n)
			n = dst->size - dst_off;
	}
	if (!n)
		return dmcopy_err(ctx, -EINVAL, "nothing to copy: length 0");
	r = check_fits(ctx, src, src_off, n);
	if (!r)
		r = check_fits(ctx, dst, dst_off, n);
	if (r)
		return r;
	if (dmcopy_ranges_overlap(src->id, src->start + src_off,
				  dst->id, dst->start + dst_off, n))
		return dmcopy_err(ctx, -EINVAL,
				  "source and destination overlap on %s", src->id);
	r = check_aligned(ctx, "source offset", src_off, src, dst);
	if (!r)
		r = check_aligned(ctx, "destination offset", dst_off, dst, src);
	if (!r)
		r = check_aligned(ctx, "length", n, dst, src);
	if (r)
		return r;
	*len = n;
	return 0;
}

const char *dmcopy_copy_refusal(int err, const struct dmcopy_copy_end *src,
				const struct dmcopy_copy_end *dst)
{
	switch (err) {
	case EXDEV:
		return "the kernel does not copy between these two (EXDEV): copied in user space";
	case EOPNOTSUPP:
	case ENOSYS:
		return "copy_file_range() is not supported here: copied in user space";
	case EINVAL:
		if (src->is_blockdev != dst->is_blockdev)
			return "the kernel does not copy between a block device and a regular file: copied in user space";
		/*
		 * Between two block devices, EINVAL is the kernel's refusal
		 * only without copy offload: with it, the plan has already
		 * ruled out what the kernel would call invalid.
		 */
		if (src->is_blockdev && (!src->kernel_copy || !dst->kernel_copy))
			return "kernel without copy offload: copies go through user space";
		return NULL;
	}
	return NULL;
}

const char *dmcopy_copy_offload(const struct dmcopy_copy_report *callers)
{
	struct dmcopy_copy_report full;
	const struct dmcopy_copy_report *rep = &full;

	/* what an older, shorter report lacks reads as 0 */
	dmcopy_struct_in(&full, sizeof(full), callers);
	if (rep->avoided)
		return "avoided";
	if (rep->offloaded)
		return "yes";
	if (rep->refused)
		return "unsupported";
	return "no";
}

int dmcopy_format_progress(uint64_t done, uint64_t total, char *buf,
			   size_t len)
{
	unsigned __int128 hundredths = 10000;

	if (total && done < total)
		hundredths = (unsigned __int128)done * 10000 / total;
	return dmcopy_snprintf(buf, len, "    (%u.%02u/100%%)",
			       (unsigned int)(hundredths / 100),
			       (unsigned int)(hundredths % 100));
}

int dmcopy_format_copy_report(const struct dmcopy_copy_report *callers,
			      char *buf, size_t len)
{
	struct dmcopy_copy_report full;
	const struct dmcopy_copy_report *rep = &full;
	char head[128];

	if (dmcopy_check_size(NULL, callers->size, DMCOPY_COPY_REPORT_SIZE_V1,
			      "dmcopy_copy_report"))
		return -EINVAL;
	dmcopy_struct_in(&full, sizeof(full), callers);
	if (rep->copied == rep->length)
		snprintf(head, sizeof(head), "copied %" PRIu64 " bytes",
			 rep->copied);
	else
		snprintf(head, sizeof(head), "%s: the first %" PRIu64 " of %"
			 PRIu64 " bytes are copied",
			 rep->interrupted ? "interrupted" : "stopped",
			 rep->copied, rep->length);
	return dmcopy_snprintf(buf, len, "%s: %" PRIu64 " offloaded, %" PRIu64
			       " emulated in the kernel, %" PRIu64 " in user space",
			       head, rep->offloaded, rep->emulated,
			       rep->userspace);
}
