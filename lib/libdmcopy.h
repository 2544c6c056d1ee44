/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libdmcopy: what a block device can do with copy offload, the device-mapper
 * "copy" target's table and status lines, and tables built from segments.
 *
 * Conventions:
 *
 * - Functions that can fail return 0 (or a count) on success and a negative
 *   errno on failure. Those that take a context leave a one-line message
 *   behind, read with dmcopy_last_error(); the library never prints and
 *   never exits. A context may be NULL where noted; there is then only the
 *   errno.
 * - Sizes and offsets are in bytes unless a name says sectors (512 bytes).
 * - A "kernel name" is the name of a block device under /sys/class/block:
 *   "nullb0", "dm-3", "nvme0n1", "vda1".
 * - A context is not thread-safe; use one per thread.
 */
#ifndef LIBDMCOPY_H
#define LIBDMCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DMCOPY_NAME_LEN		128	/* kernel and dm names, with the NUL */
#define DMCOPY_UUID_LEN		129	/* DM_UUID_LEN */
#define DMCOPY_DEV_LEN		256	/* a table's <dev>: path or MAJ:MIN */
#define DMCOPY_TYPE_LEN		16	/* DM_MAX_TYPE_NAME */

/* The most one copy request can carry: 4 GiB - 4 KiB, whole 4 KiB blocks. */
#define DMCOPY_MAX_COPY_BYTES	4294963200ULL

struct dmcopy_ctx;

/*
 * dmcopy_new - a context that reads sysfs below @sysfs_root
 * @sysfs_root: NULL or "/sys" for the running system; another directory
 *	holds a copy of the parts of sysfs the library reads (tests)
 *
 * Device-mapper tables are read from the running kernel only when the
 * context reads the real /sys: a fixture's dm devices are not the kernel's.
 * Returns NULL when out of memory.
 */
struct dmcopy_ctx *dmcopy_new(const char *sysfs_root);

/* dmcopy_free - release @ctx (NULL is fine) */
void dmcopy_free(struct dmcopy_ctx *ctx);

/*
 * dmcopy_last_error - the message of the last failure in @ctx
 *
 * Valid until the next call that uses @ctx; "" when nothing failed yet.
 */
const char *dmcopy_last_error(struct dmcopy_ctx *ctx);

/* dmcopy_strerror - the same as dmcopy_last_error() */
const char *dmcopy_strerror(struct dmcopy_ctx *ctx);

/*
 * dmcopy_parse_size - a size as a user types it
 * @s: decimal digits, optionally followed by K, M, G or T (or KiB, MiB,
 *	GiB, TiB; any case), all powers of 1024
 * @bytes: the size
 *
 * No sign, spaces, fractions or other suffixes. Returns 0, -EINVAL for
 * anything else, -ERANGE when the size does not fit 64 bits.
 */
int dmcopy_parse_size(const char *s, uint64_t *bytes);

/*
 * dmcopy_resolve_device - the kernel name of a block device
 * @spec: a kernel name ("nullb0"), a device path ("/dev/mapper/x", any
 *	path that stat()s to a block device) or "MAJ:MIN"
 * @name: receives the kernel name
 * @len: size of @name
 *
 * A path is looked up by its device number in <sysfs>/dev/block, so it
 * must name a device of the running system's sysfs view.
 * Returns 0, -ENOENT (no such device), -ENOTBLK (not a block device),
 * -ENAMETOOLONG, or another negative errno from stat().
 */
int dmcopy_resolve_device(struct dmcopy_ctx *ctx, const char *spec,
			  char *name, size_t len);

/*
 * What sysfs tells about one block device. A partition has no queue of its
 * own: its copy limits, counters and logical block size are its disk's.
 */
struct dmcopy_caps {
	char name[DMCOPY_NAME_LEN];	/* kernel name, partition or disk */
	char disk[DMCOPY_NAME_LEN];	/* the disk: name itself if no partition */
	bool is_partition;
	uint64_t partition_start;	/* bytes into the disk (0 for a disk) */

