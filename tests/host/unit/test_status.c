// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The copy target's INFO status: every line dm-copy.ko prints comes back
 * from format(parse()), and malformed lines are refused with a message.
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

static void round_trip(struct dmcopy_ctx *ctx, const char *line)
{
	struct dmcopy_copy_status st = { .size = sizeof(st) };
	char buf[256];

	assert_int_equal(dmcopy_parse_copy_status(ctx, line, &st), 0);
	assert_int_equal(dmcopy_format_copy_status(&st, buf, sizeof(buf)),
			 (int)strlen(line));
	assert_string_equal(buf, line);
}

/* What the kernel's DMEMIT("%s %lld %lld %lld %lld %lld %d") prints. */
static void test_kernel_lines(void **state)
{
	round_trip(*state, "auto 0 0 0 0 0 0");
	round_trip(*state, "offload 12 49152 0 0 1 0");
	round_trip(*state, "emulate 0 0 7 1073741824 0 3");
	round_trip(*state, "auto 9223372036854775807 9223372036854775807 "
		   "9223372036854775807 9223372036854775807 "
		   "9223372036854775807 2147483647");
}

static void test_fields(void **state)
{
	struct dmcopy_copy_status st = { .size = sizeof(st) };

	assert_int_equal(dmcopy_parse_copy_status(*state,
				"offload 1 2 3 4 5 6", &st), 0);
	assert_int_equal(st.mode, DMCOPY_MODE_OFFLOAD);
	assert_true(st.offloaded_copies == 1 && st.offloaded_bytes == 2);
	assert_true(st.emulated_copies == 3 && st.emulated_bytes == 4);
	assert_true(st.errors == 5 && st.in_flight == 6);
}

static void expect_malformed(struct dmcopy_ctx *ctx, const char *line,
			     const char *message)
{
	struct dmcopy_copy_status st = { .size = sizeof(st) };

	assert_int_equal(dmcopy_parse_copy_status(ctx, line, &st), -EINVAL);
	assert_string_equal(dmcopy_last_error(ctx), message);
}

static void test_malformed(void **state)
{
	struct dmcopy_ctx *ctx = *state;

	expect_malformed(ctx, NULL, "no copy status");
	expect_malformed(ctx, "", "copy status: 0 words, expected 7");
	expect_malformed(ctx, "auto 0 0 0 0 0", "copy status: 6 words, expected 7");
	expect_malformed(ctx, "auto 0 0 0 0 0 0 0",
			 "copy status: 8 words, expected 7");
	expect_malformed(ctx, "fast 0 0 0 0 0 0",
			 "copy status: invalid mode 'fast'");
	expect_malformed(ctx, "auto -1 0 0 0 0 0",
			 "copy status: invalid offloaded copies '-1'");
	expect_malformed(ctx, "auto 0 x 0 0 0 0",
			 "copy status: invalid offloaded bytes 'x'");
	expect_malformed(ctx, "auto 0 0 1.5 0 0 0",
			 "copy status: invalid emulated copies '1.5'");
	expect_malformed(ctx, "auto 0 0 0 18446744073709551616 0 0",
			 "copy status: invalid emulated bytes '18446744073709551616'");
	expect_malformed(ctx, "auto 0 0 0 0 +1 0",
			 "copy status: invalid errors '+1'");
	expect_malformed(ctx, "auto 0 0 0 0 0 1K",
			 "copy status: invalid copies in flight '1K'");
}

/* A NULL context still gets -EINVAL, just no message. */
static void test_without_ctx(void **state)
{
	struct dmcopy_copy_status st = { .size = sizeof(st) };

	(void)state;
	assert_int_equal(dmcopy_parse_copy_status(NULL, "auto 0", &st), -EINVAL);
	assert_int_equal(dmcopy_parse_copy_status(NULL, "auto 0 0 0 0 0 0", &st), 0);
}

static void test_format_errors(void **state)
{
	struct dmcopy_copy_status st = {
		.size = sizeof(st), .mode = DMCOPY_MODE_AUTO,
	};
	char small[8];

	(void)state;
	assert_int_equal(dmcopy_format_copy_status(&st, small, sizeof(small)),
			 -ENOSPC);
	st.mode = (enum dmcopy_mode)7;
	assert_int_equal(dmcopy_format_copy_status(&st, small, sizeof(small)),
			 -EINVAL);
	/* without its size: refused, both ways */
	st.mode = DMCOPY_MODE_AUTO;
	st.size = 0;
	assert_int_equal(dmcopy_format_copy_status(&st, small, sizeof(small)),
			 -EINVAL);
	assert_int_equal(dmcopy_parse_copy_status(NULL, "auto 0 0 0 0 0 0", &st),
			 -EINVAL);
	assert_int_equal(st.mode, DMCOPY_MODE_AUTO);
}

static void test_modes(void **state)
{
	enum dmcopy_mode m;

	(void)state;
	assert_int_equal(dmcopy_parse_mode("Emulate", &m), 0);
	assert_int_equal(m, DMCOPY_MODE_EMULATE);
	assert_int_equal(dmcopy_parse_mode("emulated", &m), -EINVAL);
	assert_string_equal(dmcopy_mode_name(DMCOPY_MODE_OFFLOAD), "offload");
	assert_null(dmcopy_mode_name((enum dmcopy_mode)3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_lines),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_without_ctx),
		cmocka_unit_test(test_format_errors),
		cmocka_unit_test(test_modes),
	};

	return cmocka_run_group_tests_name("copy status", tests, setup, teardown);
}
