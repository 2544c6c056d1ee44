// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmcopy: copy offload of block devices and device-mapper copy targets.
 *
 *   dmcopy status [options] [DEVICE...]
 *
 * Exit status: 0 all went well, 1 failure, 2 usage error, 64 some of the
 * devices failed (the others were shown).
 */
#define _GNU_SOURCE	/* strchrnul() */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libsmartcols.h>

#include "libdmcopy.h"

#define DMCOPY_VERSION	"0.1.0"

#define EXIT_USAGE	2
#define EXIT_SOME_OK	64

/* DMCOPY_SYSFS: read another sysfs tree (a test fixture) than /sys. */
#define ENV_SYSFS	"DMCOPY_SYSFS"

static const char *prog = "dmcopy";

static void warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warnx(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A usage error: the message, where to read more, exit 2. */
static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", prog);
	exit(EXIT_USAGE);
}

/* The report getopt_long() would print, on one line, then exit 2. */
static void bad_option(char **argv)
{
	if (optopt)
		usage_error("invalid option -- '%c'", optopt);
	usage_error("unrecognized option '%s'", argv[optind - 1]);
}

enum col_kind {
	KIND_STR,	/* text */
	KIND_COUNT,	/* a number, always printed as one */
	KIND_SIZE,	/* bytes: human (1.5G) unless --bytes */
};

enum {
	COL_NAME,
	COL_TYPE,
	COL_SIZE,
	COL_LOGSEC,
	COL_COPY_MAX_HW,
	COL_COPY_MAX,
	COL_OFFLOADED,
	COL_OFFLOADED_BYTES,
	COL_EMULATED,
	COL_EMULATED_BYTES,
	COL_FAILED,
	COL_FAILED_BYTES,
	COL_DM_NAME,
	COL_UUID,
	COL_SLAVES,
	COL_HOLDERS,
	COL_VERDICT,
	COL_NOTE,
};

struct colinfo {
	const char *name;
	double whint;
	int flags;
	enum col_kind kind;
	const char *help;
};

static const struct colinfo infos[] = {
	[COL_NAME] = { "NAME", 0.15, 0, KIND_STR, "kernel name of the device" },
	[COL_TYPE] = { "TYPE", 0.1, 0, KIND_STR,
		"dm target types of the live table, joined by ','" },
	[COL_SIZE] = { "SIZE", 5, SCOLS_FL_RIGHT, KIND_SIZE, "size of the device" },
	[COL_LOGSEC] = { "LOG-SEC", 7, SCOLS_FL_RIGHT, KIND_COUNT,
		"logical block size in bytes" },
	[COL_COPY_MAX_HW] = { "COPY-MAX-HW", 6, SCOLS_FL_RIGHT, KIND_SIZE,
		"largest copy the device runs in one command (0: none)" },
	[COL_COPY_MAX] = { "COPY-MAX", 6, SCOLS_FL_RIGHT, KIND_SIZE,
		"largest copy offloaded in one command (0: offload off)" },
	[COL_OFFLOADED] = { "OFFLOADED", 5, SCOLS_FL_RIGHT, KIND_COUNT,
		"copies into the device that it copied itself" },
	[COL_OFFLOADED_BYTES] = { "OFFLOADED-BYTES", 6, SCOLS_FL_RIGHT, KIND_SIZE,
		"bytes copied by offload" },
	[COL_EMULATED] = { "EMULATED", 5, SCOLS_FL_RIGHT, KIND_COUNT,
		"copies into the device that the kernel read and wrote" },
	[COL_EMULATED_BYTES] = { "EMULATED-BYTES", 6, SCOLS_FL_RIGHT, KIND_SIZE,
		"bytes copied by emulation" },
	[COL_FAILED] = { "FAILED", 5, SCOLS_FL_RIGHT, KIND_COUNT,
		"copies into the device that stopped short" },
	[COL_FAILED_BYTES] = { "FAILED-BYTES", 6, SCOLS_FL_RIGHT, KIND_SIZE,
		"bytes the failed copies did not copy" },
	[COL_DM_NAME] = { "DM-NAME", 0.1, 0, KIND_STR, "device-mapper name" },
	[COL_UUID] = { "UUID", 0.1, 0, KIND_STR, "device-mapper uuid" },
	[COL_SLAVES] = { "SLAVES", 0.1, 0, KIND_STR,
		"devices this one is built on, joined by ','" },
	[COL_HOLDERS] = { "HOLDERS", 0.1, 0, KIND_STR,
		"devices built on this one, joined by ','" },
	[COL_VERDICT] = { "VERDICT", 8, 0, KIND_STR,
		"how a copy inside the device goes: offload, emulate-kernel, userspace" },
	[COL_NOTE] = { "NOTE", 0.3, SCOLS_FL_TRUNC, KIND_STR, "why, in words" },
};

