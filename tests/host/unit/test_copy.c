// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The copy engine's decisions: SRC[:OFFSET] specs, the length that fits,
 * overlap on one disk, alignment, the qemu-img progress line, the report
 * and cp --debug's word; then dmcopy_copy() itself between regular files
 * (chunks, the user space loop, a stop between chunks).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "libdmcopy.h"

static int setup(void **state)
{
	*state = dmcopy_new(FIXTURE_SYSFS);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	dmcopy_free(*state);
	return 0;
}

static void expect_spec(struct dmcopy_ctx *ctx, const char *spec,
			const char *path, uint64_t offset)
{
	char got[DMCOPY_PATH_LEN];
	uint64_t off = 12345;

	assert_int_equal(dmcopy_parse_copy_spec(ctx, spec, got, sizeof(got), &off), 0);
	assert_string_equal(got, path);
	assert_true(off == offset);
}

static void expect_bad_spec(struct dmcopy_ctx *ctx, const char *spec, int err,
			    const char *message)
{
	char got[DMCOPY_PATH_LEN];
	uint64_t off = 12345;

	assert_int_equal(dmcopy_parse_copy_spec(ctx, spec, got, sizeof(got), &off), err);
	assert_true(off == 12345);
	assert_string_equal(dmcopy_last_error(ctx), message);
}

static void test_spec(void **state)
{
	struct dmcopy_ctx *ctx = *state;
	char small[8];
	uint64_t off;

	expect_spec(ctx, "/dev/nullb0", "/dev/nullb0", 0);
	expect_spec(ctx, "/dev/nullb0:0", "/dev/nullb0", 0);
	expect_spec(ctx, "/dev/nullb0:4096", "/dev/nullb0", 4096);
	expect_spec(ctx, "/dev/nullb0:64M", "/dev/nullb0", 64ULL << 20);
	expect_spec(ctx, "/dev/vda:1GiB", "/dev/vda", 1ULL << 30);
	expect_spec(ctx, "image.raw", "image.raw", 0);
	/* what follows the last ':' is no size: all of it is the path */
	expect_spec(ctx, "/dev/disk/by-path/pci-0000:00:04.0",
		    "/dev/disk/by-path/pci-0000:00:04.0", 0);
	expect_spec(ctx, "/dev/disk/by-path/pci-0000:00:04.0:8K",
		    "/dev/disk/by-path/pci-0000:00:04.0", 8192);
	/* a path ending in ':<digits>' needs an explicit offset */
	expect_spec(ctx, "a:04:0", "a:04", 0);
	expect_spec(ctx, "x:1.5G", "x:1.5G", 0);

	expect_bad_spec(ctx, "", -EINVAL, "empty path");
	expect_bad_spec(ctx, NULL, -EINVAL, "empty path");
	expect_bad_spec(ctx, "/dev/nullb0:", -EINVAL,
			"'/dev/nullb0:': empty offset after ':'");
	expect_bad_spec(ctx, ":4096", -EINVAL, "':4096': empty path");
	expect_bad_spec(ctx, "/dev/x:99999999999T", -ERANGE,
			"'/dev/x:99999999999T': offset too large");
	assert_int_equal(dmcopy_parse_copy_spec(ctx, "/dev/nullb0", small,
						sizeof(small), &off), -ENAMETOOLONG);
}

static void test_overlap(void **state)
{
	(void)state;
	assert_false(dmcopy_ranges_overlap("nullb0", 0, "nullb0", 4096, 4096));
	assert_true(dmcopy_ranges_overlap("nullb0", 0, "nullb0", 4095, 4096));
	assert_true(dmcopy_ranges_overlap("nullb0", 4095, "nullb0", 0, 4096));
	assert_false(dmcopy_ranges_overlap("nullb0", 8192, "nullb0", 0, 8192));
	assert_true(dmcopy_ranges_overlap("nullb0", 0, "nullb0", 0, 512));
	/* other disks, length 0 */
	assert_false(dmcopy_ranges_overlap("nullb0", 0, "nullb1", 0, 4096));
	assert_false(dmcopy_ranges_overlap("nullb0", 0, "nullb0", 0, 0));
	/* offsets near the top do not wrap */
	assert_false(dmcopy_ranges_overlap("d", UINT64_MAX - 10, "d", 0, 11));
	assert_true(dmcopy_ranges_overlap("d", UINT64_MAX - 10, "d", UINT64_MAX - 20, 11));
}

