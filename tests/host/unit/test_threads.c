// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Threads calling into libdm through the library at once, each with its
 * own context: every call ends with its own context's message, none with
 * another's (libdm's log function is global). Run under helgrind by
 * 'make helgrind' for data races. Needs no device-mapper: without one the
 * calls fail, through the same logging.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "libdmcopy.h"

#define THREADS	4
#define CALLS	50

struct worker {
	pthread_t thread;
	int index;
	int wrong;
};

static int names_another(const char *msg, int me)
{
	char other[64];
	int i;

	for (i = 0; i < THREADS; i++) {
		snprintf(other, sizeof(other), "dmcopy-test-none-%d:", i);
		if (i != me && strstr(msg, other))
			return 1;
	}
	return 0;
}

static void *work(void *data)
{
	struct worker *w = data;
	char name[64], uuid[DMCOPY_UUID_LEN];
	struct dmcopy_ctx *ctx = dmcopy_new(NULL);
	int i, r;

	if (!ctx) {
		w->wrong = CALLS;
		return NULL;
	}
	snprintf(name, sizeof(name), "dmcopy-test-none-%d", w->index);
	for (i = 0; i < CALLS; i++) {
		r = dmcopy_dm_uuid(ctx, name, uuid, sizeof(uuid));
		/* gone, or no device-mapper here: an error either way, told
		 * in this context, never naming another thread's device */
		if (r >= 0 || !*dmcopy_last_error(ctx) ||
		    names_another(dmcopy_last_error(ctx), w->index))
			w->wrong++;
	}
	dmcopy_free(ctx);
	return NULL;
}

static void test_threads(void **state)
{
	struct worker w[THREADS];
	int i;

	(void)state;
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .index = i };
		assert_int_equal(pthread_create(&w[i].thread, NULL, work, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(w[i].thread, NULL);
		assert_int_equal(w[i].wrong, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