	/*
	 * false when queue/copy_max_hw_bytes does not exist: a kernel
	 * without copy offload. The copy fields below are then 0.
	 */
	bool has_copy_sysfs;
	uint64_t copy_max_hw_bytes;	/* 0: the disk cannot offload */
	uint64_t copy_max_bytes;	/* 0: offload off, copies emulated */

	/* <disk>/copy_stat: copies into this disk; all 0 if it is missing */
	bool has_copy_stat;
	uint64_t offloaded_copies;
	uint64_t offloaded_bytes;
	uint64_t emulated_copies;
	uint64_t emulated_bytes;
	uint64_t failed_copies;
	uint64_t failed_bytes;

	uint64_t logical_block_size;
	uint64_t size_bytes;		/* <name>/size * 512 */
	unsigned int major, minor;

	bool is_dm;			/* a device-mapper disk (dm-N) */
	char dm_name[DMCOPY_NAME_LEN];	/* dm/name, "" if not dm */
	char dm_uuid[DMCOPY_UUID_LEN];	/* dm/uuid, "" if none */

	/* kernel names in the device's slaves/ and holders/, sorted */
	char **slaves;
	size_t nr_slaves;
	char **holders;
	size_t nr_holders;
};

/*
 * dmcopy_device_caps - read the capabilities of a block device
 * @name: kernel name, device path or MAJ:MIN (see dmcopy_resolve_device)
 * @caps: filled in; release it with dmcopy_caps_release()
 *
 * A kernel without copy offload is no error: @caps->has_copy_sysfs is then
 * false and dmcopy_last_error() says "kernel without copy offload: copies
 * go through user space". Returns 0 or a negative errno (-ENOENT for an
 * unknown device); on failure there is nothing to release.
 */
int dmcopy_device_caps(struct dmcopy_ctx *ctx, const char *name,
		       struct dmcopy_caps *caps);

/* dmcopy_caps_release - free the lists in @caps (not @caps itself) */
void dmcopy_caps_release(struct dmcopy_caps *caps);

/*
 * dmcopy_list_devices - kernel names of the disks in <sysfs>/block, sorted
 * @names: receives a malloc()ed array of malloc()ed strings; release it
 *	with dmcopy_free_names()
 * Returns the number of names or a negative errno.
 */
int dmcopy_list_devices(struct dmcopy_ctx *ctx, char ***names);

/* dmcopy_free_names - free @count names and the array (NULL is fine) */
void dmcopy_free_names(char **names, size_t count);

/* One target of a live device-mapper table, in 512-byte sectors. */
struct dmcopy_dm_target {
	uint64_t start;
	uint64_t length;
	char type[DMCOPY_TYPE_LEN];
};

/*
 * dmcopy_dm_targets - the targets of the live table of a mapped device
 * @dm_name: the dm name (dm/name in sysfs, /dev/mapper/<dm_name>)
 * @targets: receives a malloc()ed array; free() it
 * @count: number of targets (0 for a device without a live table)
 *
 * Talks to the running kernel through libdevmapper (usually needs root),
 * whatever sysfs root @ctx reads. libdevmapper's log messages go to
 * dmcopy_last_error(), not to stderr: this installs its own libdm log
 * function. Returns 0, -ENXIO when there is no such device, -ENODEV when
 * the kernel has no device-mapper, or the ioctl's errno (-EACCES when not
 * root, -EIO when libdevmapper gives none).
 */
int dmcopy_dm_targets(struct dmcopy_ctx *ctx, const char *dm_name,
		      struct dmcopy_dm_target **targets, size_t *count);

/*
 * dmcopy_dm_types - the target types of @targets joined by ',' in table
 * order, each once ("linear", "copy,linear"); "" for none.
 * Returns 0 or -ENOSPC when @buf is too small.
 */
int dmcopy_dm_types(const struct dmcopy_dm_target *targets, size_t count,
		    char *buf, size_t len);

enum dmcopy_path {
	DMCOPY_OFFLOAD,		/* the disk copies it itself */
	DMCOPY_EMULATE_KERNEL,	/* the kernel reads and writes */
	DMCOPY_USERSPACE,	/* copy_file_range() cannot: read and write */
};

struct dmcopy_verdict {
	enum dmcopy_path path;
	char reason[320];	/* two names fit */
};

