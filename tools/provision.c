// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dmcopy provision: clones of a golden image as logical volumes of a volume
 * group, copied with the library's copy engine (offloaded where the
 * device copies), and dmcopy deprovision, which removes them. This file
 * is the batch: options, the checks before anything changes, what a re-run
 * finds, and the end every clone shares (verify, new UUID, tags).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <blkid.h>

#include "provision.h"

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

const char *basename_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/*
 * Read both with O_DIRECT (the device's bytes, not the page cache's) and
 * compare. 1 same, 0 differ, -1 an error (in @err).
 */
int same_bytes(const char *a, const char *b, uint64_t size, char *err,
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
bool same_uuid(const char *a, const char *b)
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
int new_uuid(struct clone *c, const char *dev)
{
	char type[32];
	int r;

	fs_value(dev, "TYPE", type, sizeof(type));
	if (!strcmp(type, "ext2") || !strcmp(type, "ext3") ||
	    !strcmp(type, "ext4")) {
		/* tune2fs wants a freshly checked filesystem for -U */
		char *fsck[] = { "e2fsck", "-f", "-p", (char *)dev, NULL };
		char *tune[] = { "tune2fs", "-U", "random", (char *)dev, NULL };

		r = run(fsck, NULL);
		if (r < 0 || r > 1) {
			snprintf(c->error, sizeof(c->error),
				 "e2fsck -f -p %s before the new UUID failed (exit %d)",
				 dev, r);
			return -1;
		}
		r = run(tune, NULL);
	} else if (!strcmp(type, "xfs")) {
		char *admin[] = { "xfs_admin", "-U", "generate", (char *)dev, NULL };

		r = run(admin, NULL);
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
int finish_clone(const struct provision *o, struct clone *c,
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
	r = run(deltag, NULL);
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
	struct provision o = {
		.tag = DEFAULT_TAG, .jobs = 1, .import.size = sizeof(o.import),
	};
	char default_pattern[160], theirs[200];
	struct stat st;
	struct timespec t0;
	struct totals t;
	struct lv *lvs = NULL;
	int nlvs, ret = EXIT_FAILURE;
	unsigned int i;
	bool create_failed = false, report_failed = false;

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
		c->rep.size = sizeof(c->rep);
		c->mode = o.thin_pool ? "thin" : o.hydrate ? "hydrate" : "thick";
		snprintf(c->dm, sizeof(c->dm), "dmcopy-%s-%s", o.vg, c->name);
		if (i && !strcmp(c->name, o.clones[0].name))
			usage_error("invalid --name '%s': names must differ", o.pattern);
	}

	if (!o.rollback && golden_size(o.golden, &o.size))
		goto out;
	golden_tag(o.golden, o.golden_tag, sizeof(o.golden_tag));
	o.golden_known = !stat(o.golden, &st) && S_ISBLK(st.st_mode);
	nlvs = list_lvs(o.vg, NULL, &lvs);
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
		if (run(activate, NULL)) {
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
	} else if (thick_clones(&o, &create_failed)) {
		goto out;
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
		report_failed = print_json(&o, &t, seconds_since(&t0)) < 0;
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
		/* the clones are there, but a script got no report of them */
		ret = report_failed ? EXIT_FAILURE : EXIT_SUCCESS;
	}
out:
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
	char select[300];
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

	/* by tag: lvs picks them ({}: both among its tags); has_tag() decides */
	if (tag)
		snprintf(select, sizeof(select), "lv_tags={\"%s\",\"%s\"}",
			 CLONE_TAG, tag);
	nlvs = list_lvs(vg, tag ? select : NULL, &lvs);
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
