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
 * - A context is not thread-safe; use one per thread. Calls into libdm
 *   (device-mapper) from several threads are serialised inside the
 *   library. libdm has one global log function: during such a call the
 *   library sets its own (errors go into the context), and afterwards
 *   libdm's default again, so a program that installs its own libdm
 *   logger must do so again after calling into libdmcopy.
 * - Structs that may grow (dmcopy_caps, dmcopy_layer, dmcopy_copy_status,
 *   dmcopy_segment, dmcopy_dm_info, dmcopy_copy_opts, dmcopy_copy_report)
 *   start with "size_t size". The caller sets it to the sizeof of the
 *   struct it passes ({ .size = sizeof(caps) }); the library reads and
 *   writes only that many bytes, and refuses one smaller than the struct's
 *   first version with -EINVAL. Structs the library allocates carry the
 *   size they were made with, and come as arrays of pointers: a program
 *   built against an older libdmcopy.h works with a newer library, and
 *   one built against a newer header can tell which fields it got. What
 *   mirrors a fixed format (a table line, a dm target, a verdict, the
 *   ends of a copy plan) carries no size.
 */
#ifndef LIBDMCOPY_H
#define LIBDMCOPY_H

#include <signal.h>
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
	size_t size;			/* set by the caller: sizeof */
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
 * @caps: its size set; filled in, release it with dmcopy_caps_release()
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

#define DMCOPY_TYPES_LEN	256	/* "copy,linear", with the NUL */
#define DMCOPY_STACK_WHY_LEN	320

/* One device of a stack, as dmcopy_device_stack() finds it. */
struct dmcopy_layer {
	size_t size;			/* what the library made it with */
	unsigned int depth;		/* 0: the device asked about */
	struct dmcopy_caps caps;
	char types[DMCOPY_TYPES_LEN];	/* dm target types (dmcopy_dm_types);
					   "" if not dm or not readable */
};

/*
 * dmcopy_device_stack - a device and every device under it
 * @name: as for dmcopy_device_caps()
 * @layers: receives a malloc()ed array of pointers to layers, depth
 *	first: the device, then each of its slaves followed by the devices
 *	under that slave (a device under two slaves appears twice); free it
 *	with dmcopy_stack_free()
 * @count: the number of layers (at least 1)
 *
 * Target types are read only from the running kernel's tables (usually as
 * root); with another sysfs root or without root they stay "". Returns 0
 * or a negative errno (-ELOOP for a stack deeper than 16 layers).
 */
int dmcopy_device_stack(struct dmcopy_ctx *ctx, const char *name,
			struct dmcopy_layer ***layers, size_t *count);

/* dmcopy_stack_free - free what dmcopy_device_stack() returned */
void dmcopy_stack_free(struct dmcopy_layer **layers, size_t count);

/*
 * dmcopy_stack_decider - which layer decides how a copy into layers[0]
 * goes: going down from the top, the first one that has no copy offload
 * in the kernel, holds a copy target (it serves copies itself), has
 * offload turned off (copy_max_bytes 0 under a copy_max_hw_bytes), or
 * has a target other than linear and copy (it passes no copies down);
 * else, of the devices below, one whose offload is off or missing, else
 * the first bottom device. Its index, and in @why (DMCOPY_STACK_WHY_LEN
 * bytes is enough; may be NULL) why, in words.
 */
size_t dmcopy_stack_decider(struct dmcopy_layer *const *layers,
			    size_t count, char *why, size_t len);

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
 * run time, a copy refused during a suspend, and I/O errors; the kernel then
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
	size_t size;			/* set by the caller: sizeof */
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
 * Returns 0 or -EINVAL (also for @status without its size).
 */
int dmcopy_parse_copy_status(struct dmcopy_ctx *ctx, const char *params,
			     struct dmcopy_copy_status *status);

/*
 * dmcopy_format_copy_status - the INFO line as the kernel prints it
 * Returns its length like snprintf(), -EINVAL for an invalid mode or
 * @status without its size, or -ENOSPC when @buf is too small.
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
	size_t size;			/* set by the caller: sizeof */
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