/* dmcopy_path_name - "offload", "emulate-kernel" or "userspace" */
const char *dmcopy_path_name(enum dmcopy_path path);

/*
 * dmcopy_caps_verdict - how a copy inside the device of @caps is done,
 * from sysfs alone (the first rules of dmcopy_verdict() that apply to one
 * device). Never fails.
 */
void dmcopy_caps_verdict(const struct dmcopy_caps *caps,
			 struct dmcopy_verdict *verdict);

/*
 * dmcopy_verdict - how copy_file_range() with O_DIRECT on both devices
 * would copy @len bytes from @src_off of @src to @dst_off of @dst
 * @src, @dst: kernel names, paths or MAJ:MIN
 *
 * Decided from sysfs and, for dm devices of the real /sys, the live dm
 * table; the first rule that applies wins:
 *
 *  1. @len 0, a range past its device's end, or overlapping ranges on one
 *     disk: -EINVAL (the kernel refuses it too).
 *  2. Either device without queue/copy_max_hw_bytes: USERSPACE, "kernel
 *     without copy offload: copies go through user space".
 *  3. An offset or @len not a multiple of both logical block sizes:
 *     EMULATE_KERNEL, "misaligned to <n>-byte logical blocks" (O_DIRECT
 *     refuses it; without O_DIRECT the page cache copies).
 *  4. Different disks: EMULATE_KERNEL, "different disks: <src> and <dst>".
 *  5. copy_max_hw_bytes 0: EMULATE_KERNEL, "<disk> cannot offload copies".
 *  6. copy_max_bytes 0: EMULATE_KERNEL, "offload off on <disk>
 *     (copy_max_bytes 0)".
 *  7. A dm disk whose live table is known and where either range spans
 *     more than one target: EMULATE_KERNEL, "crosses a dm target
 *     boundary" (dm refuses such a copy; the block layer emulates it).
 *  8. Otherwise OFFLOAD, "<disk> offloads copies".
 *
 * What this cannot see: a device below a dm target that refuses a copy at
 * run time, tokens sealed by table swaps, and I/O errors; the kernel then
 * emulates, so OFFLOAD means "offered to the disk".
 * Returns 0 or a negative errno.
 */
int dmcopy_verdict(struct dmcopy_ctx *ctx,
		   const char *src, uint64_t src_off,
		   const char *dst, uint64_t dst_off,
		   uint64_t len, struct dmcopy_verdict *verdict);

enum dmcopy_mode {
	DMCOPY_MODE_AUTO,
	DMCOPY_MODE_OFFLOAD,
	DMCOPY_MODE_EMULATE,
};

/* dmcopy_mode_name - "auto", "offload" or "emulate"; NULL if invalid */
const char *dmcopy_mode_name(enum dmcopy_mode mode);

/* dmcopy_parse_mode - a mode by name, any case; 0 or -EINVAL */
int dmcopy_parse_mode(const char *s, enum dmcopy_mode *mode);

/* The INFO status of one copy target. */
struct dmcopy_copy_status {
	enum dmcopy_mode mode;
	uint64_t offloaded_copies;
	uint64_t offloaded_bytes;
	uint64_t emulated_copies;
	uint64_t emulated_bytes;
	uint64_t errors;
	uint64_t in_flight;
};

/*
 * dmcopy_parse_copy_status - parse the INFO status of a copy target
 * @ctx: for the message; may be NULL
 * @params: what follows "<start> <length> copy " in "dmsetup status":
 *	"<mode> <offloaded copies> <offloaded bytes> <emulated copies>
 *	<emulated bytes> <errors> <copies in flight>"
 * Returns 0 or -EINVAL.
 */
int dmcopy_parse_copy_status(struct dmcopy_ctx *ctx, const char *params,
			     struct dmcopy_copy_status *status);

/*
 * dmcopy_format_copy_status - the INFO line as the kernel prints it
 * Returns its length like snprintf(), -EINVAL for an invalid mode, or
 * -ENOSPC when @buf is too small.
 */
int dmcopy_format_copy_status(const struct dmcopy_copy_status *status,
			      char *buf, size_t len);

