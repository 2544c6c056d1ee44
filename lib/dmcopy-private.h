/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the files of libdmcopy share and nobody else sees. */
#ifndef DMCOPY_PRIVATE_H
#define DMCOPY_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libdmcopy.h"

#define DMCOPY_ERR_LEN	512

/*
 * The version script exports dmcopy_*; what is declared here is not part
 * of the ABI, so it stays out of the dynamic symbol table.
 */
#pragma GCC visibility push(hidden)

struct dmcopy_ctx {
	char *sysfs_root;
	bool real_sysfs;	/* dm tables of the running kernel apply */
	bool udev_sync;		/* wait for udev on create, resume, remove */
	char err[DMCOPY_ERR_LEN];
};

/*
 * Record a message in @ctx (which may be NULL) and return @err, so that a
 * failure is one line: return dmcopy_err(ctx, -EINVAL, "...");
 */
int dmcopy_err(struct dmcopy_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Structs with their size first (libdmcopy.h): the size of a struct's
 * first version, up to and including its member @last.
 */
#define DMCOPY_SIZE_UPTO(type, last) \
	(offsetof(type, last) + sizeof(((type *)0)->last))

#define DMCOPY_CAPS_SIZE_V1 \
	DMCOPY_SIZE_UPTO(struct dmcopy_caps, nr_holders)
#define DMCOPY_COPY_STATUS_SIZE_V1 \
	DMCOPY_SIZE_UPTO(struct dmcopy_copy_status, in_flight)
#define DMCOPY_SEGMENT_SIZE_V1 \
	DMCOPY_SIZE_UPTO(struct dmcopy_segment, max_copy_bytes)
#define DMCOPY_DM_INFO_SIZE_V1 \
	DMCOPY_SIZE_UPTO(struct dmcopy_dm_info, inactive_table)
#define DMCOPY_COPY_OPTS_SIZE_V1 \
	DMCOPY_SIZE_UPTO(struct dmcopy_copy_opts, stop)
#define DMCOPY_COPY_REPORT_SIZE_V1 \
	DMCOPY_SIZE_UPTO(struct dmcopy_copy_report, refused_why)

/*
 * -EINVAL, with a message naming @what, when a caller's struct has a
 * size below @min (not set, most likely); else 0.
 */
int dmcopy_check_size(struct dmcopy_ctx *ctx, size_t size, size_t min,
		      const char *what);

/*
 * A caller's struct in, into @full (sizeof @full_size, zeroed beyond what
 * the caller's has), and a full struct out, into the caller's (what fits
 * in its size): the size member stays the caller's.
 */
void dmcopy_struct_in(void *full, size_t full_size, const void *callers);
void dmcopy_struct_out(void *callers, const void *full, size_t full_size);

/* A string to a u64: decimal digits only, nothing before or after. */
int dmcopy_parse_u64(const char *s, uint64_t *value);

/*
 * Read a sysfs attribute below the context's root, the path given as
 * printf arguments. The trailing newline is dropped. -ENOENT when the file
 * is not there (with no message: callers decide whether that is an error).
 */
int dmcopy_sysfs_read(struct dmcopy_ctx *ctx, char *buf, size_t len,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int dmcopy_sysfs_read_u64(struct dmcopy_ctx *ctx, uint64_t *value,
			  const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* snprintf() into @buf, -ENOSPC when it does not fit. */
int dmcopy_snprintf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * One target of a live dm table, for the walk down to what a range of a
 * device is stored on: a linear target's device and offset (in sectors),
 * any other target with @linear false.
 */
struct dmcopy_dm_segment {
	uint64_t start, length;		/* sectors of the mapped device */
	bool linear;
	unsigned int major, minor;	/* the device below, if linear */
	uint64_t offset;		/* sectors into it, if linear */
};

/* The live table of @dm_name as segments; free() *@segs. */
int dmcopy_dm_segments(struct dmcopy_ctx *ctx, const char *dm_name,
		       struct dmcopy_dm_segment **segs, size_t *count);

#pragma GCC visibility pop

#endif
