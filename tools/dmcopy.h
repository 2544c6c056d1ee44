/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the dmcopy commands share (dmcopy.c, provision.c): messages,
 * option values, sizes for people, progress display, signals.
 */
#ifndef DMCOPY_TOOL_H
#define DMCOPY_TOOL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>

#include "libdmcopy.h"

#define EXIT_USAGE	2

extern const char *prog;

/* "dmcopy: <message>" on stderr. */
void warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A usage error: the message, where to read more, exit 2. */
void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* What getopt_long() returned for a bad option, said on one line; exit 2. */
void bad_option(char **argv, int c) __attribute__((noreturn));

/* A size option's value, or a usage error naming the option. */
uint64_t size_arg(const char *option, const char *arg);

/* Like lsblk: "0B", "512B", "4K", "1.5G", one decimal when it helps. */
void human_size(uint64_t bytes, char *buf, size_t len);

/* A library context on the real /sys, or exit 1. */
struct dmcopy_ctx *new_ctx(void);

enum progress_kind {
	PROGRESS_NONE,
	PROGRESS_BAR,		/* a terminal: bar, rate, ETA */
	PROGRESS_LINES,		/* not a terminal: qemu-img -p lines */
};

struct progress {
	enum progress_kind kind;
	FILE *out;		/* where PROGRESS_LINES go */
	struct timespec start;
	char last[128];
	bool shown;
};

/* Progress of @done of @total bytes; @data is a struct progress. */
void on_progress(uint64_t done, uint64_t total, void *data);
void progress_end(struct progress *p);
/* Die by @signo after the report of a stopped copy; does not return. */
void die_by_signal(int signo) __attribute__((noreturn));
double seconds_since(const struct timespec *t0);

/* The number of SIGINT or SIGTERM once one came (catch_signals()). */
extern volatile sig_atomic_t stop_signal;
void catch_signals(void);

int cmd_provision(int argc, char **argv);
int cmd_deprovision(int argc, char **argv);

#endif /* DMCOPY_TOOL_H */
