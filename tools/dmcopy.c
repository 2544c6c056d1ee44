// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmcopy: copy offload of block devices and device-mapper copy targets.
 *
 *   dmcopy status [options] [DEVICE...]
 *   dmcopy create NAME DEVICE [--offset N] [--size N] [--mode M]
 *                 [--max-copy-bytes N] [--noudevsync]
 *   dmcopy remove [--force] [--noudevsync] NAME
 *   dmcopy message NAME mode auto|offload|emulate
 *   dmcopy message NAME stats-reset
 *   dmcopy copy SRC[:OFFSET] DST[:OFFSET] [--length N] [--force]
 *               [--no-offload] [--chunk N] [--progress|--quiet] [--debug]
 *
 * Exit status: 0 all went well, 1 failure, 2 usage error, 64 some of the
 * devices failed (status: the others were shown), 128 + the signal's
 * number when SIGINT or SIGTERM stopped a copy (130 for ^C; the copied
 * prefix is reported).
 */
#define _GNU_SOURCE	/* strchrnul() */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "libdmcopy.h"
#include "dmcopy.h"

#define DMCOPY_VERSION	"0.1.0"

/* as lsblk: none of the devices named was found, or only some */
#define EXIT_NONE_FOUND	32
#define EXIT_SOME_OK	64

/* DMCOPY_SYSFS: read another sysfs tree (a test fixture) than /sys. */
#define ENV_SYSFS	"DMCOPY_SYSFS"

const char *prog = "dmcopy";

void warnx(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", prog);
	exit(EXIT_USAGE);
}

/*
 * The report getopt_long() would print, on one line, then exit 2. @c is
 * what it returned: ':' for a missing argument (the option strings start
 * with ':'), '?' for anything else.
 */
void bad_option(char **argv, int c)
{
	const char *arg = argv[optind - 1];
	bool is_long = !strncmp(arg, "--", 2);

	if (c == ':' && is_long)
		usage_error("option '%s' requires an argument", arg);
	if (c == ':')
		usage_error("option requires an argument -- '%c'", optopt);
	/* a long option that takes no argument was given one */
	if (is_long && optopt && strchr(arg, '='))
		usage_error("option '%.*s' doesn't allow an argument",
			    (int)strcspn(arg, "="), arg);
	if (optopt && optopt < 256)
		usage_error("invalid option -- '%c'", optopt);
	usage_error("unrecognized option '%s'", arg);
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
	COL_LAYER,
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
	[COL_LAYER] = { "LAYER", 0.1, 0, KIND_STR,
		"the device of the stack below whose limits decide (a copy target, offload off, the disk)" },
	[COL_NOTE] = { "NOTE", 0.3, SCOLS_FL_TRUNC, KIND_STR, "why, in words" },
};

#define NCOLUMNS	(sizeof(infos) / sizeof(infos[0]))

