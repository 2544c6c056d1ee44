// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Copy target table lines (every form the kernel's TABLE status prints
 * comes back from format(parse())), and tables built from segments of the
 * fixture's devices.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
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

static void normalises(struct dmcopy_ctx *ctx, const char *in, const char *out)
{
	struct dmcopy_copy_table t;
	char buf[512];

	assert_int_equal(dmcopy_parse_copy_table(ctx, in, &t), 0);
	assert_int_equal(dmcopy_format_copy_table(&t, buf, sizeof(buf)),
			 (int)strlen(out));
	assert_string_equal(buf, out);
}

/* What copy_status(STATUSTYPE_TABLE) prints: <dev> <offset> [features]. */
static void test_kernel_lines(void **state)
{
	static const char * const lines[] = {
		"253:0 0",
		"8:16 18446744073709551615",
		"252:0 2048 2 mode offload",
		"252:0 2048 2 mode emulate",
		"259:1 0 2 max_copy_bytes 512",
		"259:1 0 2 max_copy_bytes 4294963200",
		"252:0 8 4 mode offload max_copy_bytes 8388608",
		"252:0 8 4 mode emulate max_copy_bytes 4096",
	};
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		normalises(*state, lines[i], lines[i]);
}

/* Tables people write: defaults dropped, features in the kernel's order. */
static void test_normalised(void **state)
{
	normalises(*state, "/dev/nullb0 0 2 mode auto", "/dev/nullb0 0");
	normalises(*state, "/dev/nullb0 0 0", "/dev/nullb0 0");
	normalises(*state, "x 16 2 MODE Emulate", "x 16 2 mode emulate");
	normalises(*state, "x 0 4 max_copy_bytes 4096 mode offload",
		   "x 0 4 mode offload max_copy_bytes 4096");
	normalises(*state, "x\t0  2 mode offload\n", "x 0 2 mode offload");
}

static void test_fields(void **state)
{
	struct dmcopy_copy_table t;

	assert_int_equal(dmcopy_parse_copy_table(*state,
			"/dev/mapper/a 2048 4 max_copy_bytes 65536 mode emulate",
			&t), 0);
	assert_string_equal(t.device, "/dev/mapper/a");
	assert_true(t.offset == 2048);
	assert_int_equal(t.mode, DMCOPY_MODE_EMULATE);
	assert_true(t.max_copy_bytes == 65536);
}

static void expect_malformed(struct dmcopy_ctx *ctx, const char *line,
			     const char *message)
{
	struct dmcopy_copy_table t;

	assert_int_equal(dmcopy_parse_copy_table(ctx, line, &t), -EINVAL);
	assert_string_equal(dmcopy_last_error(ctx), message);
}

static void test_malformed(void **state)
{
	static const char * const usage =
		"copy table: need <dev> <offset> [<#features> <feature>...]";
	struct dmcopy_ctx *ctx = *state;

	expect_malformed(ctx, "", usage);
	expect_malformed(ctx, "252:0", usage);
	expect_malformed(ctx, "252:0 -1", "copy table: invalid device sector '-1'");
	expect_malformed(ctx, "252:0 1.5", "copy table: invalid device sector '1.5'");
	expect_malformed(ctx, "252:0 0 5 mode auto mode auto x",
			 "copy table: invalid number of feature args '5'");
	expect_malformed(ctx, "252:0 0 x",
			 "copy table: invalid number of feature args 'x'");
	expect_malformed(ctx, "252:0 0 3 mode offload",
			 "copy table: 3 feature args announced, 2 given");
	expect_malformed(ctx, "252:0 0 2 mode offload extra",
			 "copy table: 2 feature args announced, 3 given");
	expect_malformed(ctx, "252:0 0 1 mode",
			 "copy table: feature mode needs an argument");
	expect_malformed(ctx, "252:0 0 2 mode fast",
			 "copy table: invalid mode 'fast': need auto, offload or emulate");
	expect_malformed(ctx, "252:0 0 4 mode offload mode offload",
			 "copy table: duplicate feature mode");
	expect_malformed(ctx, "252:0 0 4 mode offload mode emulate",
			 "copy table: conflicting mode features");
	expect_malformed(ctx, "252:0 0 2 max_copy_bytes 0",
			 "copy table: max_copy_bytes must not be 0");
	expect_malformed(ctx, "252:0 0 2 max_copy_bytes 1000",
			 "copy table: max_copy_bytes 1000 is not whole sectors");
	expect_malformed(ctx, "252:0 0 2 max_copy_bytes 4294967296",
			 "copy table: max_copy_bytes 4294967296 is larger than one copy can be");
	expect_malformed(ctx, "252:0 0 2 max_copy_bytes 8M",
			 "copy table: invalid max_copy_bytes '8M'");
	expect_malformed(ctx, "252:0 0 4 max_copy_bytes 512 max_copy_bytes 512",
			 "copy table: duplicate feature max_copy_bytes");
	expect_malformed(ctx, "252:0 0 2 throttle 50",
			 "copy table: unrecognised feature 'throttle'");
}

