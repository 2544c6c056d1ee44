// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-copy: a device-mapper target that maps like dm-linear and serves copy
 * offload (REQ_OP_COPY_SRC and REQ_OP_COPY_DST) itself: the two halves of a
 * copy meet in the copy targets of one table (blk_copy_meet()), and the
 * copy is offloaded to the device below when source and destination are on
 * one disk that copies, and copied with dm-kcopyd otherwise, so that the
 * device advertises copy offload whatever is under it, also across targets
 * and devices.
 *
 * Table line:
 *
 *   <start> <len> copy <dev> <offset> [<#feature args> <feature>...]
 *
 *   <dev>       the device to map onto (path or major:minor)
 *   <offset>    the first sector of <dev> that is mapped, in 512 B sectors
 *
 * Features:
 *
 *   mode auto|offload|emulate
 *       auto (the default): offer the copy to the devices below when
 *       both take copies, and copy with dm-kcopyd whatever they did not
 *       (all of it when they are two disks, or cannot copy); offload:
 *       never dm-kcopyd, and refuse (BLK_STS_NOTSUPP, so the caller
 *       copies by reading and writing) a copy the disk below did not
 *       copy whole; emulate: always dm-kcopyd.
 *   max_copy_bytes <bytes>
 *       the largest copy the device takes in one request (its
 *       queue/copy_max_hw_bytes), a multiple of the logical block size of
 *       <dev>; by default 8 MiB, or what <dev> takes if that is more.
 *
 * Status INFO:
 *
 *   <mode> <offloaded copies> <offloaded bytes> <emulated copies>
 *   <emulated bytes> <errors> <copies in flight>
 *
 * A copy counts as offloaded when the device below copied all of it, as
 * emulated otherwise (dm-kcopyd copied all or the rest of it; its bytes
 * count where they were copied); errors counts copies that failed.
 *
 * Messages: "mode auto|offload|emulate", "stats reset".
 */

#include <linux/device-mapper.h>
#include <linux/dm-kcopyd.h>
#include <linux/module.h>
#include <linux/init.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/slab.h>
#include <linux/ctype.h>
#include <linux/workqueue.h>
#include <linux/wait.h>

#define DM_MSG_PREFIX "copy"

#define COPY_DEFAULT_MAX_BYTES	(8U << 20)

/*
 * Under a kcopyd_throttle below 100, dm-kcopyd copies in pieces of this
 * size (its default sub-job), so that a suspend waits for one throttled
 * piece per copy, not for whole copies at a few percent of the disk.
 */
#define COPY_THROTTLED_PIECE_SECTORS	((512U << 10) >> SECTOR_SHIFT)

DECLARE_DM_KCOPYD_THROTTLE_WITH_MODULE_PARM(kcopyd_throttle,
					    "Percentage of time dm-kcopyd may use the disks");

enum copy_mode {
	COPY_MODE_AUTO,
	COPY_MODE_OFFLOAD,
	COPY_MODE_EMULATE,
};

static const char * const copy_mode_names[] = {
	[COPY_MODE_AUTO] = "auto",
	[COPY_MODE_OFFLOAD] = "offload",
	[COPY_MODE_EMULATE] = "emulate",
};

struct copy_c {
	struct dm_dev *dev;
	sector_t start;

	enum copy_mode mode;		/* READ_ONCE(): messages change it */
	unsigned int max_copy_sectors;	/* 0: the default */

	struct dm_kcopyd_client *kc;
	/* Unthrottled: finishes the copies in flight once a suspend began. */
	struct dm_kcopyd_client *kc_drain;
	bool suspending;		/* READ_ONCE(): set by presuspend */
	atomic_t inflight;
	wait_queue_head_t drained;

	atomic64_t offloaded_copies;
	atomic64_t offloaded_bytes;
	atomic64_t emulated_copies;
	atomic64_t emulated_bytes;
	atomic64_t errors;
};

/* A COPY_DST being served, in the bio's per-bio data. */
struct copy_io {
	struct copy_c *cc;
	struct bio *bio;
	struct block_device *src_bdev;
	sector_t src_sector;		/* on src_bdev */
	sector_t dst_sector;		/* on cc->dev */
	sector_t nr_sectors;
	enum copy_mode mode;		/* when the copy started */
	u64 offloaded;			/* bytes the device below copied */
	u64 copied;			/* from the start, by the device below */
	sector_t emulated;		/* from the start, by dm-kcopyd */
	sector_t piece;			/* the sectors dm-kcopyd copies now */
	/* the start of the copy; its end; the flush after a FUA copy */
	struct work_struct work;
};

static struct workqueue_struct *copy_wq;

static int copy_parse_mode(const char *name, enum copy_mode *mode)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(copy_mode_names); i++) {
		if (!strcasecmp(name, copy_mode_names[i])) {
			*mode = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* A decimal number that fits in 64 bits, nothing before or after it. */
static int copy_parse_u64(const char *arg, u64 *value)
{
	if (!isdigit(arg[0]))
		return -EINVAL;
	return kstrtoull(arg, 10, value);
}

static int copy_parse_features(struct dm_arg_set *as, struct dm_target *ti,
			       struct copy_c *cc)
{
	static const struct dm_arg feature_count = {
		0, 4, "Invalid number of feature args"
	};
	unsigned int logical_sectors =
		bdev_logical_block_size(cc->dev->bdev) >> SECTOR_SHIFT;
	bool have_mode = false, have_max = false;
	enum copy_mode mode;
	unsigned int argc;
	const char *name;
	u64 bytes;
	int r;

	if (!as->argc)
		return 0;

	/* dm_read_arg_group() takes " 2", and 4294967298 as 2: not here. */
	if (copy_parse_u64(as->argv[0], &bytes) || bytes > feature_count.max) {
		ti->error = feature_count.error;
		return -EINVAL;
	}
	r = dm_read_arg_group(&feature_count, as, &argc, &ti->error);
	if (r)
		return r;

	while (argc) {
		name = dm_shift_arg(as);
		argc--;

		if (!strcasecmp(name, "mode")) {
			if (!argc) {
				ti->error = "Feature mode needs an argument";
				return -EINVAL;
			}
			if (copy_parse_mode(dm_shift_arg(as), &mode)) {
				ti->error = "Invalid mode: need auto, offload or emulate";
				return -EINVAL;
			}
			argc--;
			if (have_mode) {
				ti->error = mode == cc->mode ?
					"Duplicate feature mode" :
					"Conflicting mode features";
				return -EINVAL;
			}
			have_mode = true;
			cc->mode = mode;
		} else if (!strcasecmp(name, "max_copy_bytes")) {
			if (!argc) {
				ti->error = "Feature max_copy_bytes needs an argument";
				return -EINVAL;
			}
			if (copy_parse_u64(dm_shift_arg(as), &bytes)) {
				ti->error = "Invalid max_copy_bytes";
				return -EINVAL;
			}
			argc--;
			if (have_max) {
				ti->error = "Duplicate feature max_copy_bytes";
				return -EINVAL;
			}
			have_max = true;
			if (!bytes) {
				ti->error = "max_copy_bytes must not be 0";
				return -EINVAL;
			}
			if (bytes & (SECTOR_SIZE - 1) ||
			    (bytes >> SECTOR_SHIFT) % logical_sectors) {
				ti->error = "max_copy_bytes is not whole logical blocks";
				return -EINVAL;
			}
			if (bytes > (u64)BLK_COPY_MAX_SECTORS << SECTOR_SHIFT) {
				ti->error = "max_copy_bytes is larger than one copy can be";
				return -EINVAL;
			}
			cc->max_copy_sectors = bytes >> SECTOR_SHIFT;
		} else {
			ti->error = "Unrecognised copy feature requested";
			return -EINVAL;
		}
	}

	if (as->argc) {
		ti->error = "Too many arguments";
		return -EINVAL;
	}

	return 0;
}

/*
 * Construct a copy mapping: <dev> <offset> [<#feature args> <arg>...]
 */
static int copy_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as;
	struct copy_c *cc;
	u64 start;
	int r;

	if (argc < 2) {
		ti->error = "Invalid argument count: need <dev> <offset>";
		return -EINVAL;
	}

	cc = kzalloc(sizeof(*cc), GFP_KERNEL);
	if (!cc) {
		ti->error = "Cannot allocate copy context";
		return -ENOMEM;
	}
	cc->mode = COPY_MODE_AUTO;
	atomic_set(&cc->inflight, 0);
	init_waitqueue_head(&cc->drained);

	r = -EINVAL;
	/* kstrtoull() alone would take "+1"; "-1" must not be the end. */
	if (copy_parse_u64(argv[1], &start) || start != (sector_t)start) {
		ti->error = "Invalid device sector";
		goto out_free;
	}
	cc->start = start;

	r = dm_get_device(ti, argv[0], dm_table_get_mode(ti->table), &cc->dev);
	if (r) {
		ti->error = "Device lookup failed";
		goto out_free;
	}

	r = -EINVAL;
	if (cc->start > bdev_nr_sectors(cc->dev->bdev) ||
	    ti->len > bdev_nr_sectors(cc->dev->bdev) - cc->start) {
		ti->error = "Offset and length reach past the end of the device";
		goto out_put_dev;
	}

	as.argc = argc - 2;
	as.argv = argv + 2;
	r = copy_parse_features(&as, ti, cc);
	if (r)
		goto out_put_dev;

	cc->kc = dm_kcopyd_client_create(&dm_kcopyd_throttle);
	if (IS_ERR(cc->kc)) {
		r = PTR_ERR(cc->kc);
		ti->error = "Cannot create kcopyd client";
		goto out_put_dev;
	}
	cc->kc_drain = dm_kcopyd_client_create(NULL);
	if (IS_ERR(cc->kc_drain)) {
		r = PTR_ERR(cc->kc_drain);
		ti->error = "Cannot create kcopyd client";
		goto out_destroy_kc;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->copy_offload_supported = true;
	ti->per_io_data_size = sizeof(struct copy_io);
	ti->private = cc;
	return 0;

out_destroy_kc:
	dm_kcopyd_client_destroy(cc->kc);
out_put_dev:
	dm_put_device(ti, cc->dev);
out_free:
	kfree(cc);
	return r;
}

static void copy_dtr(struct dm_target *ti)
{
	struct copy_c *cc = ti->private;

	/* Waits for the jobs of copies that are still finishing. */
	dm_kcopyd_client_destroy(cc->kc);
	dm_kcopyd_client_destroy(cc->kc_drain);
	dm_put_device(ti, cc->dev);
	kfree(cc);
}

static sector_t copy_map_sector(struct dm_target *ti, sector_t bi_sector)
{
	struct copy_c *cc = ti->private;

	return cc->start + dm_target_offset(ti, bi_sector);
}

static struct gendisk *copy_disk(struct dm_target *ti)
{
	return dm_disk(dm_table_get_md(ti->table));
}

static void copy_end_io(struct copy_io *io, blk_status_t status)
{
	struct copy_c *cc = io->cc;
	u64 bytes = (u64)io->nr_sectors << SECTOR_SHIFT;
	struct bio *bio = io->bio;

	if (status == BLK_STS_NOTSUPP) {
		/* refused: the caller copies it, and it is not counted here */
	} else if (status) {
		atomic64_inc(&cc->errors);
	} else if (io->offloaded == bytes) {
		atomic64_inc(&cc->offloaded_copies);
		atomic64_add(bytes, &cc->offloaded_bytes);
	} else {
		atomic64_inc(&cc->emulated_copies);
		atomic64_add(io->offloaded, &cc->offloaded_bytes);
		atomic64_add(bytes - io->offloaded, &cc->emulated_bytes);
		/* dm-kcopyd read and wrote: the caller counts it as emulated */
		blk_copy_set_emulated(bio);
	}
	/* Before the bio ends: then the target may go away. */
	if (atomic_dec_and_test(&cc->inflight))
		wake_up(&cc->drained);
	bio->bi_status = status;
	bio_endio(bio);
}

static void copy_fua_work(struct work_struct *work)
{
	struct copy_io *io = container_of(work, struct copy_io, work);
	int r = blkdev_issue_flush(io->cc->dev->bdev);

	copy_end_io(io, errno_to_blk_status(r));
}

/* The copy is on the device below; a FUA copy must also be durable there. */
static void copy_done(struct copy_io *io)
{
	if (io->bio->bi_opf & REQ_FUA) {
		INIT_WORK(&io->work, copy_fua_work);
		queue_work(copy_wq, &io->work);
		return;
	}
	copy_end_io(io, BLK_STS_OK);
}

static void copy_emulate_next(struct work_struct *work);

static void copy_kcopyd_done(int read_err, unsigned long write_err,
			     void *context)
{
	struct copy_io *io = context;

	if (read_err || write_err) {
		DMERR_LIMIT("%pg: emulated copy of %llu sectors to %llu failed (%s error)",
			    io->cc->dev->bdev,
			    (unsigned long long)io->nr_sectors,
			    (unsigned long long)io->dst_sector,
			    read_err ? "read" : "write");
		copy_end_io(io, BLK_STS_IOERR);
		return;
	}
	io->emulated += io->piece;
	if (io->emulated == io->nr_sectors) {
		copy_done(io);
		return;
	}
	/*
	 * Not from dm-kcopyd's worker: a new job may wait for one that only
	 * this worker frees.
	 */
	INIT_WORK(&io->work, copy_emulate_next);
	queue_work(copy_wq, &io->work);
}

/*
 * Copy the next piece with dm-kcopyd: all that is left, or under a
 * throttle a piece of it, so that a suspend does not wait for the whole
 * copy at the throttle's pace; once a suspend began, the rest unthrottled.
 */
static void copy_emulate_next(struct work_struct *work)
{
	struct copy_io *io = container_of(work, struct copy_io, work);
	struct copy_c *cc = io->cc;
	struct dm_kcopyd_client *kc = cc->kc;
	struct dm_io_region from, to;

	io->piece = io->nr_sectors - io->emulated;
	if (READ_ONCE(cc->suspending))
		kc = cc->kc_drain;
	else if (READ_ONCE(dm_kcopyd_throttle.throttle) < 100)
		io->piece = min_t(sector_t, io->piece,
				  COPY_THROTTLED_PIECE_SECTORS);

	from.bdev = io->src_bdev;
	from.sector = io->src_sector + io->emulated;
	from.count = io->piece;
	to.bdev = cc->dev->bdev;
	to.sector = io->dst_sector + io->emulated;
	to.count = io->piece;

	/*
	 * dm-copy already offloaded what it could (or was told not to):
	 * dm-kcopyd reads and writes.
	 */
	dm_kcopyd_copy(kc, &from, 1, &to, BIT(DM_KCOPYD_NO_OFFLOAD),
		       copy_kcopyd_done, io);
}

/* Copy with dm-kcopyd from @done sectors on. */
static void copy_emulate(struct copy_io *io, sector_t done)
{
	io->emulated = done;
	copy_emulate_next(&io->work);
}

/*
 * The devices below copied what they could: all of it, or a part from the
 * start up to a chunk they refused or failed (another disk, a boundary of
 * a stacked device, an error). The rest is dm-kcopyd's, or in mode offload
 * the caller's: the bio is refused, and its caller reads and writes it.
 */
static void copy_offload_end(struct work_struct *work)
{
	struct copy_io *io = container_of(work, struct copy_io, work);

	if (io->copied == (u64)io->nr_sectors << SECTOR_SHIFT) {
		if (io->bio->bi_opf & REQ_FUA)
			copy_fua_work(work);
		else
			copy_end_io(io, BLK_STS_OK);
	} else if (io->mode == COPY_MODE_OFFLOAD) {
		copy_end_io(io, BLK_STS_NOTSUPP);
	} else {
		/* Counted as copied by the device only up to where it stopped. */
		io->offloaded = io->copied;
		copy_emulate(io, io->copied >> SECTOR_SHIFT);
	}
}

/*
 * Called by the block layer's copy workers. The bio ends on dm-copy's
 * own workqueue instead: once it has ended, the device and then this
 * module may go away, and module unload waits for that workqueue
 * (destroy_workqueue()), not for code running on the block layer's.
 */
static void copy_offload_done(void *private, const struct blk_copy_result *res)
{
	struct copy_io *io = private;

	io->offloaded = res->offloaded;
	io->copied = res->copied;
	INIT_WORK(&io->work, copy_offload_end);
	queue_work(copy_wq, &io->work);
}

/*
 * Offer the copy to the devices below: blkdev_copy_offload_only() has the
 * disk copy when both ranges end up on one disk that copies, and never
 * reads or writes. Called in process context, may sleep; false when the
 * copy could not be started.
 */
static bool copy_offload(struct copy_io *io)
{
	ssize_t r;

	r = blkdev_copy_offload_only(io->src_bdev,
				     (loff_t)io->src_sector << SECTOR_SHIFT,
				     io->cc->dev->bdev,
				     (loff_t)io->dst_sector << SECTOR_SHIFT,
				     (size_t)io->nr_sectors << SECTOR_SHIFT,
				     copy_offload_done, io, GFP_NOIO);
	return r == -EIOCBQUEUED;
}

/* Start a met copy, on the target's worker: it allocates and may wait. */
static void copy_start(struct work_struct *work)
{
	struct copy_io *io = container_of(work, struct copy_io, work);
	bool offload;

	/*
	 * Also between two devices below, when both copy: two volumes of one
	 * disk pass both halves to it, where they meet.
	 */
	offload = io->mode != COPY_MODE_EMULATE &&
		  bdev_max_copy_sectors(io->src_bdev) &&
		  bdev_max_copy_sectors(io->cc->dev->bdev);
	if (offload && copy_offload(io))
		return;
	if (io->mode == COPY_MODE_OFFLOAD)
		/* The caller copies it instead, by reading and writing. */
		copy_end_io(io, BLK_STS_NOTSUPP);
	else
		copy_emulate(io, 0);
}

/*
 * The destination half, met with its source in a copy target of this
 * table (the two stay in flight until the copy is over, so neither target
 * can go away meanwhile): copy from there to here.
 */
static void copy_serve(struct bio *bio)
{
	struct dm_target *ti = blk_copy_dst_priv(bio);
	struct dm_target *src_ti = blk_copy_src_priv(bio);
	struct copy_c *cc = ti->private, *src = src_ti->private;
	struct copy_io *io = dm_per_bio_data(bio, sizeof(*io));
	struct block_device *dst_bdev = cc->dev->bdev;

	io->cc = cc;
	io->bio = bio;
	io->src_bdev = src->dev->bdev;
	io->src_sector = copy_map_sector(src_ti, blk_copy_src_sector(bio));
	io->dst_sector = copy_map_sector(ti, bio->bi_iter.bi_sector);
	io->nr_sectors = bio_sectors(bio);
	io->mode = READ_ONCE(cc->mode);
	io->offloaded = 0;

	if (io->src_bdev->bd_disk == dst_bdev->bd_disk) {
		sector_t in = io->src_sector + io->src_bdev->bd_start_sect;
		sector_t out = io->dst_sector + dst_bdev->bd_start_sect;

		/* Overlapping ranges have no defined result, whoever copies. */
		if (in < out + io->nr_sectors && out < in + io->nr_sectors) {
			bio->bi_status = BLK_STS_INVAL;
			bio_endio(bio);
			return;
		}
	}

	atomic_inc(&cc->inflight);
	INIT_WORK(&io->work, copy_start);
	queue_work(copy_wq, &io->work);
}

static int copy_map(struct dm_target *ti, struct bio *bio)
{
	struct copy_c *cc = ti->private;

	if (op_is_copy(bio->bi_opf)) {
		/*
		 * Both halves meet in this table, whichever of its copy
		 * targets each landed in; the first waits for the other.
		 */
		bio = blk_copy_meet(bio, ti->table, copy_disk(ti)->diskseq, ti);
		if (bio)
			copy_serve(bio);
		return DM_MAPIO_SUBMITTED;
	}

	bio_set_dev(bio, cc->dev->bdev);
	bio->bi_iter.bi_sector = copy_map_sector(ti, bio->bi_iter.bi_sector);

	return DM_MAPIO_REMAPPED;
}

static void copy_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct copy_c *cc = ti->private;

	/*
	 * The target copies by itself, whatever the device below can do:
	 * raise the limit stacked from it.
	 */
	if (cc->max_copy_sectors)
		limits->max_copy_hw_sectors = cc->max_copy_sectors;
	else
		limits->max_copy_hw_sectors =
			max(limits->max_copy_hw_sectors,
			    COPY_DEFAULT_MAX_BYTES >> SECTOR_SHIFT);
}

/* The copies in flight finish unthrottled: a suspend waits for them. */
static void copy_presuspend(struct dm_target *ti)
{
	struct copy_c *cc = ti->private;

	WRITE_ONCE(cc->suspending, true);
}

static void copy_resume(struct dm_target *ti)
{
	struct copy_c *cc = ti->private;

	WRITE_ONCE(cc->suspending, false);
}

static void copy_postsuspend(struct dm_target *ti)
{
	struct copy_c *cc = ti->private;

	/*
	 * dm waited for the copies' bios; what they left in dm-kcopyd (its
	 * jobs end just after their bio) must be gone before a reload.
	 */
	wait_event(cc->drained, !atomic_read(&cc->inflight));
	dm_kcopyd_client_flush(cc->kc);
	dm_kcopyd_client_flush(cc->kc_drain);
}

static void copy_status(struct dm_target *ti, status_type_t type,
			unsigned int status_flags, char *result,
			unsigned int maxlen)
{
	struct copy_c *cc = ti->private;
	enum copy_mode mode = READ_ONCE(cc->mode);
	unsigned int nr_features;
	size_t sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%s %lld %lld %lld %lld %lld %d", copy_mode_names[mode],
		       (long long)atomic64_read(&cc->offloaded_copies),
		       (long long)atomic64_read(&cc->offloaded_bytes),
		       (long long)atomic64_read(&cc->emulated_copies),
		       (long long)atomic64_read(&cc->emulated_bytes),
		       (long long)atomic64_read(&cc->errors),
		       atomic_read(&cc->inflight));
		break;

	case STATUSTYPE_TABLE:
		DMEMIT("%s %llu", cc->dev->name, (unsigned long long)cc->start);
		nr_features = (mode != COPY_MODE_AUTO ? 2 : 0) +
			(cc->max_copy_sectors ? 2 : 0);
		if (nr_features)
			DMEMIT(" %u", nr_features);
		if (mode != COPY_MODE_AUTO)
			DMEMIT(" mode %s", copy_mode_names[mode]);
		if (cc->max_copy_sectors)
			DMEMIT(" max_copy_bytes %llu",
			       (unsigned long long)cc->max_copy_sectors <<
			       SECTOR_SHIFT);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,start=%llu,mode=%s,max_copy_bytes=%llu;",
		       cc->dev->name, (unsigned long long)cc->start,
		       copy_mode_names[mode],
		       (unsigned long long)cc->max_copy_sectors << SECTOR_SHIFT);
		break;
	}
}

