// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the copy target's constructor, features, status
 * and messages: dm-copy/dm-copy.c itself, compiled against the kernel
 * shim in shim/. An input is
 *
 *   byte 0      the logical block size of the device below (512 << (b & 3))
 *   byte 1      the target's length (one of target_lens[])
 *   then text   the first line the table parameters after "copy", each
 *               further line a message, split into words as
 *               dm_split_args() does
 *
 * and the device below, "fuzz0" (also "/dev/fuzz0" or "253:0"), has
 * DEVICE_SECTORS sectors. What is checked besides the sanitizers:
 *
 *   - a refused table sets ti->error and leaks nothing;
 *   - an accepted one keeps the mapping inside the device and a
 *     max_copy_bytes of whole logical blocks one copy can carry;
 *   - its TABLE status line constructs the same target again;
 *   - libdmcopy's dmcopy_parse_copy_table() refuses what the constructor
 *     refuses for a reason that does not depend on the device, and takes
 *     and reads the same way what it accepts (for lines it splits as dm
 *     does: no backslash or other white space than space, tab and
 *     newline, shorter than its 1024 bytes); it reads every TABLE and
 *     INFO line the target prints;
 *   - a refused message changes nothing.
 */
#include "../../dm-copy/dm-copy.c"

#include <assert.h>

#include "libdmcopy.h"

#define DEVICE_SECTORS	(1ULL << 21)
#define MAX_WORDS	64
#define MAX_TEXT	4096

static const sector_t target_lens[] = {
	1, 8, 2048, DEVICE_SECTORS - 1, DEVICE_SECTORS, DEVICE_SECTORS + 1,
};

static struct gendisk fuzz_disk = { .diskseq = 1 };
static struct block_device fuzz_bdev = {
	.bd_disk = &fuzz_disk,
	.nr_sectors = DEVICE_SECTORS,
	.logical_block_size = 512,
	.max_copy_sectors = 2048,
};
static int devices_held;

int shim_dm_get_device(struct dm_target *ti, const char *path,
		       blk_mode_t mode, struct dm_dev **result)
{
	struct dm_dev *d;

	(void)ti;
	if (strcmp(path, "fuzz0") && strcmp(path, "/dev/fuzz0") &&
	    strcmp(path, "253:0"))
		return -ENODEV;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->bdev = &fuzz_bdev;
	d->mode = mode;
	strcpy(d->name, "253:0");	/* dm names devices by number */
	devices_held++;
	*result = d;
	return 0;
}

void shim_dm_put_device(struct dm_target *ti, struct dm_dev *d)
{
	(void)ti;
	devices_held--;
	free(d);
}

void shim_log(const char *fmt, ...)
{
	(void)fmt;
}

/* drivers/md/dm-table.c dm_split_args(): words at white space, '\' quotes. */
static int split_args(char *input, char **argv)
{
	char *start, *end = input, *out;
	int argc = 0;

	for (;;) {
		start = end;
		while (isspace((unsigned char)*start))
			start++;
		if (!*start)
			return argc;
		end = out = start;
		while (*end) {
			if (*end == '\\' && end[1]) {
				*out++ = end[1];
				end += 2;
				continue;
			}
			if (isspace((unsigned char)*end))
				break;
			*out++ = *end++;
		}
		if (argc == MAX_WORDS)
			return -1;
		if (*end)
			end++;
		*out = '\0';
		argv[argc++] = start;
	}
}

/* What the constructor refuses for the device's sake, not the line's. */
static bool device_error(const char *error)
{
	return !strcmp(error, "Device lookup failed") ||
	       !strcmp(error, "Offset and length reach past the end of the device") ||
	       !strcmp(error, "max_copy_bytes is not whole logical blocks");
}

/* The line has only what libdmcopy splits like the kernel. */
static bool plain_line(const char *s)
{
	if (strlen(s) >= 1024)
		return false;
	for (; *s; s++)
		if (*s == '\\' || (isspace((unsigned char)*s) && *s != ' ' &&
				   *s != '\t' && *s != '\n'))
			return false;
	return true;
}

static struct copy_c *construct(struct dm_target *ti, const char *line)
{
	char buf[MAX_TEXT], *argv[MAX_WORDS];
	int argc;