/*
 * dmcopy_table_add_target - append a target the library has no segment
 * type for (a "clone" over volumes, say), @sectors long, as its line
 * "<type> <params>" in the kernel's own syntax: the kernel checks the
 * devices and arguments when the table is loaded. @type is a target name
 * (letters, digits, '-' and '_'); @params is not empty and one line.
 * Returns 0, -EINVAL or -ENOMEM; @table is unchanged on failure.
 */
int dmcopy_table_add_target(struct dmcopy_table *table, uint64_t sectors,
			    const char *type, const char *params);

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

/*
 * Mapped devices: create, load, suspend, resume, remove, message, status
 *
 * These talk to the running kernel through libdevmapper (root), one
 * dm_task per ioctl; libdm's log goes to dmcopy_last_error(). Create,
 * resume and remove carry a udev cookie and wait until udev has run its
 * rules (nodes, /dev/disk links), unless udev sync is off: DM_DISABLE_UDEV=1
 * in the environment, no udevd running (dm_udev_get_sync_support() 0), or
 * dmcopy_set_udev_sync(ctx, false), the equivalent of lvm2's --noudevsync.
 * libdevmapper then makes the /dev/mapper nodes itself. libdm's switch is
 * process-wide: a context with sync off turns it off for its own calls
 * and back on after them.
 *
 * Errors: -EINVAL (bad name or table), -ENXIO (no such device), -EBUSY (in
 * use), -EEXIST (name taken), -ENODEV (no device-mapper), -EACCES (not
 * root), or the ioctl's errno (-EIO when libdm gives none).
 */

/* The uuid prefix of devices the library creates: "COPY-<name>". */
#define DMCOPY_UUID_PREFIX	"COPY-"

/* dmcopy_set_udev_sync - wait for udev (true, the default) or not */
void dmcopy_set_udev_sync(struct dmcopy_ctx *ctx, bool sync);

/* dmcopy_udev_sync - whether this context's calls would wait for udev */
bool dmcopy_udev_sync(struct dmcopy_ctx *ctx);

/*
 * dmcopy_dm_create - a mapped device @name with uuid COPY-<name> and
 * @table live (created, loaded and resumed). -ENAMETOOLONG when the uuid
 * does not fit DMCOPY_UUID_LEN.
 */
int dmcopy_dm_create(struct dmcopy_ctx *ctx, const char *name,
		     const struct dmcopy_table *table);

/* dmcopy_dm_load - @table as the inactive table of @name (reload) */
int dmcopy_dm_load(struct dmcopy_ctx *ctx, const char *name,
		   const struct dmcopy_table *table);

/* dmcopy_dm_suspend - suspend @name (I/O in flight is waited for) */
int dmcopy_dm_suspend(struct dmcopy_ctx *ctx, const char *name);

/* dmcopy_dm_resume - resume @name, swapping in a loaded table if any */
int dmcopy_dm_resume(struct dmcopy_ctx *ctx, const char *name);

/*
 * dmcopy_dm_remove - remove @name; retried for a while when it is busy
 * (udev's probes open new devices for a moment), as dmsetup --retry.
 */
int dmcopy_dm_remove(struct dmcopy_ctx *ctx, const char *name);

/*
 * dmcopy_dm_uuid - the uuid of mapped device @name into @uuid ("" when it
 * has none; DMCOPY_UUID_LEN bytes hold any). -ENODEV when there is no
 * such device.
 */
int dmcopy_dm_uuid(struct dmcopy_ctx *ctx, const char *name, char *uuid,
		   size_t len);

/*
 * struct dmcopy_dm_info - what DM_DEVICE_INFO tells of a mapped device.
 * The caller sets @size to sizeof(struct dmcopy_dm_info); the library
 * fills what fits in @size bytes, so a program built against an older,
 * shorter struct keeps working when fields are added at the end.
 */