/* A disk and a partition of it; a regular file; a 4K-sector disk. */
static const struct dmcopy_copy_end disk = {
	.path = "/dev/nvme0n1", .id = "nvme0n1", .is_blockdev = true,
	.start = 0, .size = 1ULL << 30, .align = 512,
};
static const struct dmcopy_copy_end part = {
	.path = "/dev/nvme0n1p1", .id = "nvme0n1", .is_blockdev = true,
	.start = 1ULL << 20, .size = 512ULL << 20, .align = 512,
};
static const struct dmcopy_copy_end file = {
	.path = "out.img", .id = "file 254:0:12", .size = 1000, .align = 1,
	.grows = true,
};
static const struct dmcopy_copy_end four_k = {
	.path = "/dev/sda", .id = "sda", .is_blockdev = true,
	.size = 64ULL << 20, .align = 4096,
};

static void expect_plan(struct dmcopy_ctx *ctx, const struct dmcopy_copy_end *s,
			uint64_t soff, const struct dmcopy_copy_end *d,
			uint64_t doff, uint64_t len, uint64_t want)
{
	assert_int_equal(dmcopy_copy_plan(ctx, s, soff, d, doff, &len), 0);
	assert_true(len == want);
}

static void expect_refused(struct dmcopy_ctx *ctx, const struct dmcopy_copy_end *s,
			   uint64_t soff, const struct dmcopy_copy_end *d,
			   uint64_t doff, uint64_t len, const char *message)
{
	uint64_t n = len;

	assert_int_equal(dmcopy_copy_plan(ctx, s, soff, d, doff, &n), -EINVAL);
	assert_true(n == len);
	assert_string_equal(dmcopy_last_error(ctx), message);
}

static void test_length(void **state)
{
	struct dmcopy_ctx *ctx = *state;

	/* what fits in both: the smaller rest */
	expect_plan(ctx, &disk, 0, &four_k, 0, DMCOPY_LENGTH_FIT, 64ULL << 20);
	expect_plan(ctx, &four_k, 4096, &disk, 0, DMCOPY_LENGTH_FIT,
		    (64ULL << 20) - 4096);
	expect_plan(ctx, &disk, 0, &disk, 1ULL << 29, DMCOPY_LENGTH_FIT, 1ULL << 29);
	/* a regular file destination grows: the source's rest */
	expect_plan(ctx, &part, 4096, &file, 0, DMCOPY_LENGTH_FIT,
		    (512ULL << 20) - 4096);
	expect_plan(ctx, &part, 0, &file, 1ULL << 20, 8192, 8192);
	/* an explicit length that fits */
	expect_plan(ctx, &disk, 0, &four_k, 0, 64ULL << 20, 64ULL << 20);

	expect_refused(ctx, &disk, 1ULL << 30, &four_k, 0, DMCOPY_LENGTH_FIT,
		       "/dev/nvme0n1: offset 1073741824 is past its end (1073741824 bytes)");
	expect_refused(ctx, &disk, 0, &four_k, 64ULL << 20, 4096,
		       "/dev/sda: offset 67108864 is past its end (67108864 bytes)");
	expect_refused(ctx, &disk, 0, &four_k, 4096, 64ULL << 20,
		       "/dev/sda: 67108864 bytes at 4096 run past its end (67108864 bytes)");
	expect_refused(ctx, &four_k, 0, &disk, 0, 128ULL << 20,
		       "/dev/sda: 134217728 bytes at 0 run past its end (67108864 bytes)");
	expect_refused(ctx, &disk, 0, &four_k, 0, 0, "nothing to copy: length 0");
	/* past what the kernel takes (loff_t), even into a growing file */
	expect_plan(ctx, &file, 0, &file, INT64_MAX - 4096, 4096, 4096);
	expect_refused(ctx, &part, 0, &file, (uint64_t)INT64_MAX + 1, 4096,
		       "out.img: offset 9223372036854775808 is past what the kernel takes (9223372036854775807)");
	expect_refused(ctx, &part, 0, &file, INT64_MAX - 4095, 4096,
		       "out.img: 4096 bytes at 9223372036854771712 end past what the kernel takes (9223372036854775807)");
	expect_refused(ctx, &disk, (uint64_t)INT64_MAX + 512, &four_k, 0, 512,
		       "/dev/nvme0n1: offset 9223372036854776319 is past what the kernel takes (9223372036854775807)");
}