/* The table parameters of one copy target. */
struct dmcopy_copy_table {
	char device[DMCOPY_DEV_LEN];	/* path or MAJ:MIN */
	uint64_t offset;		/* sectors into device */
	enum dmcopy_mode mode;
	uint64_t max_copy_bytes;	/* 0: the target's default */
};

/*
 * dmcopy_parse_copy_table - parse the parameters of a copy target line
 * @ctx: for the message; may be NULL
 * @params: "<dev> <offset> [<#features> mode <m> max_copy_bytes <n>]",
 *	what follows "<start> <length> copy " in a table
 *
 * Refuses what the kernel's constructor refuses, except what needs the
 * device (whether max_copy_bytes is whole logical blocks of it): feature
 * count above 4 or not matching the arguments, duplicate or conflicting
 * features, unknown ones, max_copy_bytes 0, not whole sectors or above
 * DMCOPY_MAX_COPY_BYTES. Returns 0 or -EINVAL.
 */
int dmcopy_parse_copy_table(struct dmcopy_ctx *ctx, const char *params,
			    struct dmcopy_copy_table *table);

/*
 * dmcopy_format_copy_table - the parameters as the kernel's TABLE status
 * prints them: "<dev> <offset>", then the count and the features that are
 * not defaults, mode first ("nullb0 0 4 mode emulate max_copy_bytes 4096").
 * Returns the length like snprintf(), -EINVAL for an invalid mode or empty
 * device, or -ENOSPC when @buf is too small.
 */
int dmcopy_format_copy_table(const struct dmcopy_copy_table *table,
			     char *buf, size_t len);

/* A table under construction: segments mapped one after the other. */
struct dmcopy_table;

enum dmcopy_target_type {
	DMCOPY_TARGET_LINEAR,
	DMCOPY_TARGET_COPY,
};

/* One piece of a device to map, in bytes. */
struct dmcopy_segment {
	enum dmcopy_target_type type;
	const char *device;		/* kernel name, path or MAJ:MIN */
	uint64_t offset;		/* bytes into device */
	uint64_t length;		/* bytes */
	/* copy targets only: */
	enum dmcopy_mode mode;
	uint64_t max_copy_bytes;	/* 0: the target's default */
};

/* dmcopy_table_new - an empty table; NULL when out of memory */
struct dmcopy_table *dmcopy_table_new(struct dmcopy_ctx *ctx);

/* dmcopy_table_free - free @table (NULL is fine) */
void dmcopy_table_free(struct dmcopy_table *table);

/*
 * dmcopy_table_add_segment - append @seg to @table, after what is there
 *
 * The device must be found in sysfs; offset and length must be whole
 * 512-byte sectors and whole logical blocks of the device, the length not
 * 0, and the segment must lie inside the device. A copy target's
 * max_copy_bytes, if set, must be whole logical blocks and at most
 * DMCOPY_MAX_COPY_BYTES. In the table a device named by kernel name or
 * path is written as its MAJ:MIN, which needs no /dev node. Returns 0 or a
 * negative errno (-EINVAL, -ENOENT, -ERANGE, -ENOMEM); @table is unchanged
 * on failure.
 */
int dmcopy_table_add_segment(struct dmcopy_table *table,
			     const struct dmcopy_segment *seg);

/* dmcopy_table_count - the number of segments in @table */
size_t dmcopy_table_count(const struct dmcopy_table *table);

/* dmcopy_table_sectors - the length of the mapped device in sectors */
uint64_t dmcopy_table_sectors(const struct dmcopy_table *table);

/*
 * dmcopy_table_target - segment @i as libdevmapper's dm_task_add_target()
 * takes it: start and length in sectors, target type, parameters. The
 * strings live as long as @table. Returns 0 or -ERANGE.
 */
int dmcopy_table_target(const struct dmcopy_table *table, size_t i,
			uint64_t *start, uint64_t *length,
			const char **type, const char **params);

/*
 * dmcopy_table_text - the table as "dmsetup create" reads it, one line per
 * segment, each ending in '\n'; "" for an empty table. Owned by @table,
 * valid until it changes. NULL when out of memory.
 */
const char *dmcopy_table_text(struct dmcopy_table *table);

#ifdef __cplusplus
}
#endif

#endif /* LIBDMCOPY_H */
