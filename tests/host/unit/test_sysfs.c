// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Capabilities read from the fixture sysfs tree (fixtures/sys), names
 * resolved, and the verdicts those capabilities give.
 *
 * The fixture: nullb0 (copies, holder dm-0), nullb1 (copy_max_bytes 0),
 * sda (cannot copy), nvme0n1 (4096-byte blocks) with partition nvme0n1p1,
 * vda (a kernel without copy offload) with partition vda1, dm-0 ("golden"
 * on nullb0), loop0 (size 0).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "libdmcopy.h"

#define NO_COPY "kernel without copy offload: copies go through user space"

static int setup(void **state)
{
	*state = dmcopy_new(FIXTURE_SYSFS "/");
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	dmcopy_free(*state);
	return 0;
}

static void test_nullb0(void **state)
{
	struct dmcopy_caps c = { .size = sizeof(c) };

	assert_int_equal(dmcopy_device_caps(*state, "nullb0", &c), 0);
	assert_string_equal(c.name, "nullb0");
	assert_string_equal(c.disk, "nullb0");
	assert_false(c.is_partition);
	assert_true(c.has_copy_sysfs && c.has_copy_stat);
	assert_true(c.copy_max_hw_bytes == 134217728);
	assert_true(c.copy_max_bytes == 134217728);
	assert_true(c.offloaded_copies == 3 && c.offloaded_bytes == 12288);
	assert_true(c.emulated_copies == 1 && c.emulated_bytes == 4096);
	assert_true(c.failed_copies == 1 && c.failed_bytes == 512);
	/* eight numbers here, as this kernel prints; dm-0 has six (older) */
	assert_true(c.logical_block_size == 512);
	assert_true(c.size_bytes == 1ULL << 30);
	assert_true(c.major == 252 && c.minor == 0);
	assert_false(c.is_dm);
	assert_string_equal(c.dm_name, "");
	assert_int_equal(c.nr_slaves, 0);
	assert_int_equal(c.nr_holders, 1);
	assert_string_equal(c.holders[0], "dm-0");
	assert_string_equal(dmcopy_last_error(*state), "");
	dmcopy_caps_release(&c);

	/* without its size: refused, untouched */
	c = (struct dmcopy_caps){ .major = 7 };
	assert_int_equal(dmcopy_device_caps(*state, "nullb0", &c), -EINVAL);
	assert_string_equal(dmcopy_last_error(*state),
			    "struct dmcopy_caps of 0 bytes: set its size (sizeof)");
	assert_true(c.major == 7 && !c.name[0]);
}

static void test_no_copy_sysfs(void **state)
{
	struct dmcopy_caps c = { .size = sizeof(c) };

	assert_int_equal(dmcopy_device_caps(*state, "vda", &c), 0);
	assert_false(c.has_copy_sysfs);
	assert_false(c.has_copy_stat);
	assert_true(c.copy_max_hw_bytes == 0 && c.copy_max_bytes == 0);
	assert_true(c.size_bytes == 20971520ULL * 512);
	assert_string_equal(dmcopy_last_error(*state), NO_COPY);
	dmcopy_caps_release(&c);
}

static void test_partition(void **state)
{
	struct dmcopy_caps c = { .size = sizeof(c) };

	assert_int_equal(dmcopy_device_caps(*state, "nvme0n1p1", &c), 0);
	assert_string_equal(c.name, "nvme0n1p1");
	assert_string_equal(c.disk, "nvme0n1");
	assert_true(c.is_partition);
	assert_true(c.partition_start == 256 * 512);
	assert_true(c.size_bytes == 1048576ULL * 512);
	assert_true(c.logical_block_size == 4096);	/* the disk's queue */
	assert_true(c.copy_max_hw_bytes == 1048576);
	assert_true(c.major == 259 && c.minor == 1);
	dmcopy_caps_release(&c);

	assert_int_equal(dmcopy_device_caps(*state, "vda1", &c), 0);
	assert_string_equal(c.disk, "vda");
	assert_false(c.has_copy_sysfs);
	dmcopy_caps_release(&c);
}