static const int default_columns[] = {
	COL_NAME, COL_SIZE, COL_LOGSEC, COL_COPY_MAX_HW, COL_COPY_MAX,
	COL_OFFLOADED, COL_EMULATED, COL_FAILED, COL_TYPE, COL_LAYER, COL_NOTE,
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
	       " %1$s create [options] <name> <device>\n"
	       " %1$s remove [--force] [--noudevsync] <name>\n"
	       " %1$s message <name> mode auto|offload|emulate\n"
	       " %1$s message <name> stats-reset\n"
	       " %1$s copy [options] <src>[:<offset>] <dst>[:<offset>]\n"
	       " %1$s provision --golden <device> --vg <vg> --count <n> [options]\n"
	       " %1$s deprovision --vg <vg> (--tag <tag> | <name>...)\n"
	       "\n"
	       "Copy offload of block devices and device-mapper copy targets.\n"
	       "\n"
	       "Commands:\n"
	       " status        copy limits, counters and what a copy would get\n"
	       " create        a mapped device of one copy target (uuid COPY-<name>)\n"
	       " remove        remove a mapped device\n"
	       " message       change a copy target's mode, or reset its counters\n"
	       " copy          copy a range with copy_file_range(), offloaded if it can\n"
	       " provision     clones of a golden image as LVM volumes ('provision --help')\n"
	       " deprovision   remove the clones provision made\n"
	       "\n"
	       "Options:\n"
	       " -h, --help     display this help\n"
	       " -V, --version  display version\n"
	       "\n"
	       "Status options:\n"
	       " -J, --json             use JSON output format (sizes in bytes)\n"
	       " -r, --raw              use raw output format\n"
	       " -o, --output <list>    output columns ('-o help' lists them,\n"
	       "                        '+<list>' adds to the default)\n"
	       " -n, --noheadings       don't print headings\n"
	       " -b, --bytes            print sizes in bytes\n"
	       "\n"
	       "A device is a kernel name (nvme0n1, dm-3), a path or MAJ:MIN;\n"
	       "without one, every block device with a size.\n"
	       "\n"
	       "Create options:\n"
	       "     --offset <size>          where the target starts on <device> (0)\n"
	       " -s, --size <size>            its size (the rest of <device>)\n"
	       " -m, --mode <mode>            auto, offload or emulate (auto)\n"
	       "     --max-copy-bytes <size>  the target's copy limit\n"
	       "     --noudevsync             do not wait for udev (also: remove)\n"
	       "\n"
	       "Remove options:\n"
	       " -f, --force                  also a device create did not make\n"
	       "\n"
	       "Copy options:\n"
	       " -l, --length <size>    bytes to copy (what fits in both)\n"
	       " -f, --force            overwrite signatures; twice: devices in use\n"
	       "     --no-offload       read and write here, no copy_file_range()\n"
	       "     --chunk <size>     bytes per call (64M)\n"
	       " -p, --progress         show progress, also when not on a terminal\n"
	       " -q, --quiet            no progress and no report\n"
	       "     --debug            say whether the copy was offloaded\n"
	       "\n"
	       "Sizes and offsets are bytes, with an optional K, M, G or T suffix\n"
	       "(powers of 1024). See dmcopy(8).\n"
	       "\n"
	       "Exit status: 0 success, 1 failure, 2 usage error,\n"
	       "64 some devices failed (status), 130 copy interrupted.\n", prog);
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

void human_size(uint64_t bytes, char *buf, size_t len)
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

/*
 * The kernel name of the layer that decides, and for a dm device whose
 * decider lies below, why ("nullb0 offloads copies"). A device with no
 * stack to walk decides for itself.
 */
static void decider(struct dmcopy_ctx *ctx, const struct dmcopy_caps *caps,
		    char *buf, size_t len)
{
	struct dmcopy_layer **layers;
	size_t count, d;

	snprintf(buf, len, "%s", caps->name);
	if (!caps->nr_slaves)
		return;
	if (dmcopy_device_stack(ctx, caps->name, &layers, &count) < 0)
		return;
	d = dmcopy_stack_decider(layers, count, NULL, 0);
	snprintf(buf, len, "%s", layers[d]->caps.name);
	dmcopy_stack_free(layers, count);
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

/* A dm-clone device (dmcopy provision --hydrate): how far it is. */
/*
 * How dm-kcopyd copies a dm-clone's regions: offered to the device when
 * both its source and destination can offload (patch 0013), else read
 * and written in the kernel. Into @buf, after what is there.
 */
static void hydration_path(struct dmcopy_ctx *ctx, const char *dm_name,
			   char *buf, size_t len)
{
	size_t used = strlen(buf);
	char src[32], dst[32];
	struct dmcopy_verdict vs, vd;
	struct dmcopy_caps s = { .size = sizeof(s) }, d = { .size = sizeof(d) };

	if (dmcopy_dm_clone_devices(ctx, dm_name, src, dst, sizeof(src)) ||
	    dmcopy_device_caps(ctx, src, &s)) {
		snprintf(buf + used, len - used, "through dm-kcopyd");
		return;
	}
	if (dmcopy_device_caps(ctx, dst, &d)) {
		dmcopy_caps_release(&s);
		snprintf(buf + used, len - used, "through dm-kcopyd");
		return;
	}
	dmcopy_caps_verdict(&s, &vs);
	dmcopy_caps_verdict(&d, &vd);
	if (vs.path == DMCOPY_OFFLOAD && vd.path == DMCOPY_OFFLOAD)
		snprintf(buf + used, len - used,
			 "through dm-kcopyd, offered to the device (%s, %s)",
			 s.name, d.name);
	else
		snprintf(buf + used, len - used,
			 "through dm-kcopyd, read and written in the kernel (%s)",
			 vs.path != DMCOPY_OFFLOAD ? vs.reason : vd.reason);
	dmcopy_caps_release(&s);
	dmcopy_caps_release(&d);
}

static void hydration(const struct row_data *rd, char *buf, size_t len)
{
	const struct dmcopy_caps *caps = rd->caps;
	uint64_t hydrated, regions;

	buf[0] = '\0';
	if (!rd->real_sysfs || !caps->is_dm || !caps->dm_name[0])
		return;
	if (dmcopy_dm_hydration(rd->ctx, caps->dm_name, &hydrated, &regions) ||
	    !regions)
		return;
	snprintf(buf, len, "hydrating: %.1f%% (%" PRIu64 " of %" PRIu64 " regions) ",
		 hydrated == regions ? 100.0 :
		 (double)(hydrated * 1000 / regions) / 10, hydrated, regions);
	hydration_path(rd->ctx, caps->dm_name, buf, len);
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
		dmcopy_caps_verdict(caps, &v);
		snprintf(buf, len, "%s", dmcopy_path_name(v.path));
		break;
	case COL_NOTE:
		/* a dm-clone hydrating copies, whatever it passes on itself */
		hydration(rd, buf, len);
		if (buf[0])
			break;
		dmcopy_caps_verdict(caps, &v);
		snprintf(buf, len, "%s", v.reason);
		break;
	case COL_LAYER:
		decider(rd->ctx, caps, buf, len);
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
		else if (infos[id].kind == KIND_SIZE && !rd->opts->bytes &&
			 !rd->opts->json)
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
		/* JSON: sizes in bytes, so that every number is one */
		if (ci->kind == KIND_COUNT || (ci->kind == KIND_SIZE && o->json))
			scols_column_set_json_type(cl, SCOLS_JSON_NUMBER);
	}
	return tb;
}