#define NCOLUMNS	(sizeof(infos) / sizeof(infos[0]))

static const int default_columns[] = {
	COL_NAME, COL_SIZE, COL_LOGSEC, COL_COPY_MAX_HW, COL_COPY_MAX,
	COL_OFFLOADED, COL_EMULATED, COL_FAILED, COL_TYPE, COL_NOTE,
};

struct status_opts {
	int columns[2 * NCOLUMNS];
	size_t ncolumns;
	bool json, raw, noheadings, bytes;
};

static void usage(void)
{
	printf("Usage:\n"
	       " %1$s [options] <command> [<args>]\n"
	       " %1$s status [options] [<device>...]\n"
	       "\n"
	       "Copy offload of block devices and device-mapper copy targets.\n"
	       "\n"
	       "Commands:\n"
	       " status        copy limits, counters and what a copy would get\n"
	       "\n"
	       "Options:\n"
	       " -h, --help     display this help\n"
	       " -V, --version  display version\n"
	       "\n"
	       "Status options:\n"
	       " -J, --json             use JSON output format\n"
	       " -r, --raw              use raw output format\n"
	       " -o, --output <list>    output columns ('-o help' lists them,\n"
	       "                        '+<list>' adds to the default)\n"
	       " -n, --noheadings       don't print headings\n"
	       " -b, --bytes            print sizes in bytes\n"
	       "\n"
	       "A device is a kernel name (nvme0n1, dm-3), a path or MAJ:MIN;\n"
	       "without one, every block device with a size.\n"
	       "\n"
	       "Exit status: 0 success, 1 failure, 2 usage error,\n"
	       "64 some devices failed.\n", prog);
}

static void list_columns(void)
{
	size_t i;

	printf("Available output columns:\n");
	for (i = 0; i < NCOLUMNS; i++)
		printf(" %15s  %s\n", infos[i].name, infos[i].help);
}

static int column_id(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NCOLUMNS; i++)
		if (strlen(infos[i].name) == len &&
		    !strncasecmp(infos[i].name, name, len))
			return (int)i;
	return -1;
}

/* -o LIST, or -o +LIST to add to the default columns. */
static void parse_columns(const char *list, struct status_opts *o)
{
	const char *p, *end;
	int id;

	o->ncolumns = 0;
	if (*list == '+') {
		memcpy(o->columns, default_columns, sizeof(default_columns));
		o->ncolumns = sizeof(default_columns) / sizeof(default_columns[0]);
		list++;
	}
	for (p = list; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ',');
		if (end == p)
			usage_error("empty column name in '%s'", list);
		id = column_id(p, (size_t)(end - p));
		if (id < 0)
			usage_error("unknown column '%.*s'", (int)(end - p), p);
		if (o->ncolumns == sizeof(o->columns) / sizeof(o->columns[0]))
			usage_error("too many columns");
		o->columns[o->ncolumns++] = id;
	}
	if (!o->ncolumns)
		usage_error("no columns in '%s'", list);
}

/* Like lsblk: "0B", "512B", "4K", "1.5G", one decimal when it helps. */
static void human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	unsigned int u = 0;
	double v = (double)bytes;

	while (v >= 1024 && u < sizeof(units) - 2) {
		v /= 1024;
		u++;
	}
	if (u && v < 1023.95 && (uint64_t)(v * 10 + 0.5) % 10)
		snprintf(buf, len, "%.1f%c", v, units[u]);
	else if (u && v >= 1023.95 && u < sizeof(units) - 2)
		snprintf(buf, len, "1%c", units[u + 1]);
	else
		snprintf(buf, len, "%.0f%c", v, units[u]);
}