struct dmcopy_dm_info {
	size_t size;
	unsigned int major, minor;	/* its kernel name is dm-<minor> */
	int open_count;			/* openers of the device now */
	bool suspended;
	bool live_table;		/* false: created, never resumed */
	bool inactive_table;		/* loaded, waiting for a resume */
};

/*
 * dmcopy_dm_info - @info of the mapped device @name. -ENODEV when there is
 * no such device (no message: callers often just want to know), -EINVAL
 * when @info->size is below the fields of the first version.
 */
int dmcopy_dm_info(struct dmcopy_ctx *ctx, const char *name,
		   struct dmcopy_dm_info *info);

/*
 * dmcopy_message - send @text to the target of @name at @sector, as
 * "dmsetup message NAME SECTOR TEXT" ("mode emulate", "stats reset").
 */
int dmcopy_message(struct dmcopy_ctx *ctx, const char *name, uint64_t sector,
		   const char *text);

/*
 * dmcopy_dm_clone_devices - the source and destination devices of the
 * first dm-clone target in the live table of @name, as "MAJ:MIN" in @src
 * and @dst (@len bytes each; 32 hold any). Errors as dmcopy_dm_hydration().
 */
int dmcopy_dm_clone_devices(struct dmcopy_ctx *ctx, const char *name,
			    char *src, char *dst, size_t len);

/*
 * dmcopy_dm_hydration - how far the first dm-clone target in the live table
 * of @name has hydrated: @hydrated of @regions regions. Returns 0, -EINVAL
 * when the table has no clone target, or an error like dmcopy_dm_targets().
 */
int dmcopy_dm_hydration(struct dmcopy_ctx *ctx, const char *name,
			uint64_t *hydrated, uint64_t *regions);

/*
 * dmcopy_dm_copy_status - the INFO status of the first copy target in the
 * live table of @name. -EINVAL when it has none.
 */
int dmcopy_dm_copy_status(struct dmcopy_ctx *ctx, const char *name,
			  struct dmcopy_copy_status *status);

/*
 * The copy engine: copy_file_range() between two block devices (or regular
 * files) in chunks, with the checks a tool needs before it overwrites
 * anything, and a report of how the bytes were copied.
 */

/* Bytes per copy_file_range() call unless the options say otherwise. */
#define DMCOPY_DEFAULT_CHUNK	(64ULL << 20)

/* A length that means "as much as fits in both ranges". */
#define DMCOPY_LENGTH_FIT	UINT64_MAX

/* Room for a path in a copy spec. */
#define DMCOPY_PATH_LEN		4096

/*
 * dmcopy_parse_copy_spec - "PATH[:OFFSET]" as dmcopy copy takes it
 * @spec: a path, optionally followed by ':' and an offset in bytes with an
 *	optional K/M/G/T suffix (dmcopy_parse_size())
 * @path: receives the path, @len its size
 * @offset: receives the offset, 0 without one
 *
 * The offset follows the last ':', and only when what follows it is a
 * size: "/dev/disk/by-path/pci-0000:00:04.0" is a path, and a path that
 * ends in ':<digits>' needs an explicit offset ("...:04:0"). Returns 0,
 * -EINVAL (empty path, empty or bad offset), -ERANGE (offset too large) or
 * -ENAMETOOLONG.
 */
int dmcopy_parse_copy_spec(struct dmcopy_ctx *ctx, const char *spec,
			   char *path, size_t len, uint64_t *offset);

/*
 * One side of a copy as the checks see it: where its bytes live, how big
 * it is and what alignment O_DIRECT asks of it.
 */
struct dmcopy_copy_end {
	const char *path;	/* for messages */
	/*
	 * Two ends overlap only if their ids are equal: the kernel name of
	 * the disk for a block device (partitions name their disk), "file
	 * <st_dev>:<st_ino>" for a regular file.
	 */
	char id[DMCOPY_NAME_LEN + 48];
	bool is_blockdev;
	uint64_t start;		/* bytes into the disk: partition start, or 0 */
	uint64_t size;		/* bytes */
	uint64_t align;		/* logical block size; 1 for a regular file */
	bool grows;		/* a regular file destination: may grow, from
				   any offset */
	bool kernel_copy;	/* a block device with copy_* in sysfs: the
				   kernel copies between block devices */
};