/* One device into the table; 0, or -1 after saying why not. */
static int show_device(struct dmcopy_ctx *ctx, bool real_sysfs,
		       struct libscols_table *tb, const struct status_opts *o,
		       const char *name)
{
	struct dmcopy_caps caps = { .size = sizeof(caps) };
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
	struct dmcopy_caps caps = { .size = sizeof(caps) };
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
	return failed < shown ? EXIT_SOME_OK : EXIT_NONE_FOUND;
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

	while ((c = getopt_long(argc, argv, ":Jro:nbh", longopts, NULL)) != -1) {
		switch (c) {
		case 'J': o->json = true; break;
		case 'r': o->raw = true; break;
		case 'o': columns = optarg; break;
		case 'n': o->noheadings = true; break;
		case 'b': o->bytes = true; break;
		case 'h': usage(); exit(EXIT_SUCCESS);
		default: bad_option(argv, c);
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
		if (shown < 0) {
			scols_unref_table(tb);
			dmcopy_free(ctx);
			return EXIT_FAILURE;
		}
	}
	for (i = optind; i < argc; i++, shown++)
		if (show_device(ctx, real_sysfs, tb, &o, argv[i]) < 0)
			failed++;

	/* JSON readers get an array even when it is empty, as from lsblk */
	if (failed < shown || !shown || o.json)
		scols_print_table(tb);
	scols_unref_table(tb);
	dmcopy_free(ctx);
	return exit_status(shown, failed);
}

/* Long options without a short one. */
enum {
	OPT_OFFSET = 256,
	OPT_MAX_COPY_BYTES,
	OPT_NOUDEVSYNC,
	OPT_NO_OFFLOAD,
	OPT_CHUNK,
	OPT_DEBUG,
};

/*
 * A size option's value, or a usage error naming the option. The kernel
 * takes offsets and lengths below 2^63 (loff_t); what is larger cannot
 * be meant, and UINT64_MAX is the library's "whole device" length.
 */
uint64_t size_arg(const char *option, const char *arg)
{
	uint64_t v;
	int r = dmcopy_parse_size(arg, &v);

	if (r == -ERANGE || (!r && v > INT64_MAX))
		usage_error("%s '%s': too large (at most %" PRId64 " bytes)",
			    option, arg, INT64_MAX);
	if (r)
		usage_error("invalid size '%s' for %s", arg, option);
	return v;
}

/* Not a whole number of 512-byte sectors: a usage error. */
static void check_sectors(const char *option, uint64_t v)
{
	if (v % 512)
		usage_error("%s %" PRIu64 ": not a multiple of 512 bytes", option, v);
}

struct dmcopy_ctx *new_ctx(void)
{
	/* the real /sys: DMCOPY_SYSFS is for status only */
	struct dmcopy_ctx *ctx = dmcopy_new(NULL);

	if (!ctx) {
		warnx("out of memory");
		exit(EXIT_FAILURE);
	}
	return ctx;
}

static int fail_with(struct dmcopy_ctx *ctx)
{
	warnx("%s", dmcopy_last_error(ctx));
	dmcopy_free(ctx);
	return EXIT_FAILURE;
}

struct create_opts {
	const char *name, *device;
	uint64_t offset, size, max_copy_bytes;
	bool has_size, noudevsync;
	enum dmcopy_mode mode;
};

static void parse_create_options(int argc, char **argv, struct create_opts *o)
{
	static const struct option longopts[] = {
		{ "offset",         required_argument, NULL, OPT_OFFSET },
		{ "size",           required_argument, NULL, 's' },
		{ "mode",           required_argument, NULL, 'm' },
		{ "max-copy-bytes", required_argument, NULL, OPT_MAX_COPY_BYTES },
		{ "noudevsync",     no_argument,       NULL, OPT_NOUDEVSYNC },
		{ "help",           no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":s:m:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_OFFSET:
			o->offset = size_arg("--offset", optarg);
			check_sectors("--offset", o->offset);
			break;
		case 's':
			o->size = size_arg("--size", optarg);
			check_sectors("--size", o->size);
			if (!o->size)
				usage_error("--size 0: nothing to map");
			o->has_size = true;
			break;
		case 'm':
			if (dmcopy_parse_mode(optarg, &o->mode))
				usage_error("invalid mode '%s' (auto, offload or emulate)",
					    optarg);
			break;
		case OPT_MAX_COPY_BYTES:
			o->max_copy_bytes = size_arg("--max-copy-bytes", optarg);
			check_sectors("--max-copy-bytes", o->max_copy_bytes);
			if (!o->max_copy_bytes)
				usage_error("--max-copy-bytes 0: must be at least 512");
			break;
		case OPT_NOUDEVSYNC: o->noudevsync = true; break;
		case 'h': usage(); exit(EXIT_SUCCESS);
		default: bad_option(argv, c);
		}
	}
	if (argc - optind < 2)
		usage_error(argc == optind ? "create: no name given" :
			    "create: no device given");
	if (argc - optind > 2)
		usage_error("create: unexpected argument '%s'", argv[optind + 2]);
	o->name = argv[optind];
	o->device = argv[optind + 1];
}

static int cmd_create(int argc, char **argv)
{
	struct create_opts o = { .mode = DMCOPY_MODE_AUTO };
	struct dmcopy_segment seg = {
		.size = sizeof(seg), .type = DMCOPY_TARGET_COPY,
	};
	struct dmcopy_table *table;
	struct dmcopy_caps caps = { .size = sizeof(caps) };
	struct dmcopy_ctx *ctx;
	int r;

	parse_create_options(argc, argv, &o);
	ctx = new_ctx();
	dmcopy_set_udev_sync(ctx, !o.noudevsync);
	if (!o.has_size) {
		if (dmcopy_device_caps(ctx, o.device, &caps))
			return fail_with(ctx);
		o.size = caps.size_bytes > o.offset ? caps.size_bytes - o.offset : 0;
		dmcopy_caps_release(&caps);
		if (!o.size) {
			warnx("%s: --offset %" PRIu64 " is at or past its end",
			      o.device, o.offset);
			dmcopy_free(ctx);
			return EXIT_FAILURE;
		}
	}
	seg.device = o.device;
	seg.offset = o.offset;
	seg.length = o.size;
	seg.mode = o.mode;
	seg.max_copy_bytes = o.max_copy_bytes;
	table = dmcopy_table_new(ctx);
	if (!table) {
		warnx("out of memory");
		dmcopy_free(ctx);
		return EXIT_FAILURE;
	}
	r = dmcopy_table_add_segment(table, &seg);
	if (!r)
		r = dmcopy_dm_create(ctx, o.name, table);
	dmcopy_table_free(table);
	if (r)
		return fail_with(ctx);
	dmcopy_free(ctx);
	return EXIT_SUCCESS;
}

static int cmd_remove(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force",      no_argument, NULL, 'f' },
		{ "noudevsync", no_argument, NULL, OPT_NOUDEVSYNC },
		{ "help",       no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char uuid[DMCOPY_UUID_LEN];
	struct dmcopy_ctx *ctx;
	bool noudevsync = false, force = false;
	int c;

	while ((c = getopt_long(argc, argv, ":fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': force = true; break;
		case OPT_NOUDEVSYNC: noudevsync = true; break;
		case 'h': usage(); exit(EXIT_SUCCESS);
		default: bad_option(argv, c);
		}
	}
	if (optind == argc)
		usage_error("remove: no name given");
	if (argc - optind > 1)
		usage_error("remove: unexpected argument '%s'", argv[optind + 1]);
	ctx = new_ctx();
	dmcopy_set_udev_sync(ctx, !noudevsync);
	/* only what dmcopy create made: an LV or a multipath map is not ours */
	if (dmcopy_dm_uuid(ctx, argv[optind], uuid, sizeof(uuid)))
		return fail_with(ctx);
	if (!force && strncmp(uuid, DMCOPY_UUID_PREFIX, strlen(DMCOPY_UUID_PREFIX))) {
		warnx("%s: not made by dmcopy create (uuid '%s', not %s...); --force removes it anyway",
		      argv[optind], uuid, DMCOPY_UUID_PREFIX);
		dmcopy_free(ctx);
		return EXIT_FAILURE;
	}
	if (dmcopy_dm_remove(ctx, argv[optind]))
		return fail_with(ctx);
	dmcopy_free(ctx);
	return EXIT_SUCCESS;
}

static int cmd_message(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum dmcopy_mode mode;
	struct dmcopy_ctx *ctx;
	char text[64];
	const char *word;
	int c, nargs;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(); exit(EXIT_SUCCESS);
		default: bad_option(argv, c);
		}
	}
	nargs = argc - optind;
	if (nargs < 1)
		usage_error("message: no name given");
	if (nargs < 2)
		usage_error("message: no message given (mode or stats-reset)");
	word = argv[optind + 1];
	if (!strcmp(word, "mode")) {
		if (nargs < 3)
			usage_error("message: mode needs auto, offload or emulate");
		if (dmcopy_parse_mode(argv[optind + 2], &mode))
			usage_error("invalid mode '%s' (auto, offload or emulate)",
				    argv[optind + 2]);
		if (nargs > 3)
			usage_error("message: unexpected argument '%s'", argv[optind + 3]);
		snprintf(text, sizeof(text), "mode %s", dmcopy_mode_name(mode));
	} else if (!strcmp(word, "stats-reset")) {
		if (nargs > 2)
			usage_error("message: unexpected argument '%s'", argv[optind + 2]);
		snprintf(text, sizeof(text), "stats reset");
	} else {
		usage_error("unknown message '%s' (mode or stats-reset)", word);
	}
	ctx = new_ctx();
	/* dmcopy create makes one target: the message goes to sector 0 */
	if (dmcopy_message(ctx, argv[optind], 0, text))
		return fail_with(ctx);
	dmcopy_free(ctx);
	return EXIT_SUCCESS;
}

/* ---------------------------------------------------------------- copy */

volatile sig_atomic_t stop_signal;

static void on_signal(int signo)
{
	stop_signal = signo;
}

double seconds_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) +
		(double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* "[=========>          ]  45%  1.2G of 2.5G  310M/s  ETA 0:04" */
static void progress_bar(struct progress *p, uint64_t done, uint64_t total)
{
	char bar[31], d[16], t[16], rate[16], eta[32];
	double secs = seconds_since(&p->start);
	unsigned int pct = total ? (unsigned int)(done * 100.0 / total) : 100;
	size_t fill = (size_t)pct * 30 / 100, i;

	for (i = 0; i < 30; i++)
		bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
	bar[30] = '\0';
	human_size(done, d, sizeof(d));
	human_size(total, t, sizeof(t));
	if (secs > 0.05 && done) {
		double bps = done / secs;
		uint64_t left = (uint64_t)((total - done) / bps);

		human_size((uint64_t)bps, rate, sizeof(rate));
		snprintf(eta, sizeof(eta), "%" PRIu64 ":%02u", left / 60,
			 (unsigned int)(left % 60));
	} else {
		snprintf(rate, sizeof(rate), "-");
		snprintf(eta, sizeof(eta), "-:--");
	}
	fprintf(stderr, "\r[%s] %3u%%  %s of %s  %s/s  ETA %s \033[K", bar, pct,
		d, t, rate, eta);
	p->shown = true;
}

void on_progress(uint64_t done, uint64_t total, void *data)
{
	struct progress *p = data;
	char line[sizeof(p->last)];

	if (p->kind == PROGRESS_BAR) {
		progress_bar(p, done, total);
	} else if (p->kind == PROGRESS_LINES) {
		if (dmcopy_format_progress(done, total, line, sizeof(line)) < 0 ||
		    !strcmp(line, p->last))
			return;
		/* as qemu-img -p: each line ends in '\r', the last in '\n' */
		fprintf(p->out, "%s\r", line);
		snprintf(p->last, sizeof(p->last), "%s", line);
		p->shown = true;
		fflush(p->out);
	}
	fflush(stderr);
}

void progress_end(struct progress *p)
{
	if (p->shown)
		fputc('\n', p->kind == PROGRESS_LINES ? p->out : stderr);
}

struct copy_args {
	char src[DMCOPY_PATH_LEN], dst[DMCOPY_PATH_LEN];
	uint64_t src_off, dst_off, length;
	bool progress, quiet, debug;
	struct dmcopy_copy_opts opts;
};

static void parse_spec(const char *spec, char *path, uint64_t *off)
{
	struct dmcopy_ctx *ctx = new_ctx();

	if (dmcopy_parse_copy_spec(ctx, spec, path, DMCOPY_PATH_LEN, off)) {
		char msg[600];

		snprintf(msg, sizeof(msg), "%s", dmcopy_last_error(ctx));
		dmcopy_free(ctx);
		usage_error("%s", msg);
	}
	dmcopy_free(ctx);
}

static void parse_copy_options(int argc, char **argv, struct copy_args *a)
{
	static const struct option longopts[] = {
		{ "length",     required_argument, NULL, 'l' },
		{ "force",      no_argument,       NULL, 'f' },
		{ "no-offload", no_argument,       NULL, OPT_NO_OFFLOAD },
		{ "chunk",      required_argument, NULL, OPT_CHUNK },
		{ "progress",   no_argument,       NULL, 'p' },
		{ "quiet",      no_argument,       NULL, 'q' },
		{ "debug",      no_argument,       NULL, OPT_DEBUG },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":l:fpqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			a->length = size_arg("--length", optarg);
			if (!a->length)
				usage_error("--length 0: nothing to copy");
			break;
		/* as mkfs: -f for signatures, twice for a device in use */
		case 'f':
			if (a->opts.force)
				a->opts.force_in_use = true;
			a->opts.force = true;
			break;
		case OPT_NO_OFFLOAD: a->opts.no_offload = true; break;
		case OPT_CHUNK:
			a->opts.chunk_bytes = size_arg("--chunk", optarg);
			if (!a->opts.chunk_bytes)
				usage_error("--chunk 0: must be at least one block");
			break;
		case 'p': a->progress = true; break;
		case 'q': a->quiet = true; break;
		case OPT_DEBUG: a->debug = true; break;
		case 'h': usage(); exit(EXIT_SUCCESS);
		default: bad_option(argv, c);
		}
	}
	if (a->progress && a->quiet)
		usage_error("--progress and --quiet are mutually exclusive");
	if (argc - optind < 2)
		usage_error(argc == optind ? "copy: no source given" :
			    "copy: no destination given");
	if (argc - optind > 2)
		usage_error("copy: unexpected argument '%s'", argv[optind + 2]);
	parse_spec(argv[optind], a->src, &a->src_off);
	parse_spec(argv[optind + 1], a->dst, &a->dst_off);
}