	snprintf(buf, sizeof(buf), "%s", line);
	argc = split_args(buf, argv);
	if (argc < 0)
		return NULL;
	ti->error = NULL;
	ti->private = NULL;
	if (copy_ctr(ti, (unsigned int)argc, argv)) {
		assert(ti->error);
		return NULL;
	}
	return ti->private;
}

static void check_table(struct dm_target *ti, struct copy_c *cc,
			const char *line, bool plain)
{
	struct dmcopy_copy_table t;
	char status[512];
	struct dm_target again = { .len = ti->len, .type = &copy_target };
	struct copy_c *cc2;
	unsigned int lbs = fuzz_bdev.logical_block_size >> SECTOR_SHIFT;

	/* the mapping stays inside the device, copies in whole blocks */
	assert(cc->start <= DEVICE_SECTORS &&
	       ti->len <= DEVICE_SECTORS - cc->start);
	assert(cc->max_copy_sectors % lbs == 0);
	assert(cc->max_copy_sectors <= BLK_COPY_MAX_SECTORS);
	assert(cc->mode <= COPY_MODE_EMULATE);

	/* libdmcopy takes the line and reads it as the kernel did */
	if (plain) {
		assert(!dmcopy_parse_copy_table(NULL, line, &t));
		assert(t.offset == cc->start);
		assert((int)t.mode == (int)cc->mode);
		assert(t.max_copy_bytes ==
		       (u64)cc->max_copy_sectors << SECTOR_SHIFT);
	}

	/* the TABLE line builds the same target, and libdmcopy reads it */
	copy_status(ti, STATUSTYPE_TABLE, 0, status, sizeof(status));
	cc2 = construct(&again, status);
	assert(cc2);
	assert(cc2->start == cc->start && cc2->mode == cc->mode &&
	       cc2->max_copy_sectors == cc->max_copy_sectors);
	copy_dtr(&again);
	assert(!dmcopy_parse_copy_table(NULL, status, &t));
	assert(t.offset == cc->start && (int)t.mode == (int)cc->mode);
}

static void check_info(struct dm_target *ti)
{
	struct dmcopy_copy_status st = { .size = sizeof(st) };
	char status[512];

	copy_status(ti, STATUSTYPE_INFO, 0, status, sizeof(status));
	assert(!dmcopy_parse_copy_status(NULL, status, &st));
	assert((int)st.mode == (int)((struct copy_c *)ti->private)->mode);
}

static void send_message(struct dm_target *ti, char *line)
{
	struct copy_c *cc = ti->private, before = *cc;
	char *argv[MAX_WORDS], result[64];
	int argc, r;

	argc = split_args(line, argv);
	if (argc < 0)
		return;
	r = copy_message(ti, (unsigned int)argc, argv, result, sizeof(result));
	assert(r == 0 || r == -EINVAL);
	if (r)
		assert(!memcmp(&before, cc, sizeof(before)));
	check_info(ti);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[MAX_TEXT], *line, *next;
	struct dm_target ti = { .type = &copy_target };
	struct dmcopy_copy_table t;
	struct copy_c *cc;
	bool plain, lib_ok;

	if (size < 2 || size - 2 >= sizeof(text))
		return 0;
	fuzz_bdev.logical_block_size = 512U << (data[0] & 3);
	ti.len = target_lens[data[1] % ARRAY_SIZE(target_lens)];
	memcpy(text, data + 2, size - 2);
	text[size - 2] = '\0';
	if (strlen(text) != size - 2)
		return 0;	/* a table line has no NUL */

	line = text;
	next = strchr(line, '\n');
	if (next)
		*next++ = '\0';
	plain = plain_line(line) && fuzz_bdev.logical_block_size == 512;
	lib_ok = !dmcopy_parse_copy_table(NULL, line, &t);

	cc = construct(&ti, line);
	if (!cc) {
		assert(devices_held == 0);
		/* refused for the line's sake: libdmcopy refuses it too */
		if (plain && ti.error && !device_error(ti.error))
			assert(!lib_ok);
		return 0;
	}
	check_table(&ti, cc, line, plain);
	check_info(&ti);
	while (next) {
		line = next;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		send_message(&ti, line);
	}
	copy_dtr(&ti);
	assert(devices_held == 0);
	return 0;
}
