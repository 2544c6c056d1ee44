// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmcopy provision: clones of a golden image as logical volumes of a volume
 * group, copied with the library's copy engine (offloaded where the
 * device copies), and dmcopy deprovision, which removes them.
 *
 * The volume group is lvm2's: every change goes through the real lvcreate,
 * lvchange and lvremove, with their messages shown. Each clone carries the
 * run's tag (--tag, default "dmcopy"), CLONE_TAG, and the tag PARTIAL_TAG
 * until its copy is complete, so that a re-run tells finished clones (kept) from
 * half-made ones (copied again) and from volumes it did not make (never
 * touched). GOLDEN_TAG_PREFIX followed by the golden image's identity
 * records what a clone was made from: a re-run with another golden image
 * refuses to take clones of the first as its own.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include <blkid.h>
#include <libsmartcols.h>

#include "libdmcopy.h"
#include "dmcopy.h"

#define PARTIAL_TAG	"dmcopy_partial"
#define CLONE_TAG	"dmcopy_clone"
#define HYDRATING_TAG	"dmcopy_hydrating"
#define GOLDEN_TAG_PREFIX "dmcopy_golden:"
#define HMETA_SUFFIX	"-hmeta"
/* dm-clone's unit of hydration, sectors: 512 KiB */
#define HYDRATE_REGION	1024U
#define DEFAULT_TAG	"dmcopy"
#define MAX_CLONES	10000
#define VERIFY_CHUNK	(4U << 20)

enum {
	OPT_GOLDEN = 256,
	OPT_VG,
	OPT_NAME,
	OPT_TAG,
	OPT_VERIFY,
	OPT_NEW_UUID,
	OPT_ROLLBACK,
	OPT_THIN,
	OPT_HYDRATE,
};

enum clone_state {
	CLONE_NEW,		/* to be created */
	CLONE_PARTIAL,		/* made by an earlier run, copy unfinished */
	CLONE_DONE,		/* made and copied by an earlier run */
	CLONE_NOT_CREATED,	/* lvcreate failed, or was not tried */
	CLONE_COPIED,		/* copied by this run */
	CLONE_FAILED,		/* copy, new UUID or verification failed */
	CLONE_INTERRUPTED,	/* a signal stopped its copy */
	CLONE_CHANGED,		/* finished earlier, written since: left alone */
	CLONE_IN_USE,		/* half made, but open: not written */
};

struct clone {
	char name[128];
	char path[320];
	enum clone_state state;
	bool created;			/* by this run */
	const char *mode;		/* "thick", "thin" or "hydrate" */
	char dm[300];			/* hydrate: the dm-clone device */
	char kname[32];			/* its kernel name, dm-N */
	char devno[32];			/* MAJ:MIN, as dm-clone logs it */
	uint64_t hydrated, regions;	/* hydrate: progress */
	uint64_t hydrated0, offloaded0;	/* hydrate: when this run began */
	struct dmcopy_copy_report rep;
	double seconds;
	int verified;			/* -1 not checked, 0 differs, 1 same */
	char error[1024];
};

struct provision {
	const char *golden, *vg, *pattern, *tag;
	const char *thin_pool;		/* --thin: clones are its snapshots */
	char golden_tag[160];		/* GOLDEN_TAG_PREFIX + its identity */
	bool golden_known;		/* the golden image is there to name */
	char origin[128];		/* their origin, a thin volume */
	struct dmcopy_copy_report import; /* the golden image into it */
	unsigned int count, jobs;
	bool verify, new_uuid, json, rollback, quiet, show_progress, hydrate;
	uint64_t size;			/* of the golden image, bytes */
	struct clone *clones;

	/* shared by the copy workers */
	pthread_mutex_t lock;
	unsigned int next;		/* the next clone to copy */
	uint64_t done_before;		/* bytes of the clones already over */
	uint64_t total;			/* bytes all copies of this run move */
	struct worker *workers;
	struct progress progress;
};

struct worker {
	struct provision *o;
	pthread_t thread;
	uint64_t done;			/* bytes of its current clone */
};

/* ---------------------------------------------------------- commands --- */

/*
 * Run @argv (an lvm2 or e2fsprogs command) with its messages (errors,
 * warnings) on our stderr; its stdout into @out (NUL-terminated), or
 * dropped when @out is NULL. Returns its exit status, or -1 when it could
 * not run or died of a signal. In its own process group, so that ^C at the
 * terminal reaches only us.
 */