void catch_signals(void)
{
	static const int signals[] = { SIGINT, SIGTERM };
	struct sigaction sa = { .sa_handler = on_signal }, old;
	size_t i;

	/* no SA_RESTART: a copy_file_range() in progress may return early */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		/* ignored by whoever started us (nohup, "cmd &"): stays so */
		if (!sigaction(signals[i], NULL, &old) && old.sa_handler == SIG_IGN)
			continue;
		sigaction(signals[i], &sa, NULL);
	}
}

/*
 * After the report of what a stopped copy did: die by the signal that
 * stopped it, as dd does, so that a shell loop around dmcopy stops too
 * (bash ends a loop only when a child died of SIGINT, not on exit 130).
 */
void die_by_signal(int signo)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };

	fflush(stdout);
	fflush(stderr);
	sigemptyset(&sa.sa_mask);
	sigaction(signo, &sa, NULL);
	raise(signo);
	/* still here: the signal is blocked */
	_exit(128 + signo);
}

static int cmd_copy(int argc, char **argv)
{
	struct copy_args a = {
		.length = DMCOPY_LENGTH_FIT, .opts.size = sizeof(a.opts),
	};
	struct progress p = { .kind = PROGRESS_NONE };
	struct dmcopy_copy_report rep = { .size = sizeof(rep) };
	struct dmcopy_ctx *ctx;
	char line[512];
	int r;

	parse_copy_options(argc, argv, &a);
	if (!a.quiet && isatty(STDERR_FILENO))
		p.kind = PROGRESS_BAR;
	else if (a.progress)
		p.kind = PROGRESS_LINES;
	/* on standard output, where callers of qemu-img convert -p read it */
	p.out = stdout;
	clock_gettime(CLOCK_MONOTONIC, &p.start);
	a.opts.progress = on_progress;
	a.opts.progress_data = &p;
	a.opts.stop = &stop_signal;
	catch_signals();

	ctx = new_ctx();
	r = dmcopy_copy(ctx, a.src, a.src_off, a.dst, a.dst_off, a.length,
			&a.opts, &rep);
	progress_end(&p);
	dmcopy_format_copy_report(&rep, line, sizeof(line));
	if (r == -EINTR || (!r && stop_signal)) {
		/* a stop that came after the last chunk still stops the caller */
		if (r)
			warnx("%s", line);
		else
			warnx("interrupted after the copy: %s", line);
		dmcopy_free(ctx);
		die_by_signal(stop_signal ? stop_signal : SIGINT);
	}
	if (r) {
		warnx("%s", dmcopy_last_error(ctx));
		if (rep.copied)
			warnx("%s", line);
		dmcopy_free(ctx);
		return EXIT_FAILURE;
	}
	if (a.debug)
		printf("copy offload: %s\n", dmcopy_copy_offload(&rep));
	if (!a.quiet && rep.refused)
		printf("%s\n", rep.refused_why);
	if (!a.quiet)
		printf("%s\n", line);
	dmcopy_free(ctx);
	return EXIT_SUCCESS;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "status",  cmd_status },
	{ "create",  cmd_create },
	{ "remove",  cmd_remove },
	{ "message", cmd_message },
	{ "copy",    cmd_copy },
	{ "provision",   cmd_provision },
	{ "deprovision", cmd_deprovision },
};

