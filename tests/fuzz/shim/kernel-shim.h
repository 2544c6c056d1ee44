/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel's interfaces, in user space, to compile
 * dm-copy/dm-copy.c unchanged into a fuzzing harness: types and macros as
 * the kernel defines them, the argument helpers of dm (dm_read_arg_group(),
 * dm_shift_arg()) and kstrtoull() with the kernel's semantics, and a
 * device lookup that knows the harness's devices. What does I/O (bios,
 * dm-kcopyd, workqueues) only compiles: the harness never maps a bio.
 *
 * The semantics that the parsers depend on follow the 6.12 sources
 * (drivers/md/dm-table.c, lib/kstrtox.c); anything the harness does not
 * reach aborts, so a path taken by mistake is a crash, not a silent pass.
 */
#ifndef DMCOPY_KERNEL_SHIM_H
#define DMCOPY_KERNEL_SHIM_H

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef u64 sector_t;
typedef unsigned int gfp_t;
typedef unsigned int blk_opf_t;
typedef unsigned int blk_mode_t;
typedef u8 blk_status_t;

#define __init
#define __exit
#define THIS_MODULE		NULL
#define module_init(fn)		static int (*const shim_module_init)(void) __attribute__((unused)) = fn
#define module_exit(fn)		static void (*const shim_module_exit)(void) __attribute__((unused)) = fn
#define MODULE_DESCRIPTION(s)
#define MODULE_AUTHOR(s)
#define MODULE_LICENSE(s)

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define BIT(n)			(1UL << (n))
#define READ_ONCE(x)		(x)
#define WRITE_ONCE(x, v)	((x) = (v))
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define max(a, b)		((a) > (b) ? (a) : (b))
#define min(a, b)		((a) < (b) ? (a) : (b))
#define min_t(type, a, b)	((type)(a) < (type)(b) ? (type)(a) : (type)(b))

#define GFP_KERNEL		0x1u
#define GFP_NOIO		0x2u
#define EIOCBQUEUED		529
#define MAX_ERRNO		4095
#define IS_ERR(p)		((unsigned long)(p) >= (unsigned long)-MAX_ERRNO)
#define PTR_ERR(p)		((long)(p))

#define SECTOR_SHIFT		9
#define SECTOR_SIZE		(1 << SECTOR_SHIFT)
#define PAGE_SIZE		4096UL
#define BLK_COPY_MAX_SECTORS	\
	((UINT_MAX >> SECTOR_SHIFT) & ~((PAGE_SIZE >> SECTOR_SHIFT) - 1))

#define BLK_STS_OK		((blk_status_t)0)
#define BLK_STS_NOTSUPP		((blk_status_t)1)
#define BLK_STS_IOERR		((blk_status_t)10)
#define BLK_STS_INVAL		((blk_status_t)19)
#define REQ_FUA			(1u << 17)

/* ------------------------------------------------------------ stubs --- */

/* Reached only by I/O paths, which the harness never takes. */
static inline void shim_unreachable(const char *what)
{
	fprintf(stderr, "kernel shim: %s reached\n", what);
	abort();
}

typedef struct { int counter; } atomic_t;
typedef struct { s64 counter; } atomic64_t;
typedef struct { int unused; } wait_queue_head_t;

static inline void atomic_set(atomic_t *a, int v) { a->counter = v; }
static inline int atomic_read(const atomic_t *a) { return a->counter; }
static inline void atomic_inc(atomic_t *a) { a->counter++; }
static inline bool atomic_dec_and_test(atomic_t *a) { return --a->counter == 0; }
static inline void atomic64_set(atomic64_t *a, s64 v) { a->counter = v; }
static inline s64 atomic64_read(const atomic64_t *a) { return a->counter; }
static inline void atomic64_inc(atomic64_t *a) { a->counter++; }
static inline void atomic64_add(s64 v, atomic64_t *a) { a->counter += v; }
static inline void init_waitqueue_head(wait_queue_head_t *w) { (void)w; }
static inline void wake_up(wait_queue_head_t *w) { (void)w; }
#define wait_event(wq, cond)	do { if (!(cond)) shim_unreachable("wait_event"); } while (0)

