// SPDX-License-Identifier: GPL-2.0
/*
 * copy-range: call copy_file_range(2) between two files or block devices
 * and report exactly what the kernel answered, for the test suites.
 *
 *   copy-range [options] SRC SRC_OFFSET DST DST_OFFSET LENGTH
 *
 * Prints "copied=N" (bytes copied in total) and, when a call failed,
 * "errno=NAME"; exits 0 when no call failed, 1 when one did, 2 on usage
 * errors. Offsets and length take k, m, g suffixes (powers of 1024).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fputs("Usage: copy-range [options] SRC SRC_OFFSET DST DST_OFFSET LENGTH\n"
	      "\n"
	      "Options:\n"
	      " -d, --direct       open both with O_DIRECT\n"
	      " -s, --direct-src   open only the source with O_DIRECT\n"
	      " -o, --once         one call only, even if it copies less\n"
	      " -r, --dst-rdonly   open the destination read-only\n"
	      " -a, --dst-append   open the destination with O_APPEND\n"
	      " -D, --dst-dsync    open the destination with O_DSYNC\n"
	      " -c, --calls        also print \"calls=N\", the calls made\n"
	      " -b, --chunk SIZE   ask for at most SIZE bytes per call, so that\n"
	      "                    LENGTH is copied as LENGTH/SIZE copies\n"
	      " -h, --help         this text\n", out);
}

static int parse_size(const char *arg, uint64_t *val)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *arg == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		return -1;
	*val = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "direct",     no_argument, NULL, 'd' },
		{ "direct-src", no_argument, NULL, 's' },
		{ "once",       no_argument, NULL, 'o' },
		{ "dst-rdonly", no_argument, NULL, 'r' },
		{ "dst-append", no_argument, NULL, 'a' },
		{ "dst-dsync",  no_argument, NULL, 'D' },
		{ "calls",      no_argument, NULL, 'c' },
		{ "chunk",      required_argument, NULL, 'b' },
		{ "help",       no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int in_flags = O_RDONLY, out_flags = O_WRONLY;
	int once = 0, print_calls = 0, calls = 0, c, in, out, err = 0;
	uint64_t pos_in, pos_out, len, copied = 0, chunk = 0;
	loff_t off_in, off_out;

	while ((c = getopt_long(argc, argv, "dsoraDcb:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			in_flags |= O_DIRECT;
			out_flags |= O_DIRECT;
			break;
		case 's':
			in_flags |= O_DIRECT;
			break;
		case 'o':
			once = 1;
			break;
		case 'r':
			out_flags = (out_flags & ~O_WRONLY) | O_RDONLY;
			break;
		case 'a':
			out_flags |= O_APPEND;
			break;
		case 'D':
			out_flags |= O_DSYNC;
			break;
		case 'c':
			print_calls = 1;
			break;
		case 'b':
			if (parse_size(optarg, &chunk) || !chunk) {
				fprintf(stderr, "copy-range: bad chunk size '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 5) {
		usage(stderr);
		return 2;
	}
	if (parse_size(argv[optind + 1], &pos_in) ||
	    parse_size(argv[optind + 3], &pos_out) ||
	    parse_size(argv[optind + 4], &len)) {
		fprintf(stderr, "copy-range: bad offset or length\n");
		return 2;
	}

	in = open(argv[optind], in_flags);
	if (in < 0) {
		fprintf(stderr, "copy-range: %s: %m\n", argv[optind]);
		return 2;
	}
	out = open(argv[optind + 2], out_flags);
	if (out < 0) {
		fprintf(stderr, "copy-range: %s: %m\n", argv[optind + 2]);
		return 2;
	}

	off_in = pos_in;
	off_out = pos_out;
	while (copied < len) {
		uint64_t want = len - copied;
		ssize_t ret;

		if (chunk && want > chunk)
			want = chunk;
		ret = copy_file_range(in, &off_in, out, &off_out, want, 0);
		calls++;
		if (ret < 0) {
			err = errno;
			break;
		}
		copied += ret;
		if (ret == 0 || once)
			break;
	}

	printf("copied=%" PRIu64 "\n", copied);
	if (print_calls)
		printf("calls=%d\n", calls);
	if (err)
		printf("errno=%s\n", strerrorname_np(err));
	return err ? 1 : 0;
}