/*
 * dmcopy_ranges_overlap - do [@src_abs, +@len) of @src_id and [@dst_abs,
 * +@len) of @dst_id share a byte? Absolute offsets: into the disk,
 * partition start included. false for different ids or @len 0.
 */
bool dmcopy_ranges_overlap(const char *src_id, uint64_t src_abs,
			   const char *dst_id, uint64_t dst_abs, uint64_t len);

/*
 * dmcopy_copy_plan - check a copy and settle its length, before any byte
 * moves; the first rule that fails gives the message:
 *
 *  0. An offset, or an offset plus an explicit @len, past what the kernel
 *     takes (loff_t, 2^63 - 1): -EINVAL "<path>: offset <n> is past what
 *     the kernel takes (<max>)" or "<path>: <len> bytes at <off> end past
 *     what the kernel takes (<max>)".
 *  1. An offset at or past its end: -EINVAL "<path>: offset <n> is past
 *     its end (<size> bytes)" (a growing destination takes any offset).
 *  2. @len DMCOPY_LENGTH_FIT: what is left of the source, and of the
 *     destination unless it grows; 0 left: -EINVAL "nothing to copy".
 *     Otherwise @len must fit both: -EINVAL "<path>: <len> bytes at <off>
 *     run past its end (<size> bytes)"; @len 0: -EINVAL "nothing to copy".
 *  3. Overlap on one disk or file: -EINVAL "source and destination
 *     overlap on <id>", whatever force says. (dmcopy_copy() also follows
 *     both ends down loop devices and dm-linear tables and refuses an
 *     overlap there: "source and destination overlap: <src> and <dst>
 *     are both stored on <id>".)
 *  4. An offset or the length not a multiple of the larger logical block
 *     size (O_DIRECT): -EINVAL "<what> <n> is not a multiple of the
 *     <align>-byte logical block size of <path>".
 *
 * Returns 0 with *@len set, or -EINVAL; *@len is unchanged on failure.
 */
int dmcopy_copy_plan(struct dmcopy_ctx *ctx,
		     const struct dmcopy_copy_end *src, uint64_t src_off,
		     const struct dmcopy_copy_end *dst, uint64_t dst_off,
		     uint64_t *len);

struct dmcopy_copy_opts {
	size_t size;		/* set by the caller: sizeof */
	uint64_t chunk_bytes;	/* per call, rounded down to whole blocks;
				   0: DMCOPY_DEFAULT_CHUNK */
	bool force;		/* overwrite signatures (filesystems, tables) */
	bool no_offload;	/* never copy_file_range(): read and write */
	/*
	 * Write also to a device in use: mounted (itself or, for a whole
	 * disk, a partition), with holders, or opened exclusively by another
	 * program.
	 */
	bool force_in_use;
	/* called with 0 first, then after every chunk; may be NULL */
	void (*progress)(uint64_t done, uint64_t total, void *data);
	void *progress_data;
	/*
	 * Set (from a signal handler, say) to stop: the copy stops before
	 * the next chunk and dmcopy_copy() returns -EINTR. May be NULL.
	 */
	const volatile sig_atomic_t *stop;
};

struct dmcopy_copy_report {
	size_t size;		/* set by the caller: sizeof */
	uint64_t length;	/* bytes asked for, once the plan settled it */
	uint64_t copied;	/* [0, copied) of the range is copied */
	/*
	 * How: offloaded + emulated + userspace == copied. The split of
	 * what copy_file_range() copied comes from the destination disk's
	 * copy_stat, read before and after: copies by others into that disk
	 * meanwhile blur it (offloaded is capped at what the kernel copied
	 * for us). Without copy_stat (a regular file, a kernel without copy
	 * offload) all of it counts as emulated.
	 */
	uint64_t offloaded;	/* the disk copied them itself */
	uint64_t emulated;	/* the kernel read and wrote them */
	uint64_t userspace;	/* read and written by this library */
	bool counted;		/* the destination's copy_stat was read */
	bool avoided;		/* opts->no_offload */
	bool refused;		/* copy_file_range() refused: user space */
	int refused_errno;	/* its errno (EXDEV, EINVAL, EOPNOTSUPP...) */
	bool interrupted;	/* opts->stop stopped it */
	const char *refused_why; /* with refused: why, in words (static) */
};