static void join_names(char **names, size_t n, char *buf, size_t len)
{
	size_t i, used = 0;
	int w;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		w = snprintf(buf + used, len - used, "%s%s", i ? "," : "",
			     names[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* Only a dm device of the running kernel has a table to ask for. */
static void dm_types(struct dmcopy_ctx *ctx, bool real_sysfs,
		     const struct dmcopy_caps *caps, char *buf, size_t len)
{
	struct dmcopy_dm_target *targets;
	size_t count;

	buf[0] = '\0';
	if (!real_sysfs || !caps->is_dm || !caps->dm_name[0])
		return;
	/* not root: the column stays empty, the rest is still true */
	if (dmcopy_dm_targets(ctx, caps->dm_name, &targets, &count) < 0)
		return;
	dmcopy_dm_types(targets, count, buf, len);
	free(targets);
}

struct row_data {
	struct dmcopy_ctx *ctx;
	bool real_sysfs;
	const struct dmcopy_caps *caps;
	const struct status_opts *opts;
};

static bool has_copy_value(const struct dmcopy_caps *caps, int id)
{
	switch (id) {
	case COL_COPY_MAX_HW:
	case COL_COPY_MAX:
		return caps->has_copy_sysfs;
	case COL_OFFLOADED:
	case COL_OFFLOADED_BYTES:
	case COL_EMULATED:
	case COL_EMULATED_BYTES:
	case COL_FAILED:
	case COL_FAILED_BYTES:
		return caps->has_copy_stat;
	}
	return true;
}

static uint64_t number_of(const struct dmcopy_caps *caps, int id)
{
	switch (id) {
	case COL_SIZE: return caps->size_bytes;
	case COL_LOGSEC: return caps->logical_block_size;
	case COL_COPY_MAX_HW: return caps->copy_max_hw_bytes;
	case COL_COPY_MAX: return caps->copy_max_bytes;
	case COL_OFFLOADED: return caps->offloaded_copies;
	case COL_OFFLOADED_BYTES: return caps->offloaded_bytes;
	case COL_EMULATED: return caps->emulated_copies;
	case COL_EMULATED_BYTES: return caps->emulated_bytes;
	case COL_FAILED: return caps->failed_copies;
	case COL_FAILED_BYTES: return caps->failed_bytes;
	}
	return 0;
}

static void text_of(const struct row_data *rd, int id, char *buf, size_t len)
{
	const struct dmcopy_caps *caps = rd->caps;
	struct dmcopy_verdict v;

	buf[0] = '\0';
	switch (id) {
	case COL_NAME:
		snprintf(buf, len, "%s", caps->name);
		break;
	case COL_TYPE:
		dm_types(rd->ctx, rd->real_sysfs, caps, buf, len);
		break;
	case COL_DM_NAME:
		snprintf(buf, len, "%s", caps->dm_name);
		break;
	case COL_UUID:
		snprintf(buf, len, "%s", caps->dm_uuid);
		break;
	case COL_SLAVES:
		join_names(caps->slaves, caps->nr_slaves, buf, len);
		break;
	case COL_HOLDERS:
		join_names(caps->holders, caps->nr_holders, buf, len);
		break;
	case COL_VERDICT:
	case COL_NOTE:
		dmcopy_caps_verdict(caps, &v);
		snprintf(buf, len, "%s", id == COL_VERDICT ?
			 dmcopy_path_name(v.path) : v.reason);
		break;
	}
}

static int add_row(struct libscols_table *tb, const struct row_data *rd)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	char buf[4096];
	size_t i;

	if (!ln)
		return -ENOMEM;
	for (i = 0; i < rd->opts->ncolumns; i++) {
		int id = rd->opts->columns[i];
		uint64_t n = number_of(rd->caps, id);

		if (infos[id].kind == KIND_STR)
			text_of(rd, id, buf, sizeof(buf));
		else if (!has_copy_value(rd->caps, id))
			buf[0] = '\0';	/* JSON null: not 0, unknown */
		else if (infos[id].kind == KIND_SIZE && !rd->opts->bytes)
			human_size(n, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%" PRIu64, n);
		if (scols_line_set_data(ln, i, buf))
			return -ENOMEM;
	}
	return 0;
}

static struct libscols_table *new_table(const struct status_opts *o)
{
	struct libscols_table *tb = scols_new_table();
	size_t i;

	if (!tb)
		return NULL;
	scols_table_enable_json(tb, o->json);
	scols_table_set_name(tb, "devices");
	scols_table_enable_raw(tb, o->raw);
	scols_table_enable_noheadings(tb, o->noheadings);
	for (i = 0; i < o->ncolumns; i++) {
		const struct colinfo *ci = &infos[o->columns[i]];
		struct libscols_column *cl;

		cl = scols_table_new_column(tb, ci->name, ci->whint, ci->flags);
		if (!cl) {
			scols_unref_table(tb);
			return NULL;
		}
		if (ci->kind == KIND_COUNT || (ci->kind == KIND_SIZE && o->bytes))
			scols_column_set_json_type(cl, SCOLS_JSON_NUMBER);
	}
	return tb;
}

/* One device into the table; 0, or -1 after saying why not. */
static int show_device(struct dmcopy_ctx *ctx, bool real_sysfs,
		       struct libscols_table *tb, const struct status_opts *o,
		       const char *name)
{
	struct dmcopy_caps caps;
	struct row_data rd = {
		.ctx = ctx, .real_sysfs = real_sysfs, .caps = &caps, .opts = o,
	};
	int r;

	r = dmcopy_device_caps(ctx, name, &caps);
	if (r < 0) {
		warnx("%s", dmcopy_last_error(ctx));
		return -1;
	}
	r = add_row(tb, &rd);
	dmcopy_caps_release(&caps);
	if (r < 0) {
		warnx("out of memory");
		return -1;
	}
	return 0;
}

/*
 * Every disk in sysfs with a size: unused loop and ram devices (size 0)
 * have nothing to copy, as lsblk leaves them out.
 */
static int show_all(struct dmcopy_ctx *ctx, bool real_sysfs,
		    struct libscols_table *tb, const struct status_opts *o,
		    int *failed)
{
	struct dmcopy_caps caps;
	char **names;
	int i, n, tried = 0;

	n = dmcopy_list_devices(ctx, &names);
	if (n < 0) {
		warnx("%s", dmcopy_last_error(ctx));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (!dmcopy_device_caps(ctx, names[i], &caps)) {
			bool empty = !caps.size_bytes;

			dmcopy_caps_release(&caps);
			if (empty)
				continue;
		}
		tried++;
		if (show_device(ctx, real_sysfs, tb, o, names[i]) < 0)
			(*failed)++;
	}
	dmcopy_free_names(names, (size_t)n);
	return tried;
}

static int exit_status(int shown, int failed)
{
	if (!failed)
		return EXIT_SUCCESS;
	return failed < shown ? EXIT_SOME_OK : EXIT_FAILURE;
}

static void parse_status_options(int argc, char **argv, struct status_opts *o)
{
	static const struct option longopts[] = {
		{ "json",       no_argument,       NULL, 'J' },
		{ "raw",        no_argument,       NULL, 'r' },
		{ "output",     required_argument, NULL, 'o' },
		{ "noheadings", no_argument,       NULL, 'n' },
		{ "bytes",      no_argument,       NULL, 'b' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *columns = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "Jro:nbh", longopts, NULL)) != -1) {
		switch (c) {
		case 'J': o->json = true; break;
		case 'r': o->raw = true; break;
		case 'o': columns = optarg; break;
		case 'n': o->noheadings = true; break;
		case 'b': o->bytes = true; break;
		case 'h': usage(); exit(EXIT_SUCCESS);
		default: bad_option(argv);
		}
	}
	if (o->json && o->raw)
		usage_error("--json and --raw are mutually exclusive");
	if (columns && !strcasecmp(columns, "help")) {
		list_columns();
		exit(EXIT_SUCCESS);
	}
	if (columns) {
		parse_columns(columns, o);
	} else {
		memcpy(o->columns, default_columns, sizeof(default_columns));
		o->ncolumns = sizeof(default_columns) / sizeof(default_columns[0]);
	}
}

static int cmd_status(int argc, char **argv)
{
	struct status_opts o = { .ncolumns = 0 };
	const char *root = getenv(ENV_SYSFS);
	struct libscols_table *tb;
	struct dmcopy_ctx *ctx;
	int i, shown = 0, failed = 0;
	bool real_sysfs = !root || !*root || !strcmp(root, "/sys");

	parse_status_options(argc, argv, &o);
	ctx = dmcopy_new(root);
	tb = ctx ? new_table(&o) : NULL;
	if (!tb) {
		warnx("out of memory");
		dmcopy_free(ctx);
		return EXIT_FAILURE;
	}

	if (optind == argc) {
		shown = show_all(ctx, real_sysfs, tb, &o, &failed);
		if (shown < 0)
			failed = shown = 1;
	}
	for (i = optind; i < argc; i++, shown++)
		if (show_device(ctx, real_sysfs, tb, &o, argv[i]) < 0)
			failed++;

	if (failed < shown || !shown)
		scols_print_table(tb);
	scols_unref_table(tb);
	dmcopy_free(ctx);
	return exit_status(shown, failed);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help",    no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd;
	int c;

	opterr = 0;	/* bad_option() says it on one line */
	/* '+': options after the command are the command's */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage();
			return EXIT_SUCCESS;
		case 'V':
			printf("%s %s\n", prog, DMCOPY_VERSION);
			return EXIT_SUCCESS;
		default:
			bad_option(argv);
		}
	}
	if (optind == argc)
		usage_error("no command given");
	cmd = argv[optind];
	if (strcmp(cmd, "status"))
		usage_error("unknown command '%s'", cmd);

	/* the command's own options, from its name on */
	argc -= optind;
	argv += optind;
	optind = 0;	/* glibc: start afresh, also its internal state */
	return cmd_status(argc, argv);
}