static void test_dm(void **state)
{
	struct dmcopy_caps c = { .size = sizeof(c) };

	assert_int_equal(dmcopy_device_caps(*state, "dm-0", &c), 0);
	assert_true(c.is_dm);
	assert_string_equal(c.dm_name, "golden");
	assert_string_equal(c.dm_uuid, "COPY-golden");
	assert_int_equal(c.nr_slaves, 1);
	assert_string_equal(c.slaves[0], "nullb0");
	assert_int_equal(c.nr_holders, 0);
	assert_true(c.copy_max_hw_bytes == 8388608);
	dmcopy_caps_release(&c);
}

static void test_stack(void **state)
{
	struct dmcopy_layer **layers;
	char why[DMCOPY_STACK_WHY_LEN];
	size_t count;

	/* dm-0 over nullb0: the disk below decides */
	assert_int_equal(dmcopy_device_stack(*state, "dm-0", &layers, &count), 0);
	assert_int_equal(count, 2);
	assert_string_equal(layers[0]->caps.name, "dm-0");
	assert_int_equal(layers[0]->depth, 0);
	/* made by the library: its size says which fields it has */
	assert_int_equal(layers[0]->size, sizeof(struct dmcopy_layer));
	assert_int_equal(layers[0]->caps.size, sizeof(struct dmcopy_caps));
	assert_string_equal(layers[1]->caps.name, "nullb0");
	assert_int_equal(layers[1]->depth, 1);
	/* fixture sysfs: no tables to read */
	assert_string_equal(layers[0]->types, "");
	assert_int_equal(dmcopy_stack_decider(layers, count, why, sizeof(why)), 1);
	assert_string_equal(why, "nullb0 offloads copies");
	/* turning offload off on the top decides there */
	layers[0]->caps.copy_max_bytes = 0;
	assert_int_equal(dmcopy_stack_decider(layers, count, why, sizeof(why)), 0);
	assert_string_equal(why, "offload off on dm-0 (copy_max_bytes 0)");
	layers[0]->caps.copy_max_bytes = 8388608;
	/* ... and on the disk below, there */
	layers[1]->caps.copy_max_bytes = 0;
	assert_int_equal(dmcopy_stack_decider(layers, count, why, sizeof(why)), 1);
	assert_string_equal(why, "offload off on nullb0 (copy_max_bytes 0)");
	layers[1]->caps.copy_max_bytes = 134217728;
	/* a copy target serves copies itself; another target type stops them */
	snprintf(layers[0]->types, sizeof(layers[0]->types), "linear,copy");
	assert_int_equal(dmcopy_stack_decider(layers, count, why, sizeof(why)), 0);
	assert_string_equal(why, "the copy target of dm-0 serves copies");
	snprintf(layers[0]->types, sizeof(layers[0]->types), "linear,striped");
	assert_int_equal(dmcopy_stack_decider(layers, count, NULL, 0), 0);
	assert_int_equal(dmcopy_stack_decider(layers, count, why, sizeof(why)), 0);
	assert_string_equal(why, "dm-0: its striped target passes no copies down");
	dmcopy_stack_free(layers, count);

	/* a device with nothing below is its own stack */
	assert_int_equal(dmcopy_device_stack(*state, "vda", &layers, &count), 0);
	assert_int_equal(count, 1);
	assert_int_equal(dmcopy_stack_decider(layers, count, why, sizeof(why)), 0);
	assert_string_equal(why, "kernel without copy offload: copies go through user space");
	dmcopy_stack_free(layers, count);

	assert_int_equal(dmcopy_device_stack(*state, "nosuch", &layers, &count), -ENOENT);
}

static void expect_resolved(struct dmcopy_ctx *ctx, const char *spec,
			    int err, const char *name)
{
	char buf[DMCOPY_NAME_LEN];

	assert_int_equal(dmcopy_resolve_device(ctx, spec, buf, sizeof(buf)), err);
	if (!err)
		assert_string_equal(buf, name);
	else
		assert_string_equal(dmcopy_last_error(ctx), name);
}

