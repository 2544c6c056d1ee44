// SPDX-License-Identifier: GPL-2.0
/*
 * storm-expect: what a storm of copies (tests/lib/storm.bash) should have
 * left, in one process instead of one per copy (each costs under TCG).
 *
 *   storm-expect SRC-FILE SRC-BASE DEV-FILE DEV-BASE DEV2-FILE DEV2-BASE < PLAN
 *
 * PLAN has a copy a line, "KIND DEV SRC DEV|DEV2 DST LEN" (byte offsets on
 * the devices). SRC-FILE holds the source device from SRC-BASE on; each
 * copy's bytes are written into DEV-FILE (the device DEV from DEV-BASE on)
 * or DEV2-FILE, which start as copies of what the devices held before.
 * Sources are never destinations, so the order does not matter. Exits 0,
 * or 1 with a message on a bad line or an I/O error.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

static uint64_t number_or_die(const char *arg)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);

	if (!*arg || *end) {
		fprintf(stderr, "storm-expect: not a number: '%s'\n", arg);
		exit(1);
	}
	return v;
}

int main(int argc, char **argv)
{
	char kind[16], sdev[16], ddev[16], line[256];
	uint64_t src_base, dev_base, dev2_base;
	unsigned long long src, dst, len;
	int src_fd, dev_fd, dev2_fd;
	unsigned int n = 0;
	char *buf;

	if (argc != 7) {
		fputs("Usage: storm-expect SRC-FILE SRC-BASE DEV-FILE DEV-BASE DEV2-FILE DEV2-BASE < PLAN\n",
		      stderr);
		return 1;
	}
	src_fd = open_or_die(argv[1], O_RDONLY);
	src_base = number_or_die(argv[2]);
	dev_fd = open_or_die(argv[3], O_WRONLY);
	dev_base = number_or_die(argv[4]);
	dev2_fd = open_or_die(argv[5], O_WRONLY);
	dev2_base = number_or_die(argv[6]);

	while (fgets(line, sizeof(line), stdin)) {
		int fd;
		uint64_t base;

		n++;
		if (sscanf(line, "%15s %15s %llu %15s %llu %llu", kind, sdev,
			   &src, ddev, &dst, &len) != 6 || src < src_base) {
			fprintf(stderr, "storm-expect: plan line %u: %s", n, line);
			return 1;
		}
		if (!strcmp(ddev, "DEV")) {
			fd = dev_fd;
			base = dev_base;
		} else {
			fd = dev2_fd;
			base = dev2_base;
		}
		buf = malloc(len);
		if (!buf || dst < base ||
		    pread(src_fd, buf, len, src - src_base) != (ssize_t)len ||
		    pwrite(fd, buf, len, dst - base) != (ssize_t)len) {
			fprintf(stderr, "storm-expect: cannot apply plan line %u: %s", n, line);
			return 1;
		}
		free(buf);
	}
	return 0;
}