/*
 * dmcopy_copy - copy @len bytes from @src_off of @src_path to @dst_off of
 * @dst_path
 * @len: bytes, or DMCOPY_LENGTH_FIT
 * @opts: NULL for the defaults
 * @report: its size set; filled in, also when the copy fails or stops
 *	part way (but not when its size is refused)
 *
 * Block devices are opened with O_DIRECT (both, so that copy_file_range()
 * can offload); regular files are not, and a regular file destination
 * must exist and may grow. Before any byte moves: dmcopy_copy_plan(); the
 * destination is probed with libblkid and refused (-EEXIST) when it holds
 * a filesystem, a RAID, LVM or other signature or a partition table; a
 * destination block device with holders in sysfs, or that someone opened
 * exclusively (O_EXCL fails), is refused (-EBUSY). Force skips these two
 * checks and opens without O_EXCL; nothing skips the plan.
 *
 * Then chunk by chunk with copy_file_range(); when it refuses outright
 * (EXDEV, EOPNOTSUPP, ENOSYS, or EINVAL between a block device and a
 * regular file) the rest goes through a read/write loop with an aligned
 * buffer, counted as userspace, as with opts->no_offload. The destination
 * is flushed (fdatasync()) at the end, also after a stop or an error.
 *
 * Returns 0 when all was copied, -EINTR when opts->stop stopped it (the
 * report tells the prefix copied), or another negative errno.
 */
int dmcopy_copy(struct dmcopy_ctx *ctx,
		const char *src_path, uint64_t src_off,
		const char *dst_path, uint64_t dst_off, uint64_t len,
		const struct dmcopy_copy_opts *opts,
		struct dmcopy_copy_report *report);

/*
 * dmcopy_copy_refusal - is @err, from copy_file_range() between @src and
 * @dst before it copied anything, the kernel declining to copy between
 * them (then user space copies)? NULL when it is a real error, else why in
 * words: "kernel without copy offload: copies go through user space" for
 * two block devices on a kernel whose block devices have no copy_* in
 * sysfs (it takes only regular files), "the kernel does not copy between
 * a block device and a regular file", and so on.
 */
const char *dmcopy_copy_refusal(int err, const struct dmcopy_copy_end *src,
				const struct dmcopy_copy_end *dst);

/*
 * dmcopy_copy_offload - how cp --debug would put it: "avoided" (no_offload),
 * "yes" (some bytes offloaded), "unsupported" (copy_file_range() refused,
 * user space copied), "no" (the kernel emulated).
 */
const char *dmcopy_copy_offload(const struct dmcopy_copy_report *report);

/*
 * dmcopy_format_progress - qemu-img -p's line, "    (45.00/100%)", with
 * no '\r' or '\n': percent of @total done, rounded down to hundredths (so
 * 100.00 only when all is done; a @total of 0 is 100.00). Returns the
 * length like snprintf() or -ENOSPC.
 */
int dmcopy_format_progress(uint64_t done, uint64_t total, char *buf,
			   size_t len);

/*
 * dmcopy_format_copy_report - one line, no '\n':
 *   "copied <n> bytes: <o> offloaded, <e> emulated in the kernel, <u> in user space"
 * or, short of the length, "interrupted: " (stopped) or "stopped: " (an
 * error), then "the first <n> of <len> bytes are copied: <o> offloaded...".
 * Returns the length like snprintf() or -ENOSPC.
 */
int dmcopy_format_copy_report(const struct dmcopy_copy_report *report,
			      char *buf, size_t len);
#ifdef __cplusplus
}
#endif

#endif /* LIBDMCOPY_H */