static void test_format_errors(void **state)
{
	struct dmcopy_copy_table t = { .device = "252:0", .offset = 0,
				       .mode = DMCOPY_MODE_EMULATE,
				       .max_copy_bytes = 4096 };
	char buf[16];

	(void)state;
	assert_int_equal(dmcopy_format_copy_table(&t, buf, sizeof(buf)), -ENOSPC);
	t.device[0] = '\0';
	assert_int_equal(dmcopy_format_copy_table(&t, buf, sizeof(buf)), -EINVAL);
}

static void test_compose(void **state)
{
	struct dmcopy_table *t = dmcopy_table_new(*state);
	struct dmcopy_segment seg = {
		.size = sizeof(seg), .type = DMCOPY_TARGET_LINEAR, .device = "nullb0",
		.offset = 0, .length = 1 << 20,
	};
	uint64_t start, length;
	const char *type, *params;

	assert_non_null(t);
	assert_string_equal(dmcopy_table_text(t), "");
	assert_int_equal(dmcopy_table_add_segment(t, &seg), 0);
	seg.type = DMCOPY_TARGET_COPY;
	seg.offset = 1 << 20;
	seg.length = 2 << 20;
	assert_int_equal(dmcopy_table_add_segment(t, &seg), 0);
	seg.device = "259:0";
	seg.offset = 0;
	seg.length = 4096;
	seg.mode = DMCOPY_MODE_EMULATE;
	seg.max_copy_bytes = 1 << 20;
	assert_int_equal(dmcopy_table_add_segment(t, &seg), 0);
	seg.device = "vda1";
	seg.mode = DMCOPY_MODE_AUTO;
	seg.max_copy_bytes = 0;
	assert_int_equal(dmcopy_table_add_segment(t, &seg), 0);

	assert_string_equal(dmcopy_table_text(t),
			    "0 2048 linear 252:0 0\n"
			    "2048 4096 copy 252:0 2048\n"
			    "6144 8 copy 259:0 0 4 mode emulate max_copy_bytes 1048576\n"
			    "6152 8 copy 254:1 0\n");
	assert_int_equal(dmcopy_table_count(t), 4);
	assert_true(dmcopy_table_sectors(t) == 6160);
	assert_int_equal(dmcopy_table_target(t, 1, &start, &length, &type,
					     &params), 0);
	assert_true(start == 2048 && length == 4096);
	assert_string_equal(type, "copy");
	assert_string_equal(params, "252:0 2048");
	assert_int_equal(dmcopy_table_target(t, 4, &start, &length, &type,
					     &params), -ERANGE);
	dmcopy_table_free(t);
}

static void expect_refused(struct dmcopy_table *t, struct dmcopy_ctx *ctx,
			   const struct dmcopy_segment *seg, int err,
			   const char *message)
{
	size_t count = dmcopy_table_count(t);

	assert_int_equal(dmcopy_table_add_segment(t, seg), err);
	assert_string_equal(dmcopy_last_error(ctx), message);
	assert_int_equal(dmcopy_table_count(t), count);
}

static void test_refused(void **state)
{
	struct dmcopy_ctx *ctx = *state;
	struct dmcopy_table *t = dmcopy_table_new(ctx);
	struct dmcopy_segment seg = {
		.size = sizeof(seg), .type = DMCOPY_TARGET_COPY, .device = "nullb0",
		.offset = 0, .length = 0,
	};

	assert_non_null(t);
	expect_refused(t, ctx, &seg, -EINVAL, "nullb0: segment length 0");
	seg.length = 1000;
	expect_refused(t, ctx, &seg, -EINVAL,
		       "nullb0: offset 0 and length 1000 must be multiples of 512 bytes");
	seg.length = 4096;
	seg.offset = 100;
	expect_refused(t, ctx, &seg, -EINVAL,
		       "nullb0: offset 100 and length 4096 must be multiples of 512 bytes");
	seg.offset = (1ULL << 30) - 512;
	expect_refused(t, ctx, &seg, -ERANGE,
		       "nullb0: segment at 1073741312 of 4096 bytes runs past its end (1073741824 bytes)");
	seg.offset = 1ULL << 40;
	expect_refused(t, ctx, &seg, -ERANGE,
		       "nullb0: segment at 1099511627776 of 4096 bytes runs past its end (1073741824 bytes)");
	seg.device = "nvme0n1";
	seg.offset = 512;
	expect_refused(t, ctx, &seg, -EINVAL,
		       "nvme0n1: offset 512 and length 4096 must be multiples of 4096 bytes");
	seg.offset = 0;
	seg.max_copy_bytes = 512;
	expect_refused(t, ctx, &seg, -EINVAL,
		       "nvme0n1: max_copy_bytes 512 must be whole 4096-byte blocks, at most 4294963200");
	seg.max_copy_bytes = 4294967296ULL;
	expect_refused(t, ctx, &seg, -EINVAL,
		       "nvme0n1: max_copy_bytes 4294967296 must be whole 4096-byte blocks, at most 4294963200");
	seg.max_copy_bytes = 0;
	seg.mode = (enum dmcopy_mode)9;
	expect_refused(t, ctx, &seg, -EINVAL, "nvme0n1: invalid copy mode");
	seg.mode = DMCOPY_MODE_AUTO;
	seg.device = "nosuch";
	expect_refused(t, ctx, &seg, -ENOENT, "nosuch: no such block device");
	seg.device = "9:9";
	expect_refused(t, ctx, &seg, -ENOENT, "9:9: no such block device");
	seg.device = NULL;
	expect_refused(t, ctx, &seg, -EINVAL, "segment without a device");
	assert_string_equal(dmcopy_table_text(t), "");
	dmcopy_table_free(t);
}