static void test_resolve(void **state)
{
	struct dmcopy_ctx *ctx = *state;
	struct dmcopy_caps c = { .size = sizeof(c) };
	char small[4];

	expect_resolved(ctx, "nullb0", 0, "nullb0");
	expect_resolved(ctx, "252:0", 0, "nullb0");
	expect_resolved(ctx, "259:1", 0, "nvme0n1p1");
	expect_resolved(ctx, "nosuch", -ENOENT, "nosuch: no such block device");
	expect_resolved(ctx, "1:99", -ENOENT, "1:99: no such block device");
	expect_resolved(ctx, ".", -ENOENT, ".: no such block device");
	expect_resolved(ctx, "..", -ENOENT, "..: no such block device");
	expect_resolved(ctx, "", -ENOENT, "no device named");
	expect_resolved(ctx, "/dev/null", -ENOTBLK, "/dev/null: not a block device");
	expect_resolved(ctx, "/nonexistent/dev", -ENOENT,
			"/nonexistent/dev: No such file or directory");
	assert_int_equal(dmcopy_resolve_device(ctx, "nullb0", small, sizeof(small)),
			 -ENAMETOOLONG);
	assert_int_equal(dmcopy_device_caps(ctx, "nosuch", &c), -ENOENT);
}

static void test_list(void **state)
{
	static const char * const want[] = {
		"dm-0", "loop0", "nullb0", "nullb1", "nvme0n1", "sda", "vda",
	};
	char **names;
	int i, n;

	n = dmcopy_list_devices(*state, &names);
	assert_int_equal(n, 7);
	for (i = 0; i < n; i++)
		assert_string_equal(names[i], want[i]);
	dmcopy_free_names(names, (size_t)n);
}

static void test_broken_root(void **state)
{
	struct dmcopy_ctx *ctx = dmcopy_new("/nonexistent");
	char **names;

	(void)state;
	assert_non_null(ctx);
	assert_int_equal(dmcopy_list_devices(ctx, &names), 0);
	dmcopy_free_names(names, 0);
	dmcopy_free(ctx);
}

static void expect_verdict(struct dmcopy_ctx *ctx, const char *src,
			   uint64_t src_off, const char *dst, uint64_t dst_off,
			   uint64_t len, enum dmcopy_path path, const char *reason)
{
	struct dmcopy_verdict v;

	assert_int_equal(dmcopy_verdict(ctx, src, src_off, dst, dst_off, len, &v), 0);
	assert_string_equal(v.reason, reason);
	assert_int_equal(v.path, path);
}

static void test_verdicts(void **state)
{
	struct dmcopy_ctx *ctx = *state;

	expect_verdict(ctx, "nullb0", 0, "nullb0", 1 << 20, 1 << 20,
		       DMCOPY_OFFLOAD, "nullb0 offloads copies");
	expect_verdict(ctx, "vda", 0, "vda", 1 << 20, 4096,
		       DMCOPY_USERSPACE, NO_COPY);
	expect_verdict(ctx, "nullb0", 0, "vda1", 0, 4096,
		       DMCOPY_USERSPACE, NO_COPY);
	expect_verdict(ctx, "nvme0n1", 0, "nvme0n1", 8192, 512,
		       DMCOPY_EMULATE_KERNEL, "misaligned to 4096-byte logical blocks");
	expect_verdict(ctx, "nullb0", 512, "nvme0n1", 0, 4096,
		       DMCOPY_EMULATE_KERNEL, "misaligned to 4096-byte logical blocks");
	expect_verdict(ctx, "nullb0", 0, "nvme0n1", 0, 4096,
		       DMCOPY_EMULATE_KERNEL, "different disks: nullb0 and nvme0n1");
	expect_verdict(ctx, "dm-0", 0, "nullb0", 0, 4096,
		       DMCOPY_EMULATE_KERNEL, "different disks: dm-0 and nullb0");
	expect_verdict(ctx, "sda", 0, "sda", 4096, 4096,
		       DMCOPY_EMULATE_KERNEL, "sda cannot offload copies");
	expect_verdict(ctx, "nullb1", 0, "nullb1", 4096, 4096,
		       DMCOPY_EMULATE_KERNEL, "offload off on nullb1 (copy_max_bytes 0)");
	expect_verdict(ctx, "nvme0n1p1", 0, "nvme0n1", 0, 4096,
		       DMCOPY_OFFLOAD, "nvme0n1 offloads copies");
	/* a fixture's dm tables are not the kernel's: not looked at */
	expect_verdict(ctx, "dm-0", 0, "dm-0", 1 << 20, 1 << 20,
		       DMCOPY_OFFLOAD, "dm-0 offloads copies");
	assert_string_equal(dmcopy_path_name(DMCOPY_EMULATE_KERNEL), "emulate-kernel");
	assert_string_equal(dmcopy_path_name(DMCOPY_USERSPACE), "userspace");
}