static void test_overlap_plan(void **state)
{
	struct dmcopy_ctx *ctx = *state;

	expect_refused(ctx, &disk, 0, &disk, 4096, 8192,
		       "source and destination overlap on nvme0n1");
	/* the partition starts 1 MiB into its disk: offsets are absolute */
	expect_refused(ctx, &disk, 1ULL << 20, &part, 0, 4096,
		       "source and destination overlap on nvme0n1");
	expect_refused(ctx, &part, 0, &disk, (1ULL << 20) + 2048, 4096,
		       "source and destination overlap on nvme0n1");
	expect_plan(ctx, &disk, 0, &part, 0, 1ULL << 20, 1ULL << 20);
	expect_plan(ctx, &part, 0, &disk, 2ULL << 20, 1ULL << 20, 1ULL << 20);
	/* one file with itself */
	expect_refused(ctx, &file, 0, &file, 100, 200,
		       "source and destination overlap on file 254:0:12");
	expect_plan(ctx, &file, 0, &file, 200, 200, 200);
}

static void test_alignment(void **state)
{
	struct dmcopy_ctx *ctx = *state;

	expect_refused(ctx, &disk, 100, &four_k, 0, 4096,
		       "source offset 100 is not a multiple of the 4096-byte logical block size of /dev/sda (O_DIRECT)");
	expect_refused(ctx, &disk, 512, &four_k, 0, 4096,
		       "source offset 512 is not a multiple of the 4096-byte logical block size of /dev/sda (O_DIRECT)");
	expect_refused(ctx, &disk, 0, &disk, 1ULL << 20, 1000,
		       "length 1000 is not a multiple of the 512-byte logical block size of /dev/nvme0n1 (O_DIRECT)");
	expect_refused(ctx, &file, 0, &disk, 1000, 512,
		       "destination offset 1000 is not a multiple of the 512-byte logical block size of /dev/nvme0n1 (O_DIRECT)");
	/* a file source is read through the page cache: its size decides */
	expect_refused(ctx, &file, 0, &disk, 0, DMCOPY_LENGTH_FIT,
		       "length 1000 is not a multiple of the 512-byte logical block size of /dev/nvme0n1 (O_DIRECT)");
	/* two regular files: no alignment */
	expect_plan(ctx, &file, 1, &file, 500, 3, 3);
}

static void expect_progress(uint64_t done, uint64_t total, const char *line)
{
	char buf[64];

	assert_int_equal(dmcopy_format_progress(done, total, buf, sizeof(buf)),
			 (int)strlen(line));
	assert_string_equal(buf, line);
}

static void test_progress(void **state)
{
	char tiny[8];

	(void)state;
	expect_progress(0, 1000, "    (0.00/100%)");
	expect_progress(1, 3, "    (33.33/100%)");
	expect_progress(2, 3, "    (66.66/100%)");
	expect_progress(999999, 1000000, "    (99.99/100%)");
	/* 100.00 only when all is done */
	expect_progress(UINT64_MAX - 1, UINT64_MAX, "    (99.99/100%)");
	expect_progress(1000, 1000, "    (100.00/100%)");
	expect_progress(0, 0, "    (100.00/100%)");
	expect_progress(1ULL << 40, 4ULL << 40, "    (25.00/100%)");
	assert_int_equal(dmcopy_format_progress(1, 2, tiny, sizeof(tiny)), -ENOSPC);
}

static void expect_report(const struct dmcopy_copy_report *rep, const char *line)
{
	char buf[256];

	assert_int_equal(dmcopy_format_copy_report(rep, buf, sizeof(buf)),
			 (int)strlen(line));
	assert_string_equal(buf, line);
}

static void test_report(void **state)
{
	struct dmcopy_copy_report rep = {
		.size = sizeof(rep),
		.length = 8388608, .copied = 8388608, .offloaded = 8388608,
		.counted = true,
	};
	char tiny[16];

	(void)state;
	expect_report(&rep, "copied 8388608 bytes: 8388608 offloaded, 0 emulated in the kernel, 0 in user space");
	assert_string_equal(dmcopy_copy_offload(&rep), "yes");

	rep.offloaded = 0;
	rep.emulated = 8388608;
	expect_report(&rep, "copied 8388608 bytes: 0 offloaded, 8388608 emulated in the kernel, 0 in user space");
	assert_string_equal(dmcopy_copy_offload(&rep), "no");

	rep.emulated = 0;
	rep.userspace = 8388608;
	rep.refused = true;
	rep.refused_errno = EINVAL;
	expect_report(&rep, "copied 8388608 bytes: 0 offloaded, 0 emulated in the kernel, 8388608 in user space");
	assert_string_equal(dmcopy_copy_offload(&rep), "unsupported");
	rep.avoided = true;
	assert_string_equal(dmcopy_copy_offload(&rep), "avoided");

	rep = (struct dmcopy_copy_report){
		.size = sizeof(rep), .length = 8388608, .copied = 4194304, .offloaded = 1048576,
		.emulated = 3145728, .interrupted = true,
	};
	expect_report(&rep, "interrupted: the first 4194304 of 8388608 bytes are copied: 1048576 offloaded, 3145728 emulated in the kernel, 0 in user space");
	assert_string_equal(dmcopy_copy_offload(&rep), "yes");
	rep.interrupted = false;
	expect_report(&rep, "stopped: the first 4194304 of 8388608 bytes are copied: 1048576 offloaded, 3145728 emulated in the kernel, 0 in user space");
	assert_int_equal(dmcopy_format_copy_report(&rep, tiny, sizeof(tiny)), -ENOSPC);
	rep.size = 0;
	assert_int_equal(dmcopy_format_copy_report(&rep, tiny, sizeof(tiny)), -EINVAL);
}