/*
 * Output that could not be written is an error, as in util-linux's
 * close_stdout(): "dmcopy status >/dev/full" must not exit 0. A reader
 * that went away (EPIPE, "| head") is not one.
 */
static void close_stdout(void)
{
	errno = 0;
	if ((fflush(stdout) || ferror(stdout) || fclose(stdout)) &&
	    errno != EPIPE) {
		if (errno)
			warnx("write error: %s", strerror(errno));
		else
			warnx("write error");
		_exit(EXIT_FAILURE);
	}
	if (fflush(stderr) || ferror(stderr))
		_exit(EXIT_FAILURE);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help",    no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd;
	size_t i;
	int c;

	atexit(close_stdout);
	opterr = 0;	/* bad_option() says it on one line */
	/* '+': options after the command are the command's */
	while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage();
			return EXIT_SUCCESS;
		case 'V':
			printf("%s %s\n", prog, DMCOPY_VERSION);
			return EXIT_SUCCESS;
		default:
			bad_option(argv, c);
		}
	}
	if (optind == argc)
		usage_error("no command given");
	cmd = argv[optind];
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			break;
	if (i == sizeof(commands) / sizeof(commands[0]))
		usage_error("unknown command '%s'", cmd);

	/* the command's own options, from its name on */
	argc -= optind;
	argv += optind;
	optind = 0;	/* glibc: start afresh, also its internal state */
	return commands[i].fn(argc, argv);
}
