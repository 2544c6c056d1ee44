// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for dmcopy's command line: tools/dmcopy.c itself
 * (its main() renamed), with exit() wrapped (-Wl,--wrap=exit) so that a
 * usage error or --help returns here. An input is
 *
 *   byte 0      which command: 0 status, 1 create, 2 copy
 *   then        its arguments, one per line
 *
 * "status" runs whole, against the unit tests' fixture sysfs tree
 * (DMCOPY_SYSFS), printing to /dev/null. "create" and "copy" only parse
 * their options and arguments (running them would change devices and
 * files); what they accept is checked: names and paths present, offsets
 * and sizes in 512-byte sectors where dmcopy says so and below 2^63, a
 * valid mode. An exit code other than 0 (help) and 2 (usage error) while
 * parsing is a failure, and so is anything the sanitizers find.
 */
#define main dmcopy_main
#include "../../tools/dmcopy.c"
#undef main

#include <assert.h>
#include <setjmp.h>

#define MAX_ARGS	32
#define MAX_TEXT	2048

static jmp_buf exit_jmp;
static int exit_code;
static bool in_dmcopy;

void __real_exit(int status) __attribute__((noreturn));
void __wrap_exit(int status) __attribute__((noreturn));

/* dmcopy's exit() returns to the harness; libFuzzer's really exits. */
void __wrap_exit(int status)
{
	if (!in_dmcopy)
		__real_exit(status);
	in_dmcopy = false;
	exit_code = status;
	longjmp(exit_jmp, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/*
	 * Output goes nowhere; run with -close_fd_mask=2 to drop the usage
	 * errors too (libFuzzer and the sanitizers keep a copy of stderr).
	 */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	setenv(ENV_SYSFS, FIXTURE_SYSFS, 1);
	opterr = 0;
	return 0;
}

static void check_create(const struct create_opts *o)
{
	assert(o->name && o->device);
	assert(o->offset % 512 == 0 && o->offset <= INT64_MAX);
	assert(!o->has_size || (o->size && o->size % 512 == 0 &&
				o->size <= INT64_MAX));
	assert(o->max_copy_bytes % 512 == 0 && o->max_copy_bytes <= INT64_MAX);
	assert(dmcopy_mode_name(o->mode));
}

static void check_copy(const struct copy_args *a)
{
	assert(a->src[0] && a->dst[0]);
	assert(memchr(a->src, '\0', sizeof(a->src)) &&
	       memchr(a->dst, '\0', sizeof(a->dst)));
	assert(a->length <= INT64_MAX && a->opts.chunk_bytes <= INT64_MAX);
	assert(!(a->progress && a->quiet));
	assert(!a->opts.force_in_use || a->opts.force);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char * const names[] = { "status", "create", "copy" };
	char text[MAX_TEXT], *argv[MAX_ARGS + 2], *p;
	volatile unsigned int which;
	struct create_opts co;
	struct copy_args ca;
	int argc = 0;

	if (size < 1 || size - 1 >= sizeof(text))
		return 0;
	which = data[0] % 3;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	argv[argc++] = (char *)names[which];
	for (p = text; size > 1; p++) {
		if (argc == MAX_ARGS + 1)
			return 0;
		argv[argc++] = p;
		p = strchrnul(p, '\n');
		if (!*p)
			break;
		*p = '\0';
	}
	argv[argc] = NULL;

	optind = 0;	/* glibc: start afresh, also its internal state */
	exit_code = -1;
	if (setjmp(exit_jmp)) {
		/* help, "-o help" (0) or a usage error (2), nothing else */
		assert(exit_code == EXIT_SUCCESS || exit_code == EXIT_USAGE ||
		       (which == 0 && exit_code == EXIT_FAILURE));
		return 0;
	}
	in_dmcopy = true;
	switch (which) {
	case 0:
		cmd_status(argc, argv);
		break;
	case 1:
		memset(&co, 0, sizeof(co));
		co.mode = DMCOPY_MODE_AUTO;
		parse_create_options(argc, argv, &co);
		check_create(&co);
		break;
	case 2:
		memset(&ca, 0, sizeof(ca));
		parse_copy_options(argc, argv, &ca);
		check_copy(&ca);
		break;
	}
	in_dmcopy = false;
	return 0;
}
