// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-copy: a device-mapper target that maps like dm-linear and, with the
 * block-layer copy offload series applied, serves copy requests by
 * offloading them to the underlying device or emulating them with
 * dm-kcopyd.
 *
 * Table line:
 *   <start> <len> copy <dev> <offset> [<#feature args> <arg>...]
 *
 * This is the mapping half; copy handling arrives with the kernel series
 * it depends on. No feature argument is defined yet, so any is refused.
 */

#include <linux/device-mapper.h>
#include <linux/module.h>
#include <linux/init.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/slab.h>
#include <linux/ctype.h>

#define DM_MSG_PREFIX "copy"

struct copy_c {
	struct dm_dev *dev;
	sector_t start;
};

static int copy_parse_features(struct dm_arg_set *as, struct dm_target *ti)
{
	static const struct dm_arg feature_count = {
		0, 16, "Invalid number of feature args"
	};
	unsigned int argc;
	int r;

	if (!as->argc)
		return 0;

	r = dm_read_arg_group(&feature_count, as, &argc, &ti->error);
	if (r)
		return r;

	if (argc) {
		ti->error = "Unknown feature argument";
		return -EINVAL;
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
	unsigned long long start;
	char dummy;
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

	r = -EINVAL;
	/* %llu would take "-1" as the last sector of a huge device. */
	if (!isdigit(argv[1][0]) ||
	    sscanf(argv[1], "%llu%c", &start, &dummy) != 1 ||
	    start != (sector_t)start) {
		ti->error = "Invalid device sector";
		goto bad;
	}
	cc->start = start;

	as.argc = argc - 2;
	as.argv = argv + 2;
	r = copy_parse_features(&as, ti);
	if (r)
		goto bad;

	r = dm_get_device(ti, argv[0], dm_table_get_mode(ti->table), &cc->dev);
	if (r) {
		ti->error = "Device lookup failed";
		goto bad;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->private = cc;
	return 0;

bad:
	kfree(cc);
	return r;
}

static void copy_dtr(struct dm_target *ti)
{
	struct copy_c *cc = ti->private;

	dm_put_device(ti, cc->dev);
	kfree(cc);
}

static sector_t copy_map_sector(struct dm_target *ti, sector_t bi_sector)
{
	struct copy_c *cc = ti->private;

	return cc->start + dm_target_offset(ti, bi_sector);
}

static int copy_map(struct dm_target *ti, struct bio *bio)
{
	struct copy_c *cc = ti->private;

	bio_set_dev(bio, cc->dev->bdev);
	bio->bi_iter.bi_sector = copy_map_sector(ti, bio->bi_iter.bi_sector);

	return DM_MAPIO_REMAPPED;
}

static void copy_status(struct dm_target *ti, status_type_t type,
			unsigned int status_flags, char *result,
			unsigned int maxlen)
{
	struct copy_c *cc = ti->private;
	size_t sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		result[0] = '\0';
		break;

	case STATUSTYPE_TABLE:
		DMEMIT("%s %llu", cc->dev->name, (unsigned long long)cc->start);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,start=%llu;", cc->dev->name,
		       (unsigned long long)cc->start);
		break;
	}
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
	.version = {0, 1, 0},
	.features = DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = copy_ctr,
	.dtr = copy_dtr,
	.map = copy_map,
	.status = copy_status,
	.prepare_ioctl = copy_prepare_ioctl,
	.iterate_devices = copy_iterate_devices,
};

static int __init dm_copy_init(void)
{
	return dm_register_target(&copy_target);
}

static void __exit dm_copy_exit(void)
{
	dm_unregister_target(&copy_target);
}

module_init(dm_copy_init);
module_exit(dm_copy_exit);

MODULE_DESCRIPTION(DM_NAME " target mapping like linear and serving copy offload");
MODULE_AUTHOR("dm-copy developers");
MODULE_LICENSE("GPL");