static inline void *kzalloc(size_t size, gfp_t gfp)
{
	(void)gfp;
	return calloc(1, size);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

/* lib/kstrtox.c: digits, an optional leading '+', one trailing newline. */
static inline int kstrtoull(const char *s, unsigned int base, u64 *res)
{
	u64 v = 0;
	const char *p;

	if (base != 10)
		shim_unreachable("kstrtoull base");
	if (*s == '+')
		s++;
	for (p = s; *p >= '0' && *p <= '9'; p++) {
		if (v > (ULLONG_MAX - (u64)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (u64)(*p - '0');
	}
	if (p == s)
		return -EINVAL;
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*res = v;
	return 0;
}

struct work_struct {
	void (*func)(struct work_struct *work);
};
struct workqueue_struct { int unused; };
#define WQ_MEM_RECLAIM		0x8
#define INIT_WORK(w, f)		((w)->func = (f))
static inline bool queue_work(struct workqueue_struct *wq, struct work_struct *w)
{
	(void)wq; (void)w;
	shim_unreachable("queue_work");
	return false;
}
static inline struct workqueue_struct *alloc_workqueue(const char *fmt,
		unsigned int flags, int max_active)
{
	(void)fmt; (void)flags; (void)max_active;
	return calloc(1, sizeof(struct workqueue_struct));
}
static inline void destroy_workqueue(struct workqueue_struct *wq) { free(wq); }

/* --------------------------------------------------------- block --- */

struct gendisk {
	u64 diskseq;
};

struct block_device {
	struct gendisk *bd_disk;
	sector_t bd_start_sect;
	sector_t nr_sectors;
	unsigned int logical_block_size;
	unsigned int max_copy_sectors;
};

struct bvec_iter {
	sector_t bi_sector;
	unsigned int bi_size;
};

struct bio {
	blk_opf_t bi_opf;
	blk_status_t bi_status;
	struct block_device *bi_bdev;
	struct bvec_iter bi_iter;
};

struct queue_limits {
	unsigned int max_copy_hw_sectors;
};

struct blk_copy_result {
	u64 copied;
	u64 offloaded;
	u64 emulated;
	int error;
};

typedef void (blk_copy_endio_t)(void *private, const struct blk_copy_result *res);

static inline sector_t bdev_nr_sectors(struct block_device *bdev) { return bdev->nr_sectors; }
static inline unsigned int bdev_logical_block_size(struct block_device *bdev)
{
	return bdev->logical_block_size;
}
static inline unsigned int bdev_max_copy_sectors(struct block_device *bdev)
{
	return bdev->max_copy_sectors;
}
static inline bool op_is_copy(blk_opf_t opf) { return (opf & 0xff) >= 19 && (opf & 0xff) <= 21; }
static inline unsigned int bio_sectors(struct bio *bio) { return bio->bi_iter.bi_size >> SECTOR_SHIFT; }
static inline void bio_set_dev(struct bio *bio, struct block_device *bdev) { bio->bi_bdev = bdev; }
static inline void bio_endio(struct bio *bio) { (void)bio; shim_unreachable("bio_endio"); }
static inline void blk_copy_set_emulated(struct bio *bio) { (void)bio; shim_unreachable("blk_copy_set_emulated"); }
static inline struct bio *blk_copy_meet(struct bio *bio, const void *owner, u64 seq, void *priv)
{
	(void)owner; (void)seq; (void)priv;
	shim_unreachable("blk_copy_meet");
	return bio;
}
static inline void *blk_copy_src_priv(struct bio *bio) { (void)bio; shim_unreachable("blk_copy_src_priv"); return NULL; }
static inline void *blk_copy_dst_priv(struct bio *bio) { (void)bio; shim_unreachable("blk_copy_dst_priv"); return NULL; }
static inline sector_t blk_copy_src_sector(struct bio *bio) { (void)bio; shim_unreachable("blk_copy_src_sector"); return 0; }
static inline int blkdev_issue_flush(struct block_device *bdev) { (void)bdev; shim_unreachable("blkdev_issue_flush"); return 0; }
static inline blk_status_t errno_to_blk_status(int e) { return e ? BLK_STS_IOERR : BLK_STS_OK; }
static inline ssize_t blkdev_copy_offload_only(struct block_device *in, loff_t pos_in,
		struct block_device *out, loff_t pos_out, size_t len,
		blk_copy_endio_t *endio, void *private, gfp_t gfp)
{
	(void)in; (void)pos_in; (void)out; (void)pos_out; (void)len;
	(void)endio; (void)private; (void)gfp;
	shim_unreachable("blkdev_copy_offload_only");
	return -EOPNOTSUPP;
}

/* ---------------------------------------------------- device-mapper --- */

#define DM_NAME			"device-mapper"
#define DM_TARGET_NOWAIT	0x80
#define DM_MAPIO_SUBMITTED	0
#define DM_MAPIO_REMAPPED	1

typedef enum { STATUSTYPE_INFO, STATUSTYPE_TABLE, STATUSTYPE_IMA } status_type_t;

struct dm_table;
struct mapped_device;

struct dm_dev {
	struct block_device *bdev;
	blk_mode_t mode;
	char name[16];
};

struct target_type;

struct dm_target {
	struct dm_table *table;
	struct target_type *type;
	sector_t begin;
	sector_t len;
	unsigned int num_flush_bios;
	unsigned int num_discard_bios;
	unsigned int num_secure_erase_bios;
	unsigned int num_write_zeroes_bios;
	unsigned int per_io_data_size;
	void *private;
	char *error;
	bool copy_offload_supported;
};

typedef int (*iterate_devices_callout_fn)(struct dm_target *ti,
		struct dm_dev *dev, sector_t start, sector_t len, void *data);

struct target_type {
	const char *name;
	unsigned int version[3];
	u64 features;
	void *module;
	int (*ctr)(struct dm_target *ti, unsigned int argc, char **argv);
	void (*dtr)(struct dm_target *ti);
	int (*map)(struct dm_target *ti, struct bio *bio);
	void (*presuspend)(struct dm_target *ti);
	void (*presuspend_undo)(struct dm_target *ti);
	void (*postsuspend)(struct dm_target *ti);
	void (*resume)(struct dm_target *ti);
	void (*status)(struct dm_target *ti, status_type_t type,
		       unsigned int status_flags, char *result, unsigned int maxlen);
	int (*message)(struct dm_target *ti, unsigned int argc, char **argv,
		       char *result, unsigned int maxlen);
	int (*prepare_ioctl)(struct dm_target *ti, struct block_device **bdev);
	int (*iterate_devices)(struct dm_target *ti,
			       iterate_devices_callout_fn fn, void *data);
	void (*io_hints)(struct dm_target *ti, struct queue_limits *limits);
};

struct dm_arg_set {
	unsigned int argc;
	char **argv;
};

struct dm_arg {
	unsigned int min;
	unsigned int max;
	char *error;
};

struct dm_io_region {
	struct block_device *bdev;
	sector_t sector;
	sector_t count;
};

struct dm_kcopyd_client { int unused; };
struct dm_kcopyd_throttle { unsigned int throttle; };
#define DM_KCOPYD_NO_OFFLOAD	3
#define DECLARE_DM_KCOPYD_THROTTLE_WITH_MODULE_PARM(name, description) \
	static struct dm_kcopyd_throttle dm_kcopyd_throttle = { 100 }

/* drivers/md/dm-table.c */
static inline const char *dm_shift_arg(struct dm_arg_set *as)
{
	char *r;

	if (as->argc) {
		as->argc--;
		r = *as->argv;
		as->argv++;
		return r;
	}
	return NULL;
}

/*
 * The kernel's sscanf(s, "%u%c", value, &dummy) == 1 (lib/vsprintf.c), not
 * the C library's: white space first, then a digit (no sign), digits
 * read into 64 bits without an overflow check and stored into 32, and
 * nothing after them.
 */
static inline bool shim_kernel_scan_uint(const char *s, unsigned int *value)
{
	unsigned long long v = 0;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++)
		v = v * 10 + (unsigned long long)(*s - '0');
	if (*s)
		return false;
	*value = (unsigned int)v;
	return true;
}

static inline int dm_read_arg_group(const struct dm_arg *arg,
				    struct dm_arg_set *arg_set,
				    unsigned int *value, char **error)
{
	const char *arg_str = dm_shift_arg(arg_set);

	if (!arg_str || !shim_kernel_scan_uint(arg_str, value) ||
	    *value < arg->min || *value > arg->max ||
	    arg_set->argc < *value) {
		*error = arg->error;
		return -EINVAL;
	}
	return 0;
}

/* Provided by the harness: its devices by name. */
int shim_dm_get_device(struct dm_target *ti, const char *path,
		       blk_mode_t mode, struct dm_dev **result);
void shim_dm_put_device(struct dm_target *ti, struct dm_dev *d);
#define dm_get_device		shim_dm_get_device
#define dm_put_device		shim_dm_put_device

static inline blk_mode_t dm_table_get_mode(struct dm_table *t) { (void)t; return 3; }
static inline struct mapped_device *dm_table_get_md(struct dm_table *t) { (void)t; return NULL; }
static inline const char *dm_device_name(struct mapped_device *md) { (void)md; return "fuzz"; }
static inline struct gendisk *dm_disk(struct mapped_device *md) { (void)md; shim_unreachable("dm_disk"); return NULL; }
static inline sector_t dm_target_offset(struct dm_target *ti, sector_t s) { return s - ti->begin; }
static inline void *dm_per_bio_data(struct bio *bio, size_t size) { (void)bio; (void)size; shim_unreachable("dm_per_bio_data"); return NULL; }
static inline int dm_register_target(struct target_type *t) { (void)t; return 0; }
static inline void dm_unregister_target(struct target_type *t) { (void)t; }

static inline struct dm_kcopyd_client *dm_kcopyd_client_create(struct dm_kcopyd_throttle *t)
{
	(void)t;
	return calloc(1, sizeof(struct dm_kcopyd_client));
}
static inline void dm_kcopyd_client_destroy(struct dm_kcopyd_client *kc) { free(kc); }
static inline void dm_kcopyd_client_flush(struct dm_kcopyd_client *kc) { (void)kc; }
typedef void (*dm_kcopyd_notify_fn)(int read_err, unsigned long write_err, void *context);
static inline void dm_kcopyd_copy(struct dm_kcopyd_client *kc, struct dm_io_region *from,
				  unsigned int num_dests, struct dm_io_region *dests,
				  unsigned long flags, dm_kcopyd_notify_fn fn, void *context)
{
	(void)kc; (void)from; (void)num_dests; (void)dests; (void)flags;
	(void)fn; (void)context;
	shim_unreachable("dm_kcopyd_copy");
}

/* Kernel log lines: collected for the harness, which may check them. */
void shim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define DMERR(fmt, ...)		shim_log(fmt, ##__VA_ARGS__)
#define DMERR_LIMIT(fmt, ...)	shim_unreachable("DMERR_LIMIT")

/* lib/vsprintf.c: what was written, not what would have been */
static inline int shim_scnprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int shim_scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	return (size_t)n < size ? n : (size ? (int)size - 1 : 0);
}

/* include/linux/device-mapper.h */
#define DMEMIT(x...) sz += ((sz >= maxlen) ? \
			  0 : shim_scnprintf(result + sz, maxlen - sz, x))
#define DMEMIT_TARGET_NAME_VERSION(y) \
		DMEMIT("target_name=%s,target_version=%u.%u.%u", \
		       (y)->name, (y)->version[0], (y)->version[1], (y)->version[2])

#endif