static int run(char *const argv[], char *out, size_t outlen)
{
	int fds[2] = { -1, -1 };
	size_t got = 0;
	pid_t pid;
	int status;

	if (out && pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		if (out) {
			close(fds[0]);
			close(fds[1]);
		}
		return -1;
	}
	if (!pid) {
		static const char msg[] = ": cannot run this command\n";
		int null = out ? -1 : open("/dev/null", O_WRONLY);

		/* its notices ("Logical volume created") are not ours */
		dup2(out ? fds[1] : null, STDOUT_FILENO);
		/*
		 * ^C is for us: we stop between steps, the command in hand
		 * (an lvcreate, a tune2fs) finishes rather than dies half way.
		 */
		setpgid(0, 0);
		execvp(argv[0], argv);
		/* only async-signal-safe calls in the child of a threaded fork */
		if (write(STDERR_FILENO, argv[0], strlen(argv[0])) < 0 ||
		    write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(127);
		_exit(127);
	}
	if (out) {
		ssize_t n;

		char drain[4096];

		close(fds[1]);
		/* what does not fit is read and dropped: the child must end */
		while ((n = got < outlen - 1 ?
			    read(fds[0], out + got, outlen - 1 - got) :
			    read(fds[0], drain, sizeof(drain))) > 0 ||
		       (n < 0 && errno == EINTR)) {
			if (n > 0 && got < outlen - 1)
				got += n;
		}
		close(fds[0]);
		out[got] = '\0';
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
	return -1;
}

/* LVM tags and names: letters, digits and "_+.-" (lvm(8) takes a few more). */
static bool lvm_word(const char *s)
{
	if (!*s || *s == '-')
		return false;
	for (; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && !strchr("_+.-", *s))
			return false;
	return true;
}

struct lv {
	char name[128];
	uint64_t size;
	char attr[16];		/* lv_attr: 't' first for a thin pool */
	char pool[128];		/* pool_lv: a thin volume's pool */
	double data_percent;	/* a thin pool's data in use */
	char tags[1024];	/* comma-separated, as lvs prints them */
};

static bool has_tag(const struct lv *lv, const char *tag)
{
	size_t n = strlen(tag);
	const char *p = lv->tags;

	while (*p) {
		if (!strncmp(p, tag, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchrnul(p, ',');
		if (*p)
			p++;
	}
	return false;
}

/* The first line of a sysfs file of block device @dev, "" if none. */
static void sysfs_line(dev_t dev, const char *file, char *buf, size_t len)
{
	char path[128];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s", major(dev),
		 minor(dev), file);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/*
 * The golden image's tag, from what stays the same across reboots and
 * re-creation: a dm device's UUID (an LV keeps it through renames), else
 * its dm name, else the disk's WWID, else the path given; what lvm does
 * not take in a tag becomes '_'.
 */
static void golden_tag(const char *golden, char *tag, size_t len)
{
	char id[PATH_MAX] = "", *p;
	struct stat st;

	if (!stat(golden, &st) && S_ISBLK(st.st_mode)) {
		sysfs_line(st.st_rdev, "dm/uuid", id, sizeof(id));
		if (!id[0]) {
			sysfs_line(st.st_rdev, "dm/name", id + 3,
				   sizeof(id) - 3);
			if (id[3])
				memcpy(id, "dm:", 3);
		}
		if (!id[0])
			sysfs_line(st.st_rdev, "wwid", id, sizeof(id));
		if (!id[0])
			sysfs_line(st.st_rdev, "device/wwid", id, sizeof(id));
	}
	if (!id[0])
		snprintf(id, sizeof(id), "%s", golden);
	for (p = id; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_+.-/=!:&#", *p))
			*p = '_';
	snprintf(tag, len, "%s%s", GOLDEN_TAG_PREFIX, id);
}

/*
 * Whether @lv was made from another golden image than @o's: it has a
 * golden tag (clones of versions before it have none) and not @o's.
 */
static bool other_golden(const struct provision *o, const struct lv *lv,
			 char *theirs, size_t len)
{
	const size_t n = strlen(GOLDEN_TAG_PREFIX);
	const char *p = lv->tags;

	if (has_tag(lv, o->golden_tag))
		return false;
	while (*p && strncmp(p, GOLDEN_TAG_PREFIX, n)) {
		p = strchrnul(p, ',');
		if (*p)
			p++;
	}
	if (!*p)
		return false;
	snprintf(theirs, len, "%.*s", (int)strcspn(p, ","), p);
	return true;
}

/*
 * The logical volumes of @vg: name, size in bytes, attributes, pool, data
 * in use and tags, from lvs.
 * Returns how many (with *@lvs to free), or -1 after lvs said why.
 */
static int list_lvs(const char *vg, struct lv **lvs)
{
	char *argv[] = { "lvs", "--noheadings", "--nosuffix", "--units", "b",
			 "--separator", "|", "-o",
			 "lv_name,lv_size,lv_attr,pool_lv,data_percent,lv_tags",
			 (char *)vg, NULL };
	static char out[4 << 20];
	struct lv *v = NULL;
	int n = 0, r;
	char *line, *save;

	r = run(argv, out, sizeof(out));
	if (r) {
		warnx("cannot list the logical volumes of volume group '%s' (lvs %s)",
		      vg, r < 0 ? "did not run" : "failed, see above");
		return -1;
	}
	if (strlen(out) == sizeof(out) - 1) {
		warnx("volume group '%s': lvs printed more than %zu bytes; too many logical volumes",
		      vg, sizeof(out) - 1);
		return -1;
	}
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *name, *size, *attr, *pool, *data, *tags, *p = line;
		struct lv *nv;

		while (*p == ' ')
			p++;
		name = strsep(&p, "|");
		size = strsep(&p, "|");
		attr = strsep(&p, "|");
		pool = strsep(&p, "|");
		data = strsep(&p, "|");
		tags = p ? p : "";
		if (!name || !size || !data || !*name)
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			warnx("out of memory");
			return -1;
		}
		v = nv;
		snprintf(v[n].name, sizeof(v[n].name), "%s", name);
		v[n].size = strtoull(size, NULL, 10);
		snprintf(v[n].attr, sizeof(v[n].attr), "%s", attr);
		snprintf(v[n].pool, sizeof(v[n].pool), "%s", pool);
		/* empty for an inactive pool: unknown */
		v[n].data_percent = *data ? strtod(data, NULL) : -1;
		if (strlen(tags) >= sizeof(v[n].tags)) {
			warnx("%s/%s: too many tags to tell whether it is a clone",
			      vg, name);
			free(v);
			return -1;
		}
		snprintf(v[n].tags, sizeof(v[n].tags), "%s", tags);
		n++;
	}
	*lvs = v;
	return n;
}

static const struct lv *find_lv(const struct lv *lvs, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(lvs[i].name, name))
			return &lvs[i];
	return NULL;
}

static int lv_remove(const char *vg, const char *name)
{
	char lv[600];
	char *argv[] = { "lvremove", "-y", lv, NULL };

	snprintf(lv, sizeof(lv), "%s/%s", vg, name);
	return run(argv, NULL, 0);
}

/* ----------------------------------------------------------- options --- */

static void provision_usage(void)
{
	printf("Usage:\n"
	       " %1$s provision --golden <device> --vg <vg> --count <n> [options]\n"
	       " %1$s provision --golden <device> --vg <vg> --count <n> --thin <pool> [options]\n"
	       " %1$s deprovision [--yes] --vg <vg> (--tag <tag> | <name>...)\n"
	       "\n"
	       "Make <n> logical volumes of <vg>, each a full copy of the golden image,\n"
	       "copied by the device where it can (copy offload); remove them again.\n"
	       "\n"
	       "Provision options:\n"
	       " -g, --golden <device>  the golden image (a block device: an LV, a disk)\n"
	       "     --vg <vg>          the volume group the clones go into\n"
	       " -n, --count <n>        how many clones\n"
	       "     --name <pattern>   clone names, with one %%d for 1..n (<golden>-clone%%d)\n"
	       " -j, --jobs <j>         clones copied at once (1)\n"
	       "     --verify           compare each clone with the golden image\n"
	       "     --new-uuid         give each clone's ext2/3/4 or XFS filesystem a new UUID\n"
	       "     --tag <tag>        the LVM tag the clones carry (dmcopy)\n"
	       "     --thin <pool>      thin snapshots in this thin pool of <vg> instead\n"
	       "     --hydrate          usable at once through dm-clone, copied in the background\n"
	       "     --rollback         remove the clones an earlier, failed run made\n"
	       " -J, --json             the summary as JSON\n"
	       " -p, --progress         show progress, also when not on a terminal\n"
	       " -q, --quiet            no progress\n"
	       "\n"
	       "Deprovision options:\n"
	       "     --vg <vg>          the volume group\n"
	       "     --tag <tag>        remove every clone with this tag\n"
	       " -y, --yes              do not ask on a terminal first\n"
	       "\n"
	       "A re-run of the same provision keeps the clones that are done and\n"
	       "copies again the ones a failed or interrupted run left half made.\n"
	       "See dmcopy(8).\n", prog);
}

static void parse_provision_options(int argc, char **argv, struct provision *o)
{
	static const struct option longopts[] = {
		{ "golden",   required_argument, NULL, 'g' },
		{ "vg",       required_argument, NULL, OPT_VG },
		{ "count",    required_argument, NULL, 'n' },
		{ "name",     required_argument, NULL, OPT_NAME },
		{ "jobs",     required_argument, NULL, 'j' },
		{ "verify",   no_argument,       NULL, OPT_VERIFY },
		{ "new-uuid", no_argument,       NULL, OPT_NEW_UUID },
		{ "tag",      required_argument, NULL, OPT_TAG },
		{ "rollback", no_argument,       NULL, OPT_ROLLBACK },
		{ "thin",     required_argument, NULL, OPT_THIN },
		{ "hydrate",  no_argument,       NULL, OPT_HYDRATE },
		{ "json",     no_argument,       NULL, 'J' },
		{ "progress", no_argument,       NULL, 'p' },
		{ "quiet",    no_argument,       NULL, 'q' },
		{ "help",     no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	unsigned long v;
	int c;

	while ((c = getopt_long(argc, argv, ":g:n:j:Jpqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'g': o->golden = optarg; break;
		case OPT_VG: o->vg = optarg; break;
		case 'n':
		case 'j':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			/* digits only, as sizes: strtoul() would take "+3" and " 3" */
			if (errno || *optarg < '0' || *optarg > '9' || *end ||
			    !v || v > MAX_CLONES)
				usage_error("invalid %s '%s': a number from 1 to %u",
					    c == 'n' ? "--count" : "--jobs",
					    optarg, MAX_CLONES);
			if (c == 'n')
				o->count = v;
			else
				o->jobs = v;
			break;
		case OPT_NAME: o->pattern = optarg; break;
		case OPT_VERIFY: o->verify = true; break;
		case OPT_NEW_UUID: o->new_uuid = true; break;
		case OPT_TAG: o->tag = optarg; break;
		case OPT_ROLLBACK: o->rollback = true; break;
		case OPT_THIN: o->thin_pool = optarg; break;
		case OPT_HYDRATE: o->hydrate = true; break;
		case 'J': o->json = true; break;
		case 'p': o->show_progress = true; break;
		case 'q': o->quiet = true; break;
		case 'h': provision_usage(); exit(EXIT_SUCCESS);
		default: bad_option(argv, c);
		}
	}
	if (optind < argc)
		usage_error("provision: unexpected argument '%s'", argv[optind]);
	if (!o->golden)
		usage_error("provision: no golden image given (--golden)");
	if (!o->vg)
		usage_error("provision: no volume group given (--vg)");
	if (!o->count)
		usage_error("provision: how many clones? (--count)");
	if (!lvm_word(o->vg))
		usage_error("invalid volume group name '%s'", o->vg);
	if (!lvm_word(o->tag))
		usage_error("invalid tag '%s': letters, digits and _+.- only",
			    o->tag);
	if (!strcmp(o->tag, PARTIAL_TAG) || !strcmp(o->tag, CLONE_TAG) ||
	    !strcmp(o->tag, HYDRATING_TAG))
		usage_error("tag '%s' is one of dmcopy's own marks: choose another",
			    o->tag);
	if (o->show_progress && o->quiet)
		usage_error("--progress and --quiet are mutually exclusive");
	if (o->thin_pool && o->hydrate)
		usage_error("--thin and --hydrate are mutually exclusive");
	if (o->hydrate && o->verify && o->new_uuid)
		usage_error("--hydrate: --new-uuid changes a clone before it is hydrated, so --verify cannot compare it");
	if (o->thin_pool && !lvm_word(o->thin_pool))
		usage_error("invalid thin pool name '%s'", o->thin_pool);
	if (o->rollback && (o->verify || o->new_uuid || o->json))
		usage_error("--rollback removes clones: no --verify, --new-uuid or --json");
}

/*
 * Clone @i's name (1-based) from the pattern: exactly one "%d", or
 * "%0<width>d"; a literal '%' is "%%". -1 for a bad pattern.
 */
static int clone_name(const char *pattern, unsigned int i, char *buf,
		      size_t len)
{
	size_t o = 0;
	int conversions = 0;
	const char *p;

	for (p = pattern; *p; p++) {
		int width = 0, n;

		if (*p != '%') {
			if (o + 1 >= len)
				return -1;
			buf[o++] = *p;
			continue;
		}
		p++;
		if (*p == '%') {
			if (o + 1 >= len)
				return -1;
			buf[o++] = '%';
			continue;
		}
		if (*p == '0') {
			while (p[1] >= '0' && p[1] <= '9' && width < 100)
				width = width * 10 + (*++p - '0');
			p++;
		}
		if (*p != 'd' || conversions++)
			return -1;
		n = snprintf(buf + o, len - o, "%0*u", width, i);
		if (n < 0 || (size_t)n >= len - o)
			return -1;
		o += n;
	}
	buf[o] = '\0';
	return conversions == 1 && lvm_word(buf) ? 0 : -1;
}

/* ------------------------------------------------------------- clones --- */

static int golden_size(const char *path, uint64_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		warnx("golden image %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISBLK(st.st_mode)) {
		warnx("golden image %s: not a block device", path);
		close(fd);
		return -1;
	}
	if (ioctl(fd, BLKGETSIZE64, size) < 0) {
		warnx("golden image %s: cannot read its size: %s", path,
		      strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (!*size) {
		warnx("golden image %s: empty", path);
		return -1;
	}
	return 0;
}

static const char *basename_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/*
 * Read both with O_DIRECT (the device's bytes, not the page cache's) and
 * compare. 1 same, 0 differ, -1 an error (in @err).
 */
static int same_bytes(const char *a, const char *b, uint64_t size, char *err,
		      size_t errlen)
{
	int fa = -1, fb = -1, ret = -1;
	char *ba = NULL, *bb = NULL;
	uint64_t off;

	fa = open(a, O_RDONLY | O_DIRECT | O_CLOEXEC);
	fb = open(b, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fa < 0 || fb < 0) {
		snprintf(err, errlen, "verify: cannot open %s: %s",
			 fa < 0 ? a : b, strerror(errno));
		goto out;
	}
	if (posix_memalign((void **)&ba, 4096, VERIFY_CHUNK) ||
	    posix_memalign((void **)&bb, 4096, VERIFY_CHUNK)) {
		snprintf(err, errlen, "verify: out of memory");
		goto out;
	}
	for (off = 0; off < size; ) {
		if (stop_signal) {
			snprintf(err, errlen, "verify: interrupted");
			goto out;
		}
		size_t want = size - off < VERIFY_CHUNK ? size - off : VERIFY_CHUNK;
		ssize_t na = pread(fa, ba, want, off);
		ssize_t nb = pread(fb, bb, want, off);

		if (na < 0 || nb < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "verify: reading %s at %" PRIu64 ": %s",
				 na < 0 ? a : b, off, strerror(errno));
			goto out;
		}
		if (!na || na != nb) {
			snprintf(err, errlen, "verify: short read at %" PRIu64, off);
			goto out;
		}
		if (memcmp(ba, bb, na)) {
			snprintf(err, errlen, "differs from the golden image in the %zu bytes at %" PRIu64,
				 (size_t)na, off);
			ret = 0;
			goto out;
		}
		off += na;
	}
	ret = 1;
out:
	free(ba);
	free(bb);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return ret;
}

/* A superblock value (TYPE, UUID) libblkid finds on @path, "" if none. */
static void fs_value(const char *path, const char *name, char *buf,
		     size_t len)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	const char *v;

	buf[0] = '\0';
	if (!pr)
		return;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
					  BLKID_SUBLKS_UUID);
	if (!blkid_do_safeprobe(pr) &&
	    !blkid_probe_lookup_value(pr, name, &v, NULL))
		snprintf(buf, len, "%s", v);
	blkid_free_probe(pr);
}

/* Whether the filesystems on @a and @b have one UUID. */
static bool same_uuid(const char *a, const char *b)
{
	char ua[64], ub[64];

	fs_value(a, "UUID", ua, sizeof(ua));
	fs_value(b, "UUID", ub, sizeof(ub));
	return ua[0] && !strcmp(ua, ub);
}

/*
 * A new filesystem UUID on the clone, so clones mount side by side. @dev is
 * where the clone's filesystem is read and written: its LV, or the dm-clone
 * device of a clone that hydrates (its LV is not all there yet).
 */
static int new_uuid(struct clone *c, const char *dev)
{
	char type[32];
	int r;

	fs_value(dev, "TYPE", type, sizeof(type));
	if (!strcmp(type, "ext2") || !strcmp(type, "ext3") ||
	    !strcmp(type, "ext4")) {
		/* tune2fs wants a freshly checked filesystem for -U */
		char *fsck[] = { "e2fsck", "-f", "-p", (char *)dev, NULL };
		char *tune[] = { "tune2fs", "-U", "random", (char *)dev, NULL };

		r = run(fsck, NULL, 0);
		if (r < 0 || r > 1) {
			snprintf(c->error, sizeof(c->error),
				 "e2fsck -f -p %s before the new UUID failed (exit %d)",
				 dev, r);
			return -1;
		}
		r = run(tune, NULL, 0);
	} else if (!strcmp(type, "xfs")) {
		char *admin[] = { "xfs_admin", "-U", "generate", (char *)dev, NULL };

		r = run(admin, NULL, 0);
	} else {
		snprintf(c->error, sizeof(c->error),
			 "--new-uuid: no ext2/3/4 or XFS filesystem on the clone (%s)",
			 *type ? type : "none found");
		return -1;
	}
	if (r) {
		snprintf(c->error, sizeof(c->error),
			 "giving %s a new filesystem UUID failed (exit %d)",
			 dev, r);
		return -1;
	}
	return 0;
}

/*
 * The end of a thick or thin clone that holds the golden image's bytes:
 * compare it (before a new UUID makes it differ), give it a new UUID, and
 * drop PARTIAL_TAG. On failure the clone is CLONE_FAILED, still tagged
 * partial so that a re-run redoes it; @what is how it was made.
 */
static int finish_clone(const struct provision *o, struct clone *c,
			const char *what)
{
	char lv[300];
	char *deltag[] = { "lvchange", "--deltag", PARTIAL_TAG, lv, NULL };
	int r;

	if (o->verify) {
		c->verified = same_bytes(o->golden, c->path, o->size, c->error,
					 sizeof(c->error));
		if (c->verified != 1)
			goto failed;
	}
	if (o->new_uuid && new_uuid(c, c->path))
		goto failed;
	snprintf(lv, sizeof(lv), "%s/%s", o->vg, c->name);
	r = run(deltag, NULL, 0);
	if (r) {
		snprintf(c->error, sizeof(c->error),
			 "%s, but lvchange --deltag %s failed (exit %d): a re-run redoes it",
			 what, PARTIAL_TAG, r);
		goto failed;
	}
	return 0;
failed:
	c->state = CLONE_FAILED;
	return -1;
}

/* One display for the whole batch: the bytes of every copy of this run. */
static void batch_progress(uint64_t done, uint64_t total, void *data)
{
	struct worker *w = data;
	struct provision *o = w->o;
	uint64_t sum;
	unsigned int i;

	(void)total;
	pthread_mutex_lock(&o->lock);
	w->done = done;
	sum = o->done_before;
	for (i = 0; i < o->jobs; i++)
		sum += o->workers[i].done;
	on_progress(sum, o->total, &o->progress);
	pthread_mutex_unlock(&o->lock);
}

static void copy_one(struct worker *w, struct clone *c)
{
	struct provision *o = w->o;
	struct dmcopy_copy_opts opts = {
		/* a new LV may hold anything, signatures included */
		.force = true,
		.stop = &stop_signal,
		.progress = o->progress.kind != PROGRESS_NONE ?
			    batch_progress : NULL,
		.progress_data = w,
	};
	struct dmcopy_ctx *ctx = new_ctx();
	struct timespec t0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = dmcopy_copy(ctx, o->golden, 0, c->path, 0, o->size, &opts, &c->rep);
	c->seconds = seconds_since(&t0);
	pthread_mutex_lock(&o->lock);
	w->done = 0;
	o->done_before += c->rep.copied;
	pthread_mutex_unlock(&o->lock);
	if (r == -EINTR) {
		c->state = CLONE_INTERRUPTED;
		snprintf(c->error, sizeof(c->error), "interrupted after %" PRIu64 " of %" PRIu64 " bytes",
			 c->rep.copied, o->size);
		dmcopy_free(ctx);
		return;
	}
	if (r) {
		c->state = CLONE_FAILED;
		snprintf(c->error, sizeof(c->error), "copy failed: %s",
			 dmcopy_last_error(ctx));
		dmcopy_free(ctx);
		return;
	}
	dmcopy_free(ctx);
	if (!finish_clone(o, c, "copied"))
		c->state = CLONE_COPIED;
}

static void *copy_worker(void *data)
{
	struct worker *w = data;
	struct provision *o = w->o;

	for (;;) {
		struct clone *c = NULL;

		pthread_mutex_lock(&o->lock);
		while (!stop_signal && o->next < o->count) {
			struct clone *n = &o->clones[o->next++];

			if (n->state == CLONE_PARTIAL || n->state == CLONE_NEW) {
				c = n;
				break;
			}
		}
		pthread_mutex_unlock(&o->lock);
		if (!c)
			return NULL;
		copy_one(w, c);
	}
}

/* ------------------------------------------------------------ summary --- */

static const char *state_name(const struct clone *c)
{
	switch (c->state) {
	case CLONE_DONE: return "kept";
	case CLONE_COPIED:
		return !strcmp(c->mode, "thin") ? "made" :
		       !strcmp(c->mode, "hydrate") ? "hydrated" : "copied";
	case CLONE_FAILED: return "failed";
	case CLONE_INTERRUPTED: return "interrupted";
	case CLONE_NOT_CREATED: return "not created";
	case CLONE_CHANGED: return "changed";
	case CLONE_IN_USE: return "in use";
	default: return "not copied";
	}
}

static const char *verified_name(const struct clone *c)
{
	return c->verified == 1 ? "yes" : c->verified == 0 ? "DIFFERS" : "-";
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

struct totals {
	unsigned int clones, copied, failed;
	uint64_t bytes, offloaded, emulated, userspace;
};

static void sum_up(const struct provision *o, struct totals *t)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < o->count; i++) {
		const struct clone *c = &o->clones[i];

		/* a clone in use since it was made is a clone, not a failure */
		if (c->state == CLONE_COPIED || c->state == CLONE_DONE ||
		    c->state == CLONE_CHANGED)
			t->clones++;
		if (c->state == CLONE_COPIED)
			t->copied++;
		if (c->state == CLONE_FAILED || c->state == CLONE_INTERRUPTED ||
		    c->state == CLONE_NOT_CREATED || c->state == CLONE_IN_USE)
			t->failed++;
		t->bytes += c->rep.copied;
		t->offloaded += c->rep.offloaded;
		t->emulated += c->rep.emulated;
		t->userspace += c->rep.userspace;
	}
}

static void print_json(const struct provision *o, const struct totals *t,
		       double seconds)
{
	unsigned int i;

	printf("{\n   \"golden\": ");
	json_string(o->golden);
	printf(",\n   \"vg\": ");
	json_string(o->vg);
	printf(",\n   \"size\": %" PRIu64 ",\n   \"origin\": ", o->size);
	if (o->thin_pool)
		json_string(o->origin);
	else
		printf("null");
	printf(",\n   \"clones\": [");
	for (i = 0; i < o->count; i++) {
		const struct clone *c = &o->clones[i];

		printf("%s\n      {\"name\": ", i ? "," : "");
		json_string(c->name);
		printf(", \"path\": ");
		json_string(c->path);
		printf(", \"state\": ");
		json_string(state_name(c));
		printf(", \"mode\": \"%s\", \"seconds\": %.3f, \"copied\": %" PRIu64
		       ", \"offloaded\": %" PRIu64 ", \"emulated\": %" PRIu64
		       ", \"userspace\": %" PRIu64 ", \"verified\": %s",
		       c->mode, c->seconds, c->rep.copied, c->rep.offloaded,
		       c->rep.emulated, c->rep.userspace,
		       c->verified == 1 ? "true" : c->verified == 0 ? "false" : "null");
		printf(", \"error\": ");
		if (c->error[0])
			json_string(c->error);
		else
			printf("null");
		printf("}");
	}
	printf("\n   ],\n   \"total\": {\"clones\": %u, \"copied\": %u, \"failed\": %u, "
	       "\"seconds\": %.3f, \"bytes\": %" PRIu64 ", \"offloaded\": %" PRIu64
	       ", \"emulated\": %" PRIu64 ", \"userspace\": %" PRIu64 "}\n}\n",
	       t->clones, t->copied, t->failed, seconds, t->bytes, t->offloaded,
	       t->emulated, t->userspace);
}

static void print_table(const struct provision *o, const struct totals *t,
			double seconds)
{
	static const char *const heads[] = {
		"NAME", "SIZE", "MODE", "STATE", "TIME", "OFFLOADED",
		"EMULATED", "USERSPACE", "VERIFIED",
	};
	struct libscols_table *tb = scols_new_table();
	char b[4][32];
	unsigned int i, k;

	if (!tb) {
		warnx("out of memory");
		return;
	}
	for (k = 0; k < sizeof(heads) / sizeof(heads[0]); k++)
		scols_table_new_column(tb, heads[k], 0,
				       k ? SCOLS_FL_RIGHT : 0);
	for (i = 0; i < o->count; i++) {
		const struct clone *c = &o->clones[i];
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		if (!ln)
			break;
		human_size(o->size, b[0], sizeof(b[0]));
		scols_line_set_data(ln, 0, c->name);
		scols_line_set_data(ln, 1, b[0]);
		scols_line_set_data(ln, 2, c->mode);
		scols_line_set_data(ln, 3, state_name(c));
		snprintf(b[1], sizeof(b[1]), "%.1fs", c->seconds);
		scols_line_set_data(ln, 4, c->state == CLONE_DONE ||
				    c->state == CLONE_CHANGED ||
				    c->state == CLONE_IN_USE ? "-" : b[1]);
		human_size(c->rep.offloaded, b[1], sizeof(b[1]));
		human_size(c->rep.emulated, b[2], sizeof(b[2]));
		human_size(c->rep.userspace, b[3], sizeof(b[3]));
		scols_line_set_data(ln, 5, b[1]);
		scols_line_set_data(ln, 6, b[2]);
		scols_line_set_data(ln, 7, b[3]);
		scols_line_set_data(ln, 8, verified_name(c));
	}
	scols_print_table(tb);
	scols_unref_table(tb);
	human_size(t->bytes, b[0], sizeof(b[0]));
	human_size(t->offloaded, b[1], sizeof(b[1]));
	human_size(t->emulated, b[2], sizeof(b[2]));
	human_size(t->userspace, b[3], sizeof(b[3]));
	printf("%u of %u clones ready (%u made now) in %.1fs; %s copied: %s offloaded, %s emulated in the kernel, %s in user space\n",
	       t->clones, o->count, t->copied, seconds, b[0], b[1], b[2], b[3]);
	if (o->import.copied) {
		human_size(o->import.copied, b[0], sizeof(b[0]));
		human_size(o->import.offloaded, b[1], sizeof(b[1]));
		human_size(o->import.emulated, b[2], sizeof(b[2]));
		human_size(o->import.userspace, b[3], sizeof(b[3]));
		printf("the golden image was imported into %s/%s, the clones' origin: %s copied, %s offloaded, %s emulated in the kernel, %s in user space\n",
		       o->vg, o->origin, b[0], b[1], b[2], b[3]);
	}
	for (i = 0; i < o->count; i++)
		if (o->clones[i].error[0])
			printf("%s: %s\n", o->clones[i].name, o->clones[i].error);
}

/* ---------------------------------------------------------------- thin --- */

/* An integer setting of lvm's configuration, or @dflt. */
static int lvm_setting(const char *key, int dflt)
{
	char *argv[] = { "lvmconfig", "--type", "full", (char *)key, NULL };
	char out[256], *eq;

	if (run(argv, out, sizeof(out)))
		return dflt;
	eq = strchr(out, '=');
	return eq ? atoi(eq + 1) : dflt;
}

/*
 * Whether lvm extends a filling thin pool by itself: a threshold below
 * 100, a percent above 0, and dmeventd monitoring on. Else the reason.
 */
static const char *no_autoextend(char *buf, size_t len)
{
	int threshold = lvm_setting("activation/thin_pool_autoextend_threshold", 100);
	int percent = lvm_setting("activation/thin_pool_autoextend_percent", 20);
	int monitoring = lvm_setting("activation/monitoring", 1);

	if (threshold >= 100)
		snprintf(buf, len, "activation/thin_pool_autoextend_threshold = %d", threshold);
	else if (percent <= 0)
		snprintf(buf, len, "activation/thin_pool_autoextend_percent = %d", percent);
	else if (!monitoring)
		snprintf(buf, len, "activation/monitoring = 0");
	else
		return NULL;
	return buf;
}

/* The thin volume of @pool that is the block device @path, if any. */
static const struct lv *thin_volume_at(const struct provision *o,
				       const struct lv *lvs, int nlvs,
				       const char *path)
{
	struct stat a, b;
	char p[400];
	int i;

	if (stat(path, &a) || !S_ISBLK(a.st_mode))
		return NULL;
	for (i = 0; i < nlvs; i++) {
		if (lvs[i].attr[0] != 'V' || strcmp(lvs[i].pool, o->thin_pool))
			continue;
		snprintf(p, sizeof(p), "/dev/%s/%s", o->vg, lvs[i].name);
		if (!stat(p, &b) && S_ISBLK(b.st_mode) && a.st_rdev == b.st_rdev)
			return &lvs[i];
	}
	return NULL;
}

/*
 * The clones' origin: the golden image itself when it is a thin volume
 * of the pool, else a thin volume "<golden>-thin" the golden image is
 * copied into (once: a re-run finds it by its tags).
 */
static int thin_origin(struct provision *o, const struct lv *lvs, int nlvs)
{
	char lv[300], size[32];
	char *create[] = { "lvcreate", "-y", "-n", o->origin, "-V", size,
			   "-T", lv, "--addtag", CLONE_TAG, "--addtag",
			   PARTIAL_TAG, "--addtag", (char *)o->tag,
			   "--addtag", o->golden_tag, NULL };
	char *deltag[] = { "lvchange", "--deltag", PARTIAL_TAG, lv, NULL };
	const struct lv *have;
	struct dmcopy_ctx *ctx;
	char path[400];
	int r;

	have = thin_volume_at(o, lvs, nlvs, o->golden);
	if (have) {
		snprintf(o->origin, sizeof(o->origin), "%s", have->name);
		return 0;
	}
	snprintf(o->origin, sizeof(o->origin), "%.100s-thin",
		 basename_of(o->golden));
	have = find_lv(lvs, nlvs, o->origin);
	if (have && !has_tag(have, CLONE_TAG)) {
		warnx("%s/%s exists and was not made by dmcopy provision: cannot import the golden image into it; nothing was changed",
		      o->vg, o->origin);
		return -1;
	}
	if (have && (have->attr[0] != 'V' || strcmp(have->pool, o->thin_pool))) {
		warnx("%s/%s is not a thin volume of %s; nothing was changed",
		      o->vg, o->origin, o->thin_pool);
		return -1;
	}
	if (have && !has_tag(have, PARTIAL_TAG))
		return 0;
	if (!have) {
		snprintf(lv, sizeof(lv), "%s/%s", o->vg, o->thin_pool);
		snprintf(size, sizeof(size), "%" PRIu64 "b", o->size);
		r = run(create, NULL, 0);
		if (r) {
			warnx("lvcreate of the thin origin %s/%s failed (exit %d, see above)",
			      o->vg, o->origin, r);
			return -1;
		}
	}
	snprintf(path, sizeof(path), "/dev/%s/%s", o->vg, o->origin);
	ctx = new_ctx();
	r = dmcopy_copy(ctx, o->golden, 0, path, 0, o->size,
			&(struct dmcopy_copy_opts){ .force = true,
						    .stop = &stop_signal },
			&o->import);
	if (r) {
		warnx("copying the golden image into %s failed: %s", path,
		      r == -EINTR ? "interrupted" : dmcopy_last_error(ctx));
		dmcopy_free(ctx);
		return -1;
	}
	dmcopy_free(ctx);
	snprintf(lv, sizeof(lv), "%s/%s", o->vg, o->origin);
	if (run(deltag, NULL, 0)) {
		warnx("lvchange --deltag %s %s failed (see above)", PARTIAL_TAG, lv);
		return -1;
	}
	return 0;
}

/*
 * Refuse, with the numbers, a batch the pool could not hold once every
 * clone is written all over, when lvm will not extend the pool by itself.
 */
static int thin_room(const struct provision *o, const struct lv *lvs,
		     int nlvs, unsigned int new_clones, bool import)
{
	const struct lv *pool = find_lv(lvs, nlvs, o->thin_pool);
	uint64_t used, free_bytes, need;
	char b[4][32], why[96];
	const char *off;

	if (!pool || pool->attr[0] != 't') {
		warnx("%s/%s is not a thin pool%s; nothing was changed", o->vg,
		      o->thin_pool, pool ? "" : " (no such logical volume)");
		return -1;
	}
	if (pool->data_percent < 0) {
		warnx("thin pool %s/%s is not active, so its use is unknown: activate it (lvchange -ay %s/%s); nothing was changed",
		      o->vg, o->thin_pool, o->vg, o->thin_pool);
		return -1;
	}
	used = (uint64_t)(pool->size * pool->data_percent / 100.0);
	free_bytes = pool->size > used ? pool->size - used : 0;
	need = (uint64_t)new_clones * o->size + (import ? o->size : 0);
	off = need > free_bytes ? no_autoextend(why, sizeof(why)) : NULL;
	if (!off)
		return 0;
	human_size(need, b[0], sizeof(b[0]));
	human_size(free_bytes, b[1], sizeof(b[1]));
	human_size(pool->size, b[2], sizeof(b[2]));
	human_size(need - free_bytes, b[3], sizeof(b[3]));
	warnx("thin pool %s/%s cannot hold the worst case: %u new clones%s may need %s once written all over, it has %s free of %s and autoextend is off (%s); extend it (lvextend -L +%s %s/%s) or turn autoextend on; nothing was changed",
	      o->vg, o->thin_pool, new_clones,
	      import ? " and the golden image's import" : "", b[0], b[1],
	      b[2], off, b[3], o->vg, o->thin_pool);
	return -1;
}

/* Thin snapshots of the origin, one after the other (lvm takes its lock). */
static void thin_clones(struct provision *o, bool *create_failed)
{
	char origin[300];
	char *create[] = { "lvcreate", "-y", "-s", "-kn", "-n", NULL,
			   "--addtag", CLONE_TAG, "--addtag", PARTIAL_TAG,
			   "--addtag", (char *)o->tag, "--addtag", o->golden_tag,
			   origin, NULL };
	unsigned int i;
	int r;

	snprintf(origin, sizeof(origin), "%s/%s", o->vg, o->origin);
	for (i = 0; i < o->count; i++) {
		struct clone *c = &o->clones[i];
		struct timespec t0;

		if (c->state != CLONE_NEW && c->state != CLONE_PARTIAL)
			continue;
		if (*create_failed || stop_signal) {
			c->state = stop_signal ? CLONE_INTERRUPTED : CLONE_NOT_CREATED;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		/* half made: a snapshot is cheap to make again */
		if (c->state == CLONE_PARTIAL && lv_remove(o->vg, c->name)) {
			c->state = CLONE_FAILED;
			snprintf(c->error, sizeof(c->error),
				 "cannot remove the half-made snapshot to make it again");
			continue;
		}
		create[5] = c->name;
		r = run(create, NULL, 0);
		if (r) {
			c->state = CLONE_NOT_CREATED;
			snprintf(c->error, sizeof(c->error),
				 "lvcreate failed (exit %d, see above)", r);
			*create_failed = true;
			continue;
		}
		c->created = true;
		if (finish_clone(o, c, "made"))
			continue;
		c->seconds = seconds_since(&t0);
		c->state = CLONE_COPIED;
	}
}

/* ------------------------------------------------------------- hydrate --- */

/* The kernel name (dm-N) of the mapped device @name; "" when there is none. */
static void dm_kernel_name(const char *name, char *kname, size_t len)
{
	DIR *d = opendir("/sys/block");
	struct dirent *e;

	kname[0] = '\0';
	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[300], got[256];
		FILE *f;

		if (strncmp(e->d_name, "dm-", 3))
			continue;
		snprintf(p, sizeof(p), "/sys/block/%s/dm/name", e->d_name);
		f = fopen(p, "re");
		if (!f)
			continue;
		if (fgets(got, sizeof(got), f)) {
			got[strcspn(got, "\n")] = '\0';
			if (!strcmp(got, name))
				snprintf(kname, len, "%.31s", e->d_name);
		}
		fclose(f);
		if (kname[0])
			break;
	}
	closedir(d);
}

static int dmsetup(const char *verb, const char *name, const char *table)
{
	char *argv[] = { "dmsetup", (char *)verb, (char *)name,
			 table ? "--table" : NULL, (char *)table, NULL };

	return run(argv, NULL, 0);
}

/*
 * The metadata volume of a hydrating clone: dm-clone's bitmap of hydrated
 * regions, a bit each, in 4 KiB blocks of a persistent btree; 4 MiB and
 * twice the bitmap is plenty. lvcreate zeroes its first 4 KiB, so dm-clone
 * formats it.
 */
static int hydrate_metadata(const struct provision *o, const struct clone *c)
{
	uint64_t regions = (o->size / 512 + HYDRATE_REGION - 1) / HYDRATE_REGION;
	char name[300], vg[200], size[32];
	char *create[] = { "lvcreate", "-y", "-Wn", "-n", name, "-L", size,
			   "--addtag", CLONE_TAG, "--addtag", (char *)o->tag,
			   vg, NULL };

	snprintf(name, sizeof(name), "%s%s", c->name, HMETA_SUFFIX);
	snprintf(vg, sizeof(vg), "%s", o->vg);
	snprintf(size, sizeof(size), "%" PRIu64 "b",
		 (uint64_t)(4 << 20) + ((regions / 8 + 4095) & ~(uint64_t)4095) * 2);
	return run(create, NULL, 0);
}

/*
 * The clone, usable at once: dm-clone over the golden image (source) and
 * the clone's LV (destination); reads of what is not hydrated yet come
 * from the golden image, writes go to the LV, and the rest is copied in
 * the background with dm-kcopyd (offloaded where the device copies).
 */
static int hydrate_start(const struct provision *o, struct clone *c,
			 bool paused)
{
	char table[1200];

	snprintf(table, sizeof(table),
		 "0 %" PRIu64 " clone /dev/%s/%s%s /dev/%s/%s %s %u%s",
		 o->size / 512, o->vg, c->name, HMETA_SUFFIX, o->vg, c->name,
		 o->golden, HYDRATE_REGION, paused ? " 1 no_hydration" : "");
	if (dmsetup("create", c->dm, table)) {
		snprintf(c->error, sizeof(c->error),
			 "dmsetup create %s (dm-clone) failed (see above)", c->dm);
		return -1;
	}
	dm_kernel_name(c->dm, c->kname, sizeof(c->kname));
	return 0;
}

/* dm-clone names its device by MAJ:MIN in the kernel log. */
static void dm_devno(struct clone *c)
{
	char p[96];
	FILE *f;

	c->devno[0] = '\0';
	snprintf(p, sizeof(p), "/sys/block/%s/dev", c->kname);
	f = fopen(p, "re");
	if (!f)
		return;
	if (fgets(c->devno, sizeof(c->devno), f))
		c->devno[strcspn(c->devno, "\n")] = '\0';
	fclose(f);
}

/*
 * Bytes the device copied into @path by offload so far: offloaded_bytes of
 * its disk's copy_stat (dm-clone hydrates through dm-kcopyd, which offers
 * copies to the device below the clone's LV). 0 when the kernel has no
 * copy_stat.
 */
static uint64_t offloaded_into(const char *path)
{
	struct dmcopy_ctx *ctx = new_ctx();
	struct dmcopy_caps caps;
	uint64_t bytes = 0;

	if (!dmcopy_device_caps(ctx, path, &caps)) {
		bytes = caps.offloaded_bytes;
		dmcopy_caps_release(&caps);
	}
	dmcopy_free(ctx);
	return bytes;
}

/*
 * What this run saw of a clone's hydration: the regions hydrated since it
 * began waiting, of which the device copied offloaded_into() the LV; the
 * rest dm-kcopyd read and wrote in the kernel.
 */
static void hydrate_report(const struct provision *o, struct clone *c)
{
	const uint64_t region = (uint64_t)HYDRATE_REGION * 512;
	uint64_t from = c->hydrated0 * region;
	uint64_t now = offloaded_into(c->path);
	uint64_t offloaded = now > c->offloaded0 ? now - c->offloaded0 : 0;

	c->rep.copied = from < o->size ? o->size - from : 0;
	c->rep.offloaded = offloaded < c->rep.copied ? offloaded : c->rep.copied;
	c->rep.emulated = c->rep.copied - c->rep.offloaded;
	c->rep.userspace = 0;
}

/* dm-clone's "<hydrated>/<regions>" from dmsetup status; -1 on failure. */
static int hydrate_progress(struct clone *c)
{
	char *argv[] = { "dmsetup", "status", c->dm, NULL };
	char out[1024], *f[8], *p = out, *slash;
	int n = 0;

	if (run(argv, out, sizeof(out)))
		return -1;
	/* 0 <len> clone <mbs> <used>/<total> <region> <hydrated>/<regions> */
	while (n < 8 && (f[n] = strsep(&p, " \t\n")))
		if (*f[n])
			n++;
	if (n < 8 || strcmp(f[2], "clone"))
		return -1;
	slash = strchr(f[6], '/');
	if (!slash)
		return -1;
	c->hydrated = strtoull(f[6], NULL, 10);
	c->regions = strtoull(slash + 1, NULL, 10);
	return 0;
}

/*
 * Hydrated: the clone device becomes a plain linear mapping of the LV, in
 * place (whoever has it open goes on), dm-clone's metadata goes, and the
 * device itself too when nobody has it open: the clone is its LV.
 */
static int hydrate_finish(const struct provision *o, struct clone *c)
{
	char table[600], lv[300], meta[300], out[64];
	char *open_count[] = { "dmsetup", "info", "-c", "--noheadings", "-o",
			       "open", c->dm, NULL };
	char *deltag[] = { "lvchange", "--deltag", PARTIAL_TAG, "--deltag",
			   HYDRATING_TAG, lv, NULL };

	snprintf(table, sizeof(table), "0 %" PRIu64 " linear /dev/%s/%s 0",
		 o->size / 512, o->vg, c->name);
	if (dmsetup("suspend", c->dm, NULL) || dmsetup("load", c->dm, table) ||
	    dmsetup("resume", c->dm, NULL)) {
		snprintf(c->error, sizeof(c->error),
			 "hydrated, but switching %s to linear failed (see above)", c->dm);
		dmsetup("resume", c->dm, NULL);
		return -1;
	}
	if (!run(open_count, out, sizeof(out)) && atoi(out) == 0)
		dmsetup("remove", c->dm, NULL);
	snprintf(meta, sizeof(meta), "%s%s", c->name, HMETA_SUFFIX);
	lv_remove(o->vg, meta);
	snprintf(lv, sizeof(lv), "%s/%s", o->vg, c->name);
	if (run(deltag, NULL, 0)) {
		snprintf(c->error, sizeof(c->error),
			 "hydrated, but lvchange --deltag failed (see above)");
		return -1;
	}
	return 0;
}

/*
 * dm-clone retries a region it failed to hydrate for ever, logging
 * "hydration failed". Read the kernel log for that, for our devices.
 */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

static void kmsg_failures(int fd, struct provision *o)
{
	char rec[2048];
	ssize_t n;
	unsigned int i;

	if (fd < 0)
		return;
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		char *msg;

		if (n <= 0)
			continue;	/* EPIPE: records were overwritten */
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg || !strstr(msg, "hydration failed"))
			continue;
		for (i = 0; i < o->count; i++) {
			struct clone *c = &o->clones[i];
			char needle[64];

			if (c->state != CLONE_PARTIAL || !c->devno[0])
				continue;
			snprintf(needle, sizeof(needle), "clone: %s: ", c->devno);
			if (!strstr(msg, needle))
				continue;
			/* stop the retries; the clone stays usable as it is */
			{
				char *argv[] = { "dmsetup", "message", c->dm, "0",
						 "disable_hydration", NULL };

				run(argv, NULL, 0);
			}
			c->state = CLONE_FAILED;
			snprintf(c->error, sizeof(c->error),
				 "hydration failed at an I/O error (see the kernel log): %s stays a dm-clone device over the golden image, usable, with %" PRIu64 " of %" PRIu64 " regions hydrated; a re-run tries again",
				 c->dm, c->hydrated, c->regions);
		}
	}
}

/*
 * Make every clone usable through its dm-clone device, then wait for
 * them to hydrate, switching each to its plain LV as it is done.
 */
static void hydrate_clones(struct provision *o, bool *create_failed)
{
	char sizearg[32], name[300], vg[200];
	char *create[] = { "lvcreate", "-y", "-Wn", "-n", name,
			   "-L", sizearg, "--addtag", CLONE_TAG,
			   "--addtag", PARTIAL_TAG, "--addtag", HYDRATING_TAG,
			   "--addtag", (char *)o->tag, "--addtag", o->golden_tag,
			   vg, NULL };
	struct timespec t0;
	unsigned int i, pending = 0;
	int kmsg = kmsg_open();

	snprintf(sizearg, sizeof(sizearg), "%" PRIu64 "b", o->size);
	snprintf(vg, sizeof(vg), "%s", o->vg);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < o->count; i++) {
		struct clone *c = &o->clones[i];
		char meta[300], mapped[320];
		bool earlier;

		if (c->state != CLONE_NEW && c->state != CLONE_PARTIAL)
			continue;
		if (*create_failed || stop_signal) {
			c->state = stop_signal ? CLONE_INTERRUPTED : CLONE_NOT_CREATED;
			continue;
		}
		snprintf(name, sizeof(name), "%s", c->name);
		if (c->state == CLONE_NEW) {
			int r = run(create, NULL, 0);

			if (r) {
				c->state = CLONE_NOT_CREATED;
				snprintf(c->error, sizeof(c->error),
					 "lvcreate failed (exit %d, see above)", r);
				*create_failed = true;
				continue;
			}
			c->created = true;
			c->state = CLONE_PARTIAL;
		} else {
			char lv[300];
			char *addtag[] = { "lvchange", "--addtag", HYDRATING_TAG,
					   lv, NULL };

			/* a half-made clone of any mode hydrates from here */
			snprintf(lv, sizeof(lv), "%s/%s", o->vg, c->name);
			run(addtag, NULL, 0);
		}
		/* A re-run finds the metadata of the first, and goes on. */
		snprintf(meta, sizeof(meta), "/dev/%s/%s%s", o->vg, c->name,
			 HMETA_SUFFIX);
		earlier = !access(meta, F_OK);
		if (!earlier && hydrate_metadata(o, c)) {
			c->state = CLONE_NOT_CREATED;
			snprintf(c->error, sizeof(c->error),
				 "lvcreate of its metadata %s failed (see above)", meta);
			*create_failed = true;
			continue;
		}
		/*
		 * An earlier run's progress is in the metadata (and its device
		 * may still be there, stopped by a hydration error): read it
		 * with hydration stopped, then (re)start hydration.
		 */
		c->offloaded0 = offloaded_into(c->path);
		c->hydrated0 = 0;
		dm_kernel_name(c->dm, c->kname, sizeof(c->kname));
		if (!c->kname[0] && hydrate_start(o, c, earlier)) {
			c->state = CLONE_FAILED;
			continue;
		}
		if (earlier) {
			char *enable[] = { "dmsetup", "message", c->dm, "0",
					   "enable_hydration", NULL };

			if (hydrate_progress(c) || run(enable, NULL, 0)) {
				c->state = CLONE_FAILED;
				snprintf(c->error, sizeof(c->error),
					 "cannot resume the hydration of %s (see above)",
					 c->dm);
				continue;
			}
			c->hydrated0 = c->hydrated;
		}
		dm_devno(c);
		snprintf(mapped, sizeof(mapped), "/dev/mapper/%s", c->dm);
		/* also when an earlier run stopped before the new UUID */
		if (o->new_uuid && (c->created || same_uuid(o->golden, mapped)) &&
		    new_uuid(c, mapped)) {
			c->state = CLONE_FAILED;
			snprintf(c->error + strlen(c->error),
				 sizeof(c->error) - strlen(c->error),
				 "; /dev/mapper/%s hydrates on, usable", c->dm);
			continue;
		}
		if (!o->json)
			printf("%s: usable now as /dev/mapper/%s, hydrating\n",
			       c->name, c->dm);
		pending++;
	}
	fflush(stdout);

	while (pending && !stop_signal) {
		uint64_t done = 0, total = 0;
		struct timespec pause = { 0, 200 * 1000 * 1000 };

		kmsg_failures(kmsg, o);
		pending = 0;
		for (i = 0; i < o->count; i++) {
			struct clone *c = &o->clones[i];

			if (c->state != CLONE_PARTIAL)
				continue;
			if (hydrate_progress(c)) {
				c->state = CLONE_FAILED;
				snprintf(c->error, sizeof(c->error),
					 "cannot read the status of %s", c->dm);
				continue;
			}
			done += c->hydrated;
			total += c->regions;
			if (c->hydrated < c->regions) {
				pending++;
				continue;
			}
			c->seconds = seconds_since(&t0);
			hydrate_report(o, c);
			if (hydrate_finish(o, c)) {
				c->state = CLONE_FAILED;
				continue;
			}
			if (o->verify) {
				c->verified = same_bytes(o->golden, c->path,
							 o->size, c->error,
							 sizeof(c->error));
				if (c->verified != 1) {
					c->state = CLONE_FAILED;
					continue;
				}
			}
			c->state = CLONE_COPIED;
		}
		if (o->progress.kind != PROGRESS_NONE && total)
			on_progress(done * HYDRATE_REGION * 512,
				    total * HYDRATE_REGION * 512, &o->progress);
		if (pending)
			nanosleep(&pause, NULL);
	}
	progress_end(&o->progress);
	if (kmsg >= 0)
		close(kmsg);
	for (i = 0; stop_signal && i < o->count; i++) {
		struct clone *c = &o->clones[i];

		if (c->state == CLONE_PARTIAL && c->kname[0])
			snprintf(c->error, sizeof(c->error),
				 "still hydrating in the kernel (%" PRIu64 " of %" PRIu64 " regions), usable as /dev/mapper/%s; run the same command again to wait for it and make it its plain LV",
				 c->hydrated, c->regions, c->dm);
	}
}

