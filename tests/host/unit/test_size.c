// SPDX-License-Identifier: LGPL-2.1-or-later
/* dmcopy_parse_size(): what users type for sizes. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "libdmcopy.h"

static void expect_size(const char *s, uint64_t want)
{
	uint64_t got = 0;

	assert_int_equal(dmcopy_parse_size(s, &got), 0);
	assert_true(got == want);
}

static void expect_error(const char *s, int err)
{
	uint64_t got = 12345;

	assert_int_equal(dmcopy_parse_size(s, &got), err);
	assert_true(got == 12345);	/* untouched on failure */
}

static void test_plain_bytes(void **state)
{
	(void)state;
	expect_size("0", 0);
	expect_size("512", 512);
	expect_size("007", 7);
	expect_size("18446744073709551615", UINT64_MAX);
}

static void test_suffixes(void **state)
{
	(void)state;
	expect_size("4K", 4096);
	expect_size("4k", 4096);
	expect_size("8M", 8ULL << 20);
	expect_size("1G", 1ULL << 30);
	expect_size("2T", 2ULL << 40);
	expect_size("4KiB", 4096);
	expect_size("8MiB", 8ULL << 20);
	expect_size("1GiB", 1ULL << 30);
	expect_size("3TiB", 3ULL << 40);
	expect_size("1gib", 1ULL << 30);
	expect_size("1GIB", 1ULL << 30);
	expect_size("0G", 0);
}

static void test_largest(void **state)
{
	(void)state;
	expect_size("16777215T", 16777215ULL << 40);
	expect_error("16777216T", -ERANGE);
	expect_size("17179869183G", 17179869183ULL << 30);
	expect_error("17179869184G", -ERANGE);
}

static void test_overflow(void **state)
{
	(void)state;
	expect_error("18446744073709551616", -ERANGE);
	expect_error("99999999999999999999999", -ERANGE);
	expect_error("18446744073709551615K", -ERANGE);
}

static void test_rejects(void **state)
{
	(void)state;
	expect_error(NULL, -EINVAL);
	expect_error("", -EINVAL);
	expect_error("-1", -EINVAL);
	expect_error("+1", -EINVAL);
	expect_error(" 1", -EINVAL);
	expect_error("1 ", -EINVAL);
	expect_error("1.5G", -EINVAL);
	expect_error(".5G", -EINVAL);
	expect_error("1,5G", -EINVAL);
	expect_error("K", -EINVAL);
	expect_error("1X", -EINVAL);
	expect_error("1KB", -EINVAL);
	expect_error("1Ki", -EINVAL);
	expect_error("1KiBs", -EINVAL);
	expect_error("1P", -EINVAL);
	/* not a size, however many digits it starts with (found by fuzzing) */
	expect_error("99999999999999999999999X", -EINVAL);
	expect_error("18446744073709551616 ", -EINVAL);
	expect_error("0x10", -EINVAL);
	expect_error("1e3", -EINVAL);
	expect_error("12abc", -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_bytes),
		cmocka_unit_test(test_suffixes),
		cmocka_unit_test(test_largest),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_rejects),
	};

	return cmocka_run_group_tests_name("size", tests, NULL, NULL);
}