static void test_refusal(void **state)
{
	struct dmcopy_copy_end old_disk = disk, old_four_k = four_k;
	struct dmcopy_copy_end new_disk = disk, new_four_k = four_k;

	(void)state;
	new_disk.kernel_copy = true;
	new_four_k.kernel_copy = true;
	/* a block device and a regular file: refused, with or without copy */
	assert_string_equal(dmcopy_copy_refusal(EINVAL, &new_disk, &file),
			    "the kernel does not copy between a block device and a regular file: copied in user space");
	/* two block devices: 6.12 without the series takes only files */
	assert_string_equal(dmcopy_copy_refusal(EINVAL, &old_disk, &old_four_k),
			    "kernel without copy offload: copies go through user space");
	/* with copy offload, EINVAL is a real error the plan missed */
	assert_null(dmcopy_copy_refusal(EINVAL, &new_disk, &new_four_k));
	assert_non_null(dmcopy_copy_refusal(EXDEV, &new_disk, &new_four_k));
	assert_non_null(dmcopy_copy_refusal(EOPNOTSUPP, &file, &file));
	assert_null(dmcopy_copy_refusal(EIO, &old_disk, &old_four_k));
	assert_null(dmcopy_copy_refusal(ENOSPC, &new_disk, &file));
	/* two regular files: EINVAL is an error */
	assert_null(dmcopy_copy_refusal(EINVAL, &file, &file));
}

/* ------------------------------------------- the engine on regular files */

struct files {
	char dir[64], src[96], dst[96];
	unsigned char data[65536];
};

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static size_t read_file(const char *path, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len);
	close(fd);
	assert_true(n >= 0);
	return (size_t)n;
}

static int setup_files(void **state)
{
	struct files *f = calloc(1, sizeof(*f));
	size_t i;

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_copy.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->src, sizeof(f->src), "%s/src", f->dir);
	snprintf(f->dst, sizeof(f->dst), "%s/dst", f->dir);
	for (i = 0; i < sizeof(f->data); i++)
		f->data[i] = (unsigned char)(i * 7 + i / 251);
	write_file(f->src, f->data, sizeof(f->data));
	write_file(f->dst, "", 0);
	*state = f;
	return 0;
}

static int teardown_files(void **state)
{
	struct files *f = *state;

	unlink(f->src);
	unlink(f->dst);
	rmdir(f->dir);
	free(f);
	return 0;
}

struct stopper {
	volatile sig_atomic_t stop;
	uint64_t stop_at;
	unsigned int calls;
	uint64_t last_done, last_total;
};

static void stop_after(uint64_t done, uint64_t total, void *data)
{
	struct stopper *s = data;

	s->calls++;
	s->last_done = done;
	s->last_total = total;
	if (s->stop_at && done >= s->stop_at)
		s->stop = 1;
}