/* --------------------------------------------------------- the command --- */

/* The dm-clone device of a hydrating clone goes before its volumes. */
static int remove_hydrate_dm(const char *vg, const char *name)
{
	char dm[300], kname[32];

	snprintf(dm, sizeof(dm), "dmcopy-%s-%s", vg, name);
	dm_kernel_name(dm, kname, sizeof(kname));
	if (!kname[0])
		return 0;
	if (dmsetup("remove", dm, NULL)) {
		warnx("could not remove %s, which still uses %s/%s (see above)",
		      dm, vg, name);
		return -1;
	}
	printf("removed /dev/mapper/%s\n", dm);
	return 0;
}

/* A clone: its dm-clone device, its volume, its dm-clone metadata. */
static int remove_clone(const char *vg, const struct lv *lvs, int nlvs,
			const char *name)
{
	char meta[300];
	const struct lv *m;

	if (remove_hydrate_dm(vg, name))
		return -1;
	if (lv_remove(vg, name)) {
		warnx("could not remove %s/%s (see above)", vg, name);
		return -1;
	}
	printf("removed %s/%s\n", vg, name);
	snprintf(meta, sizeof(meta), "%s%s", name, HMETA_SUFFIX);
	m = find_lv(lvs, nlvs, meta);
	if (m && has_tag(m, CLONE_TAG)) {
		if (lv_remove(vg, meta)) {
			warnx("could not remove %s/%s (see above)", vg, meta);
			return -1;
		}
		printf("removed %s/%s\n", vg, meta);
	}
	return 0;
}