static int copy_message(struct dm_target *ti, unsigned int argc, char **argv,
			char *result, unsigned int maxlen)
{
	struct copy_c *cc = ti->private;
	enum copy_mode mode;

	if (argc == 2 && !strcasecmp(argv[0], "mode")) {
		if (copy_parse_mode(argv[1], &mode)) {
			DMERR("%s: invalid mode '%s': need auto, offload or emulate",
			      dm_device_name(dm_table_get_md(ti->table)),
			      argv[1]);
			return -EINVAL;
		}
		WRITE_ONCE(cc->mode, mode);
		return 0;
	}

	if (argc == 2 && !strcasecmp(argv[0], "stats") &&
	    !strcasecmp(argv[1], "reset")) {
		atomic64_set(&cc->offloaded_copies, 0);
		atomic64_set(&cc->offloaded_bytes, 0);
		atomic64_set(&cc->emulated_copies, 0);
		atomic64_set(&cc->emulated_bytes, 0);
		atomic64_set(&cc->errors, 0);
		return 0;
	}

	DMERR("%s: unsupported message '%s%s%s': need 'mode <mode>' or 'stats reset'",
	      dm_device_name(dm_table_get_md(ti->table)),
	      argc ? argv[0] : "", argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
	return -EINVAL;
}

static int copy_prepare_ioctl(struct dm_target *ti, struct block_device **bdev)
{
	struct copy_c *cc = ti->private;
	struct dm_dev *dev = cc->dev;

	*bdev = dev->bdev;

	/* Only pass ioctls through if the device sizes match exactly. */
	if (cc->start || ti->len != bdev_nr_sectors(dev->bdev))
		return 1;
	return 0;
}

static int copy_iterate_devices(struct dm_target *ti,
				iterate_devices_callout_fn fn, void *data)
{
	struct copy_c *cc = ti->private;

	return fn(ti, cc->dev, cc->start, ti->len, data);
}

static struct target_type copy_target = {
	.name = "copy",
	.version = {1, 1, 0},
	.features = DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = copy_ctr,
	.dtr = copy_dtr,
	.map = copy_map,
	.presuspend = copy_presuspend,
	.presuspend_undo = copy_resume,
	.postsuspend = copy_postsuspend,
	.resume = copy_resume,
	.status = copy_status,
	.message = copy_message,
	.prepare_ioctl = copy_prepare_ioctl,
	.iterate_devices = copy_iterate_devices,
	.io_hints = copy_io_hints,
};

static int __init dm_copy_init(void)
{
	int r;

	copy_wq = alloc_workqueue("dm-copy", WQ_MEM_RECLAIM, 0);
	if (!copy_wq)
		return -ENOMEM;
	r = dm_register_target(&copy_target);
	if (r)
		destroy_workqueue(copy_wq);
	return r;
}

static void __exit dm_copy_exit(void)
{
	dm_unregister_target(&copy_target);
	destroy_workqueue(copy_wq);
}

module_init(dm_copy_init);
module_exit(dm_copy_exit);

MODULE_DESCRIPTION(DM_NAME " target mapping like linear and serving copy offload");
MODULE_AUTHOR("dm-copy developers");
MODULE_LICENSE("GPL");