static void test_engine(void **state)
{
	struct files *f = *state;
	struct dmcopy_ctx *ctx = dmcopy_new(NULL);
	struct stopper s = { .stop_at = 0 };
	struct dmcopy_copy_opts o = {
		.size = sizeof(o), .chunk_bytes = 16384, .progress = stop_after, .progress_data = &s,
		.stop = &s.stop,
	};
	struct dmcopy_copy_report rep = { .size = sizeof(rep) };
	/* what a program built against a later libdmcopy.h passes */
	struct {
		struct dmcopy_copy_report rep;
		uint64_t later;
	} longer = { .rep.size = sizeof(longer), .later = 42 };
	struct {
		struct dmcopy_copy_opts opts;
		uint64_t later;
	} longer_opts = { .opts.size = sizeof(longer_opts), .later = ~0ULL };
	unsigned char got[sizeof(f->data) + 4096];

	assert_non_null(ctx);
	/* whole file, 4 chunks of the kernel's */
	assert_int_equal(dmcopy_copy(ctx, f->src, 0, f->dst, 0,
				     DMCOPY_LENGTH_FIT, &o, &rep), 0);
	assert_true(rep.length == sizeof(f->data) && rep.copied == rep.length);
	assert_true(rep.emulated == rep.length && !rep.offloaded && !rep.userspace);
	assert_false(rep.counted);
	assert_int_equal(s.calls, 5);	/* 0, then every chunk */
	assert_true(s.last_done == s.last_total);
	assert_int_equal(read_file(f->dst, got, sizeof(got)), sizeof(f->data));
	assert_memory_equal(got, f->data, sizeof(f->data));
	assert_string_equal(dmcopy_copy_offload(&rep), "no");

	/* the read/write loop, into the middle */
	o.no_offload = true;
	assert_int_equal(dmcopy_copy(ctx, f->src, 4096, f->dst, 100, 8192, &o,
				     &rep), 0);
	assert_true(rep.userspace == 8192 && !rep.emulated);
	assert_string_equal(dmcopy_copy_offload(&rep), "avoided");
	assert_int_equal(read_file(f->dst, got, sizeof(got)), sizeof(f->data));
	assert_memory_equal(got + 100, f->data + 4096, 8192);
	assert_memory_equal(got, f->data, 100);
	assert_memory_equal(got + 8292, f->data + 8292, sizeof(f->data) - 8292);

	/* a stop after the second chunk: a prefix of two chunks */
	write_file(f->dst, "", 0);
	s = (struct stopper){ .stop_at = 32768 };
	o.no_offload = false;
	assert_int_equal(dmcopy_copy(ctx, f->src, 0, f->dst, 0,
				     DMCOPY_LENGTH_FIT, &o, &rep), -EINTR);
	assert_true(rep.interrupted && rep.copied == 32768);
	assert_int_equal(read_file(f->dst, got, sizeof(got)), 32768);
	assert_memory_equal(got, f->data, 32768);

	/* refused before anything is opened */
	assert_int_equal(dmcopy_copy(ctx, f->src, 0, f->src, 100, 200, NULL,
				     &rep), -EINVAL);
	assert_non_null(strstr(dmcopy_last_error(ctx),
			       "source and destination overlap on file "));
	assert_int_equal(dmcopy_copy(ctx, "/nonexistent", 0, f->dst, 0,
				     DMCOPY_LENGTH_FIT, NULL, &rep), -ENOENT);
	assert_string_equal(dmcopy_last_error(ctx),
			    "/nonexistent: No such file or directory");
	assert_int_equal(dmcopy_copy(ctx, "/dev/null", 0, f->dst, 0,
				     DMCOPY_LENGTH_FIT, NULL, &rep), -EINVAL);
	assert_string_equal(dmcopy_last_error(ctx),
			    "/dev/null: not a block device or regular file");

	/* structs without their size: refused, nothing written */
	o.size = 0;
	assert_int_equal(dmcopy_copy(ctx, f->src, 0, f->dst, 0,
				     DMCOPY_LENGTH_FIT, &o, &rep), -EINVAL);
	assert_string_equal(dmcopy_last_error(ctx),
			    "struct dmcopy_copy_opts of 0 bytes: set its size (sizeof)");
	o.size = sizeof(o);
	rep = (struct dmcopy_copy_report){ .copied = 7 };
	assert_int_equal(dmcopy_copy(ctx, f->src, 0, f->dst, 0,
				     DMCOPY_LENGTH_FIT, &o, &rep), -EINVAL);
	assert_string_equal(dmcopy_last_error(ctx),
			    "struct dmcopy_copy_report of 0 bytes: set its size (sizeof)");
	assert_true(rep.copied == 7);

	/* longer ones: what the library knows is used and filled, the rest
	 * left as it is, the caller's size too */
	assert_int_equal(dmcopy_copy(ctx, f->src, 0, f->dst, 0,
				     DMCOPY_LENGTH_FIT, &longer_opts.opts,
				     &longer.rep), 0);
	assert_true(longer.rep.copied == sizeof(f->data));
	assert_true(longer.rep.size == sizeof(longer) && longer.later == 42);
	dmcopy_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spec, setup, teardown),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_refusal),
		cmocka_unit_test_setup_teardown(test_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlap_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alignment, setup, teardown),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_report),
		cmocka_unit_test_setup_teardown(test_engine, setup_files,
						teardown_files),
	};

	return cmocka_run_group_tests_name("copy", tests, NULL, NULL);
}