static void expect_invalid(struct dmcopy_ctx *ctx, const char *src,
			   uint64_t src_off, const char *dst, uint64_t dst_off,
			   uint64_t len, int err, const char *message)
{
	struct dmcopy_verdict v;

	assert_int_equal(dmcopy_verdict(ctx, src, src_off, dst, dst_off, len, &v), err);
	assert_string_equal(dmcopy_last_error(ctx), message);
}

static void test_invalid_copies(void **state)
{
	struct dmcopy_ctx *ctx = *state;

	expect_invalid(ctx, "nullb0", 0, "nullb0", 4096, 0, -EINVAL,
		       "nothing to copy: length 0");
	expect_invalid(ctx, "nullb0", 0, "nullb0", 4096, 8192, -EINVAL,
		       "overlapping ranges on nullb0");
	/* nvme0n1p1 starts 128 KiB into nvme0n1 */
	expect_invalid(ctx, "nvme0n1p1", 0, "nvme0n1", 131072, 4096, -EINVAL,
		       "overlapping ranges on nvme0n1");
	expect_invalid(ctx, "nullb0", (1ULL << 30) - 4096, "nullb0", 0, 8192,
		       -EINVAL, "source range runs past the end of nullb0");
	expect_invalid(ctx, "nullb0", 0, "nullb0", UINT64_MAX, 4096,
		       -EINVAL, "destination range runs past the end of nullb0");
	expect_invalid(ctx, "nosuch", 0, "nullb0", 0, 4096, -ENOENT,
		       "nosuch: no such block device");
	expect_invalid(ctx, "nullb0", 0, "nosuch", 0, 4096, -ENOENT,
		       "nosuch: no such block device");
}

static void test_dm_types(void **state)
{
	const struct dmcopy_dm_target t[] = {
		{ 0, 2048, "linear" }, { 2048, 8, "copy" },
		{ 2056, 8, "linear" }, { 2064, 8, "copy" },
	};
	char buf[32], small[8];

	(void)state;
	assert_int_equal(dmcopy_dm_types(t, 4, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "linear,copy");
	assert_int_equal(dmcopy_dm_types(t, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(dmcopy_dm_types(t, 2, small, sizeof(small)), -ENOSPC);
}

/*
 * A device no one created: the ioctl (or opening the control node, when
 * not root or without /dev/mapper/control) fails, with a message and
 * nothing allocated; valgrind sees libdevmapper's path as well.
 */
static void test_dm_targets_missing(void **state)
{
	struct dmcopy_dm_target *targets = (void *)1;
	size_t count = 99;

	assert_true(dmcopy_dm_targets(*state, "dmcopy-unit-no-such-device",
				      &targets, &count) < 0);
	assert_null(targets);
	assert_int_equal(count, 0);
	assert_true(dmcopy_last_error(*state)[0] != '\0');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nullb0),
		cmocka_unit_test(test_no_copy_sysfs),
		cmocka_unit_test(test_partition),
		cmocka_unit_test(test_dm),
		cmocka_unit_test(test_stack),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_broken_root),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_invalid_copies),
		cmocka_unit_test(test_dm_types),
		cmocka_unit_test(test_dm_targets_missing),
	};

	return cmocka_run_group_tests_name("sysfs", tests, setup, teardown);
}