/*
 * --rollback of a golden image that is there leaves what was made from
 * another one: true when @lv may go.
 */
static bool may_roll_back(const struct provision *o, const struct lv *lv)
{
	char theirs[200];

	if (!o->golden_known || !other_golden(o, lv, theirs, sizeof(theirs)))
		return true;
	warnx("keeping %s/%s: made from another golden image (%s, this one is %s)",
	      o->vg, lv->name, theirs, o->golden_tag);
	return false;
}

static int rollback(struct provision *o, const struct lv *lvs, int nlvs)
{
	unsigned int i, removed = 0, kept = 0;
	int failed = 0;

	for (i = 0; i < o->count; i++) {
		const struct lv *lv = find_lv(lvs, nlvs, o->clones[i].name);

		if (!lv || !has_tag(lv, o->tag) || !has_tag(lv, CLONE_TAG))
			continue;
		if (!may_roll_back(o, lv)) {
			kept++;
			continue;
		}
		if (remove_clone(o->vg, lvs, nlvs, lv->name)) {
			failed = 1;
			continue;
		}
		removed++;
	}
	/* the thin origin the golden image was imported into, once unused */
	if (!failed) {
		char origin[128];
		const struct lv *lv;

		snprintf(origin, sizeof(origin), "%.100s-thin",
			 basename_of(o->golden));
		lv = find_lv(lvs, nlvs, origin);
		if (lv && has_tag(lv, o->tag) && has_tag(lv, CLONE_TAG)) {
			if (!may_roll_back(o, lv)) {
				kept++;
			} else if (lv_remove(o->vg, lv->name)) {
				warnx("could not remove %s/%s (see above)", o->vg, lv->name);
				failed = 1;
			} else {
				printf("removed %s/%s\n", o->vg, lv->name);
				removed++;
			}
		}
	}
	if (!removed && !failed && !kept)
		printf("nothing to remove: no clone named like '%s' with tag '%s' in %s\n",
		       o->pattern, o->tag, o->vg);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int cmd_provision(int argc, char **argv)
{
	struct provision o = { .tag = DEFAULT_TAG, .jobs = 1 };
	char default_pattern[160], lvname[300], sizearg[32], theirs[200];
	struct stat st;
	struct timespec t0;
	struct totals t;
	struct lv *lvs = NULL;
	int nlvs, ret = EXIT_FAILURE;
	unsigned int i, to_copy = 0, nthreads;
	bool create_failed = false;

	parse_provision_options(argc, argv, &o);
	/* before any thread: lvm2 warns about inherited descriptors, and
	 * its sizes and percentages are parsed in the C locale */
	setenv("LVM_SUPPRESS_FD_WARNINGS", "1", 1);
	setenv("LC_ALL", "C", 1);
	if (!o.pattern) {
		snprintf(default_pattern, sizeof(default_pattern), "%s-clone%%d",
			 basename_of(o.golden));
		o.pattern = default_pattern;
	}
	o.clones = calloc(o.count, sizeof(*o.clones));
	if (!o.clones) {
		warnx("out of memory");
		return EXIT_FAILURE;
	}
	for (i = 0; i < o.count; i++) {
		struct clone *c = &o.clones[i];

		if (clone_name(o.pattern, i + 1, c->name, sizeof(c->name)))
			usage_error("invalid --name '%s': one %%d (or %%0<n>d), and a valid LV name",
				    o.pattern);
		snprintf(c->path, sizeof(c->path), "/dev/%s/%s", o.vg, c->name);
		c->verified = -1;
		c->mode = o.thin_pool ? "thin" : o.hydrate ? "hydrate" : "thick";
		snprintf(c->dm, sizeof(c->dm), "dmcopy-%s-%s", o.vg, c->name);
		if (i && !strcmp(c->name, o.clones[0].name))
			usage_error("invalid --name '%s': names must differ", o.pattern);
	}

	if (!o.rollback && golden_size(o.golden, &o.size))
		goto out;
	golden_tag(o.golden, o.golden_tag, sizeof(o.golden_tag));
	o.golden_known = !stat(o.golden, &st) && S_ISBLK(st.st_mode);
	nlvs = list_lvs(o.vg, &lvs);
	if (nlvs < 0)
		goto out;
	if (o.rollback) {
		ret = rollback(&o, lvs, nlvs);
		goto out;
	}

	/* Before anything changes: every name free, or ours. */
	for (i = 0; i < o.count; i++) {
		struct clone *c = &o.clones[i];
		const struct lv *lv = find_lv(lvs, nlvs, c->name);

		if (!lv) {
			char meta[300];

			/* dm-clone would take its bitmap for the new clone's */
			snprintf(meta, sizeof(meta), "%s%s", c->name, HMETA_SUFFIX);
			if (o.hydrate && find_lv(lvs, nlvs, meta)) {
				warnx("%s/%s exists without its clone %s: remove it first; nothing was changed",
				      o.vg, meta, c->name);
				goto out;
			}
			c->state = CLONE_NEW;
			continue;
		}
		if (!has_tag(lv, o.tag) || !has_tag(lv, CLONE_TAG)) {
			warnx("%s/%s exists and is not a clone of an earlier run (no tag '%s'): choose another --name; nothing was changed",
			      o.vg, c->name, !has_tag(lv, CLONE_TAG) ? CLONE_TAG : o.tag);
			goto out;
		}
		if (other_golden(&o, lv, theirs, sizeof(theirs))) {
			warnx("%s/%s was made from another golden image (%s, this one is %s): deprovision it or choose another --name; nothing was changed",
			      o.vg, c->name, theirs, o.golden_tag);
			goto out;
		}
		if (lv->size < o.size) {
			warnx("%s/%s (%" PRIu64 " bytes) is smaller than the golden image (%" PRIu64 " bytes); nothing was changed",
			      o.vg, c->name, lv->size, o.size);
			goto out;
		}
		c->state = has_tag(lv, PARTIAL_TAG) ? CLONE_PARTIAL : CLONE_DONE;
		c->mode = lv->attr[0] == 'V' ? "thin" :
			  o.hydrate ? "hydrate" : "thick";
		/*
		 * Half made, but open (a VM started on it anyway): never
		 * written again. A hydrating clone is open by its own
		 * dm-clone device, which the re-run takes up.
		 */
		if (c->state == CLONE_PARTIAL && lv->attr[5] == 'o' &&
		    !has_tag(lv, HYDRATING_TAG)) {
			c->state = CLONE_IN_USE;
			snprintf(c->error, sizeof(c->error),
				 "half made, but open: not written; close it and run again, or deprovision it");
		}
	}

	/* --thin: the import of the golden image is that image's */
	if (o.thin_pool && !thin_volume_at(&o, lvs, nlvs, o.golden)) {
		char origin[128];
		const struct lv *lv;

		snprintf(origin, sizeof(origin), "%.100s-thin",
			 basename_of(o.golden));
		lv = find_lv(lvs, nlvs, origin);
		if (lv && other_golden(&o, lv, theirs, sizeof(theirs))) {
			warnx("%s/%s was imported from another golden image (%s, this one is %s): deprovision it and its clones first; nothing was changed",
			      o.vg, origin, theirs, o.golden_tag);
			goto out;
		}
	}

	/* Clones of an earlier run may be inactive (a run killed in lvcreate,
	 * no autoactivation): active for the copy or the check. */
	for (i = 0; i < o.count; i++) {
		struct clone *c = &o.clones[i];
		const struct lv *lv = find_lv(lvs, nlvs, c->name);
		char name[300];
		char *activate[] = { "lvchange", "-ay", "-K", name, NULL };

		if (!lv || lv->attr[4] == 'a')
			continue;
		snprintf(name, sizeof(name), "%s/%s", o.vg, c->name);
		if (run(activate, NULL, 0)) {
			warnx("cannot activate %s (see above); nothing was changed", name);
			goto out;
		}
	}

	o.progress.kind = PROGRESS_NONE;
	if (!o.quiet && !o.json && isatty(STDERR_FILENO))
		o.progress.kind = PROGRESS_BAR;
	else if (o.show_progress)
		o.progress.kind = PROGRESS_LINES;
	/* as dmcopy copy, unless standard output carries the JSON report */
	o.progress.out = o.json ? stderr : stdout;
	catch_signals();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	o.progress.start = t0;

	if (o.thin_pool) {
		unsigned int new_clones = 0;
		const struct lv *org;
		char oname[128];
		bool import;

		for (i = 0; i < o.count; i++)
			if (o.clones[i].state == CLONE_NEW ||
			    o.clones[i].state == CLONE_PARTIAL)
				new_clones++;
		snprintf(oname, sizeof(oname), "%.100s-thin",
			 basename_of(o.golden));
		org = find_lv(lvs, nlvs, oname);
		import = !thin_volume_at(&o, lvs, nlvs, o.golden) &&
			 (!org || has_tag(org, PARTIAL_TAG));
		if (thin_room(&o, lvs, nlvs, new_clones, import))
			goto out;
		if (thin_origin(&o, lvs, nlvs))
			goto out;
		thin_clones(&o, &create_failed);
	} else if (o.hydrate) {
		hydrate_clones(&o, &create_failed);
	} else {
		/* signatures are copied over anyway: no wiping */
		char *lvcreate[] = { "lvcreate", "-y", "-Wn", "-n", lvname,
				     "-L", sizearg, "--addtag", CLONE_TAG,
				     "--addtag", PARTIAL_TAG,
				     "--addtag", (char *)o.tag,
				     "--addtag", o.golden_tag, (char *)o.vg,
				     NULL };

		/* lvcreate one after the other: they take the VG lock anyway. */
		snprintf(sizearg, sizeof(sizearg), "%" PRIu64 "b", o.size);
		for (i = 0; i < o.count; i++) {
			struct clone *c = &o.clones[i];
			int r;

			if (c->state != CLONE_NEW)
				continue;
			if (create_failed || stop_signal) {
				c->state = CLONE_NOT_CREATED;
				continue;
			}
			snprintf(lvname, sizeof(lvname), "%s", c->name);
			r = run(lvcreate, NULL, 0);
			if (r) {
				c->state = CLONE_NOT_CREATED;
				snprintf(c->error, sizeof(c->error),
					 "lvcreate failed (exit %d, see above)", r);
				create_failed = true;
				continue;
			}
			c->created = true;
		}
		for (i = 0; i < o.count; i++)
			if (o.clones[i].state == CLONE_NEW ||
			    o.clones[i].state == CLONE_PARTIAL)
				to_copy++;
		o.total = (uint64_t)to_copy * o.size;

		if (o.jobs > to_copy)
			o.jobs = to_copy ? to_copy : 1;
		pthread_mutex_init(&o.lock, NULL);
		o.workers = calloc(o.jobs, sizeof(*o.workers));
		if (!o.workers) {
			warnx("out of memory");
			goto out;
		}
		if (to_copy && o.progress.kind != PROGRESS_NONE)
			on_progress(0, o.total, &o.progress);
		for (i = 0; i < o.jobs; i++)
			o.workers[i].o = &o;
		for (i = 0; i < o.jobs; i++)
			if (pthread_create(&o.workers[i].thread, NULL,
					   copy_worker, &o.workers[i]))
				break;
		/* fewer threads than asked: the ones there take all clones */
		nthreads = i;
		if (!nthreads)
			copy_worker(&o.workers[0]);
		for (i = 0; i < nthreads; i++)
			pthread_join(o.workers[i].thread, NULL);
		progress_end(&o.progress);
	}

	/*
	 * Finished clones of earlier runs: kept, checked when asked, unless
	 * they may have a new filesystem UUID, which makes them differ.
	 */
	for (i = 0; i < o.count; i++) {
		struct clone *c = &o.clones[i];

		if (c->state == CLONE_DONE && o.verify && !o.new_uuid &&
		    !stop_signal) {
			c->verified = same_bytes(o.golden, c->path, o.size,
						 c->error, sizeof(c->error));
			/*
			 * Finished by a run, then written to (a VM booted on
			 * it): its data is the user's. Reported, never
			 * marked for a re-run to copy over.
			 */
			if (!c->verified) {
				c->state = CLONE_CHANGED;
				snprintf(c->error, sizeof(c->error),
					 "changed since provisioning: left as it is");
			} else if (c->verified < 0) {
				c->state = CLONE_FAILED;
			}
		}
		/* anything not over is still half made */
		if ((c->state == CLONE_NEW || c->state == CLONE_PARTIAL) &&
		    stop_signal)
			c->state = CLONE_INTERRUPTED;
	}

	sum_up(&o, &t);
	if (o.json)
		print_json(&o, &t, seconds_since(&t0));
	else
		print_table(&o, &t, seconds_since(&t0));

	if (stop_signal) {
		warnx("interrupted: clones not finished keep tag '%s'; run the same command again to finish them, or with --rollback to remove them",
		      PARTIAL_TAG);
		ret = 128 + stop_signal;
	} else if (t.failed) {
		warnx("%u of %u clones failed%s; run the same command again to finish them, or with --rollback to remove every clone made",
		      t.failed, o.count,
		      create_failed ? " (lvcreate failed: is the volume group full?)" : "");
		ret = EXIT_FAILURE;
	} else {
		ret = EXIT_SUCCESS;
	}
out:
	free(o.workers);
	free(lvs);
	free(o.clones);
	if (stop_signal && ret == 128 + stop_signal)
		die_by_signal(stop_signal);
	return ret;
}

/*
 * On a terminal, as lvremove does: ask before removing @n volumes (listed
 * by the caller). True for yes; what is not "y" or "yes" is no.
 */
static bool confirm_removal(const char *vg, int n)
{
	char answer[16];

	printf("Do you really want to remove %d logical volume%s of %s? [y/n]: ",
	       n, n == 1 ? "" : "s", vg);
	fflush(stdout);
	if (!fgets(answer, sizeof(answer), stdin))
		return false;
	answer[strcspn(answer, "\n")] = '\0';
	return !strcasecmp(answer, "y") || !strcasecmp(answer, "yes");
}

int cmd_deprovision(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "vg",   required_argument, NULL, OPT_VG },
		{ "tag",  required_argument, NULL, OPT_TAG },
		{ "yes",  no_argument,       NULL, 'y' },
		{ "help", no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *vg = NULL, *tag = NULL;
	struct lv *lvs = NULL;
	int c, nlvs, i, ret = EXIT_SUCCESS, removed = 0, chosen = 0;
	bool yes = false;

	while ((c = getopt_long(argc, argv, ":yh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_VG: vg = optarg; break;
		case OPT_TAG: tag = optarg; break;
		case 'y': yes = true; break;
		case 'h': provision_usage(); exit(EXIT_SUCCESS);
		default: bad_option(argv, c);
		}
	}
	if (!vg)
		usage_error("deprovision: no volume group given (--vg)");
	if (!lvm_word(vg))
		usage_error("invalid volume group name '%s'", vg);
	if (!tag && optind == argc)
		usage_error("deprovision: say which clones: --tag <tag> or their names");
	if (tag && optind < argc)
		usage_error("deprovision: --tag or names, not both");
	if (tag && !lvm_word(tag))
		usage_error("invalid tag '%s'", tag);
	setenv("LVM_SUPPRESS_FD_WARNINGS", "1", 1);
	setenv("LC_ALL", "C", 1);

	nlvs = list_lvs(vg, &lvs);
	if (nlvs < 0)
		return EXIT_FAILURE;
	/* what would go, for the question on a terminal */
	if (!yes && isatty(STDIN_FILENO)) {
		for (i = 0; tag && i < nlvs; i++) {
			if (!has_tag(&lvs[i], tag) || !has_tag(&lvs[i], CLONE_TAG))
				continue;
			printf("  %s/%s\n", vg, lvs[i].name);
			chosen++;
		}
		for (i = optind; !tag && i < argc; i++) {
			const struct lv *lv = find_lv(lvs, nlvs, argv[i]);

			if (!lv || !has_tag(lv, CLONE_TAG))
				break;
			printf("  %s/%s\n", vg, argv[i]);
			chosen++;
		}
		/* names that are not clones are refused below, without asking */
		if (chosen && (tag || i == argc) && !confirm_removal(vg, chosen)) {
			warnx("nothing was removed");
			free(lvs);
			return EXIT_FAILURE;
		}
	}
	if (tag) {
		/* hydrating clones' devices first: they hold the volumes */
		for (i = 0; i < nlvs; i++)
			if (has_tag(&lvs[i], tag) && has_tag(&lvs[i], CLONE_TAG) &&
			    remove_hydrate_dm(vg, lvs[i].name))
				ret = EXIT_FAILURE;
		for (i = 0; i < nlvs; i++) {
			/* only what provision made */
			if (!has_tag(&lvs[i], tag) || !has_tag(&lvs[i], CLONE_TAG))
				continue;
			if (lv_remove(vg, lvs[i].name)) {
				warnx("could not remove %s/%s (see above)", vg, lvs[i].name);
				ret = EXIT_FAILURE;
				continue;
			}
			printf("removed %s/%s\n", vg, lvs[i].name);
			removed++;
		}
		if (!removed && ret == EXIT_SUCCESS)
			printf("no logical volume of %s has tag '%s'\n", vg, tag);
		free(lvs);
		return ret;
	}
	/* Names: each must be one provision made, checked before any goes. */
	for (i = optind; i < argc; i++) {
		const struct lv *lv = find_lv(lvs, nlvs, argv[i]);

		if (!lv) {
			warnx("%s/%s: no such logical volume; nothing was removed", vg, argv[i]);
			free(lvs);
			return EXIT_FAILURE;
		}
		if (!has_tag(lv, CLONE_TAG)) {
			warnx("%s/%s was not made by dmcopy provision (tags: '%s'); nothing was removed",
			      vg, argv[i], lv->tags);
			free(lvs);
			return EXIT_FAILURE;
		}
	}
	for (i = optind; i < argc; i++)
		if (remove_clone(vg, lvs, nlvs, argv[i]))
			ret = EXIT_FAILURE;
	free(lvs);
	return ret;
}