/* Targets the library has no segment type for, in the kernel's syntax. */
static void test_raw_target(void **state)
{
	struct dmcopy_ctx *ctx = *state;
	struct dmcopy_table *t = dmcopy_table_new(ctx);
	struct dmcopy_segment seg = {
		.size = sizeof(seg), .type = DMCOPY_TARGET_LINEAR, .device = "nullb0",
		.offset = 0, .length = 4096,
	};
	uint64_t start, length;
	const char *type, *params;

	assert_non_null(t);
	assert_int_equal(dmcopy_table_add_segment(t, &seg), 0);
	assert_int_equal(dmcopy_table_add_target(t, 2048, "clone",
			"/dev/vg/m /dev/vg/d /dev/vg/g 1024 1 no_hydration"), 0);
	assert_string_equal(dmcopy_last_error(ctx), "");
	assert_string_equal(dmcopy_table_text(t),
			    "0 8 linear 252:0 0\n"
			    "8 2048 clone /dev/vg/m /dev/vg/d /dev/vg/g 1024 1 no_hydration\n");
	assert_int_equal(dmcopy_table_target(t, 1, &start, &length, &type,
					     &params), 0);
	assert_true(start == 8 && length == 2048);
	assert_string_equal(type, "clone");
	assert_string_equal(params, "/dev/vg/m /dev/vg/d /dev/vg/g 1024 1 no_hydration");

	/* refused, and the table stays as it was */
	assert_int_equal(dmcopy_table_add_target(t, 0, "zero", "x"), -EINVAL);
	assert_string_equal(dmcopy_last_error(ctx), "zero: invalid length 0 sectors");
	assert_int_equal(dmcopy_table_add_target(t, UINT64_MAX, "zero", "x"), -EINVAL);
	assert_int_equal(dmcopy_table_add_target(t, 8, "", "x"), -EINVAL);
	assert_string_equal(dmcopy_last_error(ctx), "invalid target type \"\"");
	assert_int_equal(dmcopy_table_add_target(t, 8, NULL, "x"), -EINVAL);
	assert_int_equal(dmcopy_table_add_target(t, 8, "a b", "x"), -EINVAL);
	assert_int_equal(dmcopy_table_add_target(t, 8, "averyveryverylongtype", "x"),
			 -EINVAL);
	assert_int_equal(dmcopy_table_add_target(t, 8, "zero", ""), -EINVAL);
	assert_string_equal(dmcopy_last_error(ctx),
			    "zero: the parameters must be one line, not empty");
	assert_int_equal(dmcopy_table_add_target(t, 8, "zero", NULL), -EINVAL);
	assert_int_equal(dmcopy_table_add_target(t, 8, "linear", "252:0 0\n0 8 zero"),
			 -EINVAL);
	assert_int_equal(dmcopy_table_count(t), 2);
	assert_true(dmcopy_table_sectors(t) == 2056);
	dmcopy_table_free(t);
}

/* A struct dmcopy_dm_info without its size is refused before any ioctl. */
static void test_dm_info_size(void **state)
{
	struct dmcopy_ctx *ctx = *state;
	struct dmcopy_dm_info info = { .size = 0 };

	assert_int_equal(dmcopy_dm_info(ctx, "any", &info), -EINVAL);
	assert_string_equal(dmcopy_last_error(ctx),
			    "struct dmcopy_dm_info of 0 bytes: set its size (sizeof)");
	/* one byte short of the first version */
	info.size = offsetof(struct dmcopy_dm_info, inactive_table);
	assert_int_equal(dmcopy_dm_info(ctx, "any", &info), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_lines),
		cmocka_unit_test(test_normalised),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_format_errors),
		cmocka_unit_test(test_compose),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_raw_target),
		cmocka_unit_test(test_dm_info_size),
	};

	return cmocka_run_group_tests_name("copy table", tests, setup, teardown);
}
