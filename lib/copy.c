// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The copy engine: check, probe, then copy_file_range() chunk by chunk,
 * or read and write where the kernel refuses; dmcopy_copy() in
 * libdmcopy.h says what it promises. The decisions are in copy-plan.c.
 */
#define _GNU_SOURCE	/* O_DIRECT, copy_file_range() */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <blkid.h>

#include "dmcopy-private.h"

/* The read/write loop's buffer: at most this much per read. */
#define USER_BUFFER	(8ULL << 20)
#define BUFFER_ALIGN	4096

struct copy_side {
	struct dmcopy_copy_end end;
	struct dmcopy_caps caps;	/* block devices only */
	int fd;
};

struct copy_run {
	struct dmcopy_ctx *ctx;
	struct copy_side src, dst;
	uint64_t src_off, dst_off;
	uint64_t chunk;
	uint64_t kernel_bytes;		/* what copy_file_range() copied */
	void *buf;
	size_t buf_len;
	struct dmcopy_copy_report *rep;
};

static int describe(struct dmcopy_ctx *ctx, const char *path, bool is_dst,
		    struct copy_side *side)
{
	struct dmcopy_copy_end *e = &side->end;
	struct stat st;
	int r;

	e->path = path;
	if (stat(path, &st) < 0) {
		r = -errno;
		return dmcopy_err(ctx, r, "%s: %s", path, strerror(-r));
	}
	if (S_ISREG(st.st_mode)) {
		snprintf(e->id, sizeof(e->id), "file %u:%u:%ju",
			 major(st.st_dev), minor(st.st_dev), (uintmax_t)st.st_ino);
		e->size = (uint64_t)st.st_size;
		e->align = 1;
		e->grows = is_dst;
		return 0;
	}
	if (!S_ISBLK(st.st_mode))
		return dmcopy_err(ctx, -EINVAL,
				  "%s: not a block device or regular file", path);
	r = dmcopy_device_caps(ctx, path, &side->caps);
	if (r)
		return r;
	e->is_blockdev = true;
	snprintf(e->id, sizeof(e->id), "%s", side->caps.disk);
	e->start = side->caps.partition_start;
	e->size = side->caps.size_bytes;
	e->align = side->caps.logical_block_size ?: 512;
	e->kernel_copy = side->caps.has_copy_sysfs;
	return 0;
}

/*
 * Where a range of a block device is stored, at the bottom of its stack:
 * the same storage may have two names (a loop device and its backing
 * file, a dm-linear device and the disk under it), and a copy between
 * two names of one place must not overlap either.
 */
struct extent {
	char id[DMCOPY_NAME_LEN + 48];	/* as dmcopy_copy_end's */
	uint64_t start, len;		/* bytes of id */
};

struct extents {
	struct extent *v;
	size_t n;
};

/* Deeper than any real stack of loop and dm-linear devices. */
#define RESOLVE_MAX_DEPTH	16

static int add_extent(struct dmcopy_ctx *ctx, struct extents *x,
		      const char *id, uint64_t start, uint64_t len)
{
	struct extent *v = realloc(x->v, (x->n + 1) * sizeof(*v));

	if (!v)
		return dmcopy_err(ctx, -ENOMEM, "out of memory");
	x->v = v;
	snprintf(v[x->n].id, sizeof(v[x->n].id), "%s", id);
	v[x->n].start = start;
	v[x->n].len = len;
	x->n++;
	return 0;
}

static int resolve(struct dmcopy_ctx *ctx, const char *dev, uint64_t off,
		   uint64_t len, unsigned int depth, struct extents *x);

/* A loop device's range: in its backing file (or device), from its offset. */
static int resolve_loop(struct dmcopy_ctx *ctx, const struct dmcopy_caps *caps,
			uint64_t abs, uint64_t len, unsigned int depth,
			struct extents *x, bool *done)
{
	char file[4096], id[DMCOPY_NAME_LEN + 48];
	uint64_t loop_off = 0;
	struct stat st;

	*done = false;
	if (strncmp(caps->disk, "loop", 4) ||
	    dmcopy_sysfs_read(ctx, file, sizeof(file), "block/%s/loop/backing_file",
			      caps->disk) < 0 ||
	    stat(file, &st) < 0)
		return 0;
	if (dmcopy_sysfs_read_u64(ctx, &loop_off, "block/%s/loop/offset",
				  caps->disk) < 0)
		loop_off = 0;
	*done = true;
	if (S_ISBLK(st.st_mode))
		return resolve(ctx, file, loop_off + abs, len, depth + 1, x);
	snprintf(id, sizeof(id), "file %u:%u:%ju", major(st.st_dev),
		 minor(st.st_dev), (uintmax_t)st.st_ino);
	return add_extent(ctx, x, id, loop_off + abs, len);
}

/* A dm device's range: through its linear targets to the devices below. */
static int resolve_dm(struct dmcopy_ctx *ctx, const struct dmcopy_caps *caps,
		      uint64_t abs, uint64_t len, unsigned int depth,
		      struct extents *x, bool *done)
{
	struct dmcopy_dm_segment *segs;
	uint64_t lo, hi, s, e;
	char below[32];
	size_t n, i;
	int r = 0;

	*done = false;
	/* tables only of the running kernel; not root: the device itself */
	if (!ctx->real_sysfs || !caps->is_dm || !caps->dm_name[0] ||
	    dmcopy_dm_segments(ctx, caps->dm_name, &segs, &n) < 0)
		return 0;
	*done = true;
	for (i = 0; !r && i < n; i++) {
		s = segs[i].start * 512;
		e = s + segs[i].length * 512;
		lo = abs > s ? abs : s;
		hi = abs + len < e ? abs + len : e;
		if (lo >= hi)
			continue;
		if (!segs[i].linear) {
			/* thin, snapshot, crypt...: stored where it says */
			r = add_extent(ctx, x, caps->disk, lo, hi - lo);
			continue;
		}
		snprintf(below, sizeof(below), "%u:%u", segs[i].major,
			 segs[i].minor);
		r = resolve(ctx, below, segs[i].offset * 512 + (lo - s), hi - lo,
			    depth + 1, x);
	}
	free(segs);
	return r;
}

/* [@off, +@len) of block device @dev (a path or MAJ:MIN) into @x. */
static int resolve(struct dmcopy_ctx *ctx, const char *dev, uint64_t off,
		   uint64_t len, unsigned int depth, struct extents *x)
{
	struct dmcopy_caps caps = { .size = sizeof(caps) };
	bool done = false;
	uint64_t abs;
	int r;

	if (depth > RESOLVE_MAX_DEPTH)
		return dmcopy_err(ctx, -ELOOP, "%s: stacked deeper than %d devices",
				  dev, RESOLVE_MAX_DEPTH);
	r = dmcopy_device_caps(ctx, dev, &caps);
	if (r)
		return r;
	abs = caps.partition_start + off;
	r = resolve_loop(ctx, &caps, abs, len, depth, x, &done);
	if (!r && !done)
		r = resolve_dm(ctx, &caps, abs, len, depth, x, &done);
	if (!r && !done)
		r = add_extent(ctx, x, caps.disk, abs, len);
	dmcopy_caps_release(&caps);
	return r;
}

static int side_extents(struct dmcopy_ctx *ctx, const struct copy_side *side,
			uint64_t off, uint64_t len, struct extents *x)
{
	if (!side->end.is_blockdev)
		return add_extent(ctx, x, side->end.id, off, len);
	return resolve(ctx, side->end.path, off, len, 0, x);
}

/*
 * Source and destination may be one storage under two names; refuse a
 * copy whose ranges meet where they are stored.
 */
static int check_aliases(struct dmcopy_ctx *ctx, const struct copy_run *run,
			 uint64_t len)
{
	struct extents sx = { 0 }, dx = { 0 };
	size_t i, j;
	int r;

	r = side_extents(ctx, &run->src, run->src_off, len, &sx);
	if (!r)
		r = side_extents(ctx, &run->dst, run->dst_off, len, &dx);
	for (i = 0; !r && i < sx.n; i++) {
		for (j = 0; !r && j < dx.n; j++) {
			const struct extent *a = &sx.v[i], *b = &dx.v[j];

			if (strcmp(a->id, b->id) ||
			    (a->start < b->start ? b->start - a->start >= a->len :
			     a->start - b->start >= b->len))
				continue;
			r = dmcopy_err(ctx, -EINVAL,
				       "source and destination overlap: %s and %s are both stored on %s",
				       run->src.end.path, run->dst.end.path, a->id);
		}
	}
	free(sx.v);
	free(dx.v);
	return r;
}

/* "an ext4 filesystem", "a LVM2_member raid signature"... */
static int signature_found(struct dmcopy_ctx *ctx, const char *path,
			   blkid_probe pr)
{
	const char *type = NULL, *usage = NULL;

	if (!blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL))
		return dmcopy_err(ctx, -EEXIST,
				  "%s: holds a %s partition table (force overwrites it)",
				  path, type);
	if (blkid_probe_lookup_value(pr, "TYPE", &type, NULL))
		type = "unknown";
	if (blkid_probe_lookup_value(pr, "USAGE", &usage, NULL))
		usage = "other";
	if (!strcmp(usage, "filesystem"))
		return dmcopy_err(ctx, -EEXIST,
				  "%s: holds %s %s filesystem (force overwrites it)",
				  path, strchr("aeiou", type[0]) ? "an" : "a", type);
	return dmcopy_err(ctx, -EEXIST,
			  "%s: holds a %s signature (%s; force overwrites it)",
			  path, type, usage);
}

/* What libblkid finds on the destination: nothing, or a refusal. */
static int probe_destination(struct dmcopy_ctx *ctx, const struct copy_side *dst)
{
	const char *path = dst->end.path;
	blkid_probe pr;
	int rc, r = 0;

	/* an empty file holds nothing (and libblkid refuses size 0) */
	if (!dst->end.is_blockdev && !dst->end.size)
		return 0;
	errno = 0;
	pr = blkid_new_probe_from_filename(path);
	if (!pr) {
		r = errno ? -errno : -EIO;
		return dmcopy_err(ctx, r, "%s: cannot probe for signatures: %s",
				  path, strerror(-r));
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
					  BLKID_SUBLKS_USAGE);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == 0)
		r = signature_found(ctx, path, pr);
	else if (rc == -2)
		r = dmcopy_err(ctx, -EEXIST,
			       "%s: holds more than one signature (force overwrites them)",
			       path);
	else if (rc < 0)
		r = dmcopy_err(ctx, -EIO, "%s: cannot probe for signatures", path);
	blkid_free_probe(pr);
	return r;
}

static int check_holders(struct dmcopy_ctx *ctx, const struct copy_side *dst)
{
	const struct dmcopy_caps *caps = &dst->caps;

	if (!dst->end.is_blockdev || !caps->nr_holders)
		return 0;
	return dmcopy_err(ctx, -EBUSY, "%s: in use by %s%s (force twice copies anyway)",
			  dst->end.path, caps->holders[0],
			  caps->nr_holders > 1 ? " and others" : "");
}

/*
 * Is @devno, or for a whole disk one of its partitions, mounted? The
 * exclusive open below refuses such a device too, but cannot say why:
 * this names the mount point.
 */
static int check_mounted(struct dmcopy_ctx *ctx, const struct copy_side *dst)
{
	const struct dmcopy_caps *caps = &dst->caps;
	unsigned int maj, min, pmaj, pmin;
	char line[4096], mnt[4096], buf[32];
	FILE *f;
	int r = 0;

	if (!dst->end.is_blockdev)
		return 0;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return 0;
	while (!r && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mnt) != 3)
			continue;
		if (maj == caps->major && min == caps->minor) {
			r = dmcopy_err(ctx, -EBUSY, "%s: mounted on %s (force twice copies anyway)",
				       dst->end.path, mnt);
			break;
		}
		/* a partition of this disk: its dev is under the disk's dir */
		if (caps->partition_start || !caps->disk[0])
			continue;
		if (dmcopy_sysfs_read(ctx, buf, sizeof(buf), "dev/block/%u:%u/partition",
				      maj, min) < 0)
			continue;
		if (dmcopy_sysfs_read(ctx, buf, sizeof(buf), "dev/block/%u:%u/../dev",
				      maj, min) < 0 ||
		    sscanf(buf, "%u:%u", &pmaj, &pmin) != 2)
			continue;
		if (pmaj == caps->major && pmin == caps->minor)
			r = dmcopy_err(ctx, -EBUSY, "%s: a partition (%u:%u) is mounted on %s (force twice copies anyway)",
				       dst->end.path, maj, min, mnt);
	}
	fclose(f);
	return r;
}

static int open_side(struct dmcopy_ctx *ctx, struct copy_side *side,
		     bool is_dst, bool force)
{
	int flags = O_CLOEXEC, r;

	if (is_dst)
		flags |= O_WRONLY | (side->end.is_blockdev && !force ? O_EXCL : 0);
	else
		flags |= O_RDONLY;
	if (side->end.is_blockdev)
		flags |= O_DIRECT;
	side->fd = open(side->end.path, flags);
	if (side->fd >= 0)
		return 0;
	r = -errno;
	if (r == -EBUSY && (flags & O_EXCL))
		return dmcopy_err(ctx, r,
				  "%s: in use: opened exclusively by another program (force twice copies anyway)",
				  side->end.path);
	return dmcopy_err(ctx, r, "%s: cannot open: %s", side->end.path,
			  strerror(-r));
}

/* The destination disk's offloaded and emulated bytes so far. */
static int read_copy_stat(struct dmcopy_ctx *ctx, const struct copy_side *dst,
			  uint64_t *offloaded, uint64_t *emulated)
{
	unsigned long long v[6];
	char buf[256];

	if (!dst->end.is_blockdev || !dst->caps.has_copy_stat)
		return -ENOENT;
	if (dmcopy_sysfs_read(ctx, buf, sizeof(buf), "block/%s/copy_stat",
			      dst->caps.disk) < 0 ||
	    sscanf(buf, "%llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5]) != 6)
		return -EIO;
	*offloaded = v[1];
	*emulated = v[3];
	return 0;
}

/*
 * One chunk with copy_file_range(): 0, 1 when the kernel refused (nothing
 * of this chunk copied), or a negative errno. A stop request that
 * interrupts the call ends the chunk early: the prefix stays whole.
 */
static int kernel_chunk(struct copy_run *run, uint64_t n,
			const volatile sig_atomic_t *stop)
{
	struct dmcopy_copy_report *rep = run->rep;
	const char *why = NULL;
	uint64_t got = 0;
	loff_t in, out;
	ssize_t ret;

	while (got < n) {
		in = (loff_t)(run->src_off + rep->copied);
		out = (loff_t)(run->dst_off + rep->copied);
		ret = copy_file_range(run->src.fd, &in, run->dst.fd, &out,
				      (size_t)(n - got), 0);
		if (ret < 0 && errno == EINTR) {
			if (stop && *stop)
				return 0;
			continue;
		}
		if (ret < 0 && !got)
			why = dmcopy_copy_refusal(errno, &run->src.end,
						  &run->dst.end);
		if (ret < 0 && why) {
			rep->refused = true;
			rep->refused_errno = errno;
			rep->refused_why = why;
			return 1;
		}
		if (ret < 0)
			return dmcopy_err(run->ctx, -errno,
					  "copy_file_range() at byte %" PRIu64 ": %s",
					  rep->copied, strerror(errno));
		if (!ret)
			return dmcopy_err(run->ctx, -EIO,
					  "%s: ended at byte %" PRIu64 " of the copy",
					  run->src.end.path, rep->copied);
		got += (uint64_t)ret;
		rep->copied += (uint64_t)ret;
		run->kernel_bytes += (uint64_t)ret;
	}
	return 0;
}

static int alloc_buffer(struct copy_run *run)
{
	uint64_t unit = run->src.end.align > run->dst.end.align ?
		run->src.end.align : run->dst.end.align;
	uint64_t len = run->chunk < USER_BUFFER ? run->chunk : USER_BUFFER;

	len -= len % unit;
	if (!len)
		len = unit;
	if (posix_memalign(&run->buf, BUFFER_ALIGN > unit ? BUFFER_ALIGN : unit,
			   (size_t)len))
		return dmcopy_err(run->ctx, -ENOMEM, "out of memory");
	run->buf_len = (size_t)len;
	return 0;
}

/*
 * One chunk read and written here, in pieces of the aligned buffer. A stop
 * request is seen between pieces: a chunk of 64M is seconds of I/O.
 */
static int user_chunk(struct copy_run *run, uint64_t n,
		      const volatile sig_atomic_t *stop)
{
	struct dmcopy_copy_report *rep = run->rep;
	uint64_t end = rep->copied + n;
	ssize_t got, put;
	size_t want, done;
	int r;

	if (!run->buf && (r = alloc_buffer(run)))
		return r;
	while (rep->copied < end) {
		if (stop && *stop)
			return 0;
		want = end - rep->copied < run->buf_len ?
			(size_t)(end - rep->copied) : run->buf_len;
		got = pread(run->src.fd, run->buf, want,
			    (off_t)(run->src_off + rep->copied));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return dmcopy_err(run->ctx, -errno, "%s: read at %" PRIu64 ": %s",
					  run->src.end.path, run->src_off + rep->copied,
					  strerror(errno));
		if (!got)
			return dmcopy_err(run->ctx, -EIO,
					  "%s: ended at byte %" PRIu64 " of the copy",
					  run->src.end.path, rep->copied);
		for (done = 0; done < (size_t)got; done += (size_t)put) {
			put = pwrite(run->dst.fd, (char *)run->buf + done,
				     (size_t)got - done,
				     (off_t)(run->dst_off + rep->copied + done));
			if (put < 0 && errno == EINTR) {
				put = 0;
				continue;
			}
			if (put <= 0)
				return dmcopy_err(run->ctx, put ? -errno : -EIO,
						  "%s: write at %" PRIu64 ": %s",
						  run->dst.end.path,
						  run->dst_off + rep->copied + done,
						  put ? strerror(errno) : "nothing written");
		}
		rep->copied += (uint64_t)got;
		rep->userspace += (uint64_t)got;
	}
	return 0;
}

static int copy_loop(struct copy_run *run, const struct dmcopy_copy_opts *o)
{
	struct dmcopy_copy_report *rep = run->rep;
	bool user = o->no_offload;
	uint64_t n;
	int r = 0;

	if (o->progress)
		o->progress(0, rep->length, o->progress_data);
	while (rep->copied < rep->length) {
		if (o->stop && *o->stop) {
			rep->interrupted = true;
			return dmcopy_err(run->ctx, -EINTR,
					  "interrupted after %" PRIu64 " bytes",
					  rep->copied);
		}
		n = rep->length - rep->copied;
		if (n > run->chunk)
			n = run->chunk;
		if (user) {
			r = user_chunk(run, n, o->stop);
		} else {
			r = kernel_chunk(run, n, o->stop);
			if (r == 1) {
				user = true;	/* the rest too, without asking again */
				continue;
			}
		}
		if (r)
			return r;
		if (o->progress)
			o->progress(rep->copied, rep->length, o->progress_data);
	}
	return 0;
}

/* After the copy: the split of what the kernel copied, from copy_stat. */
static void account(struct copy_run *run, uint64_t off0, bool counted)
{
	struct dmcopy_copy_report *rep = run->rep;
	uint64_t off1, emu1, offloaded = 0;

	if (counted && !read_copy_stat(run->ctx, &run->dst, &off1, &emu1)) {
		rep->counted = true;
		offloaded = off1 >= off0 ? off1 - off0 : 0;
		if (offloaded > run->kernel_bytes)
			offloaded = run->kernel_bytes;
	}
	rep->offloaded = offloaded;
	rep->emulated = run->kernel_bytes - offloaded;
}

static int prepare(struct copy_run *run, const char *src_path,
		   const char *dst_path, uint64_t len,
		   const struct dmcopy_copy_opts *o)
{
	struct dmcopy_ctx *ctx = run->ctx;
	uint64_t unit;
	int r;

	r = describe(ctx, src_path, false, &run->src);
	if (!r)
		r = describe(ctx, dst_path, true, &run->dst);
	if (!r)
		r = dmcopy_copy_plan(ctx, &run->src.end, run->src_off,
				     &run->dst.end, run->dst_off, &len);
	if (r)
		return r;
	run->rep->length = len;
	r = check_aliases(ctx, run, len);
	if (r)
		return r;
	if (!o->force_in_use && ((r = check_mounted(ctx, &run->dst)) ||
				 (r = check_holders(ctx, &run->dst))))
		return r;
	if (!o->force && (r = probe_destination(ctx, &run->dst)))
		return r;
	r = open_side(ctx, &run->src, false, o->force_in_use);
	if (!r)
		r = open_side(ctx, &run->dst, true, o->force_in_use);
	if (r)
		return r;

	unit = run->src.end.align > run->dst.end.align ?
		run->src.end.align : run->dst.end.align;
	run->chunk = o->chunk_bytes ?: DMCOPY_DEFAULT_CHUNK;
	run->chunk -= run->chunk % unit;
	if (!run->chunk)
		run->chunk = unit;
	return 0;
}

int dmcopy_copy(struct dmcopy_ctx *ctx,
		const char *src_path, uint64_t src_off,
		const char *dst_path, uint64_t dst_off, uint64_t len,
		const struct dmcopy_copy_opts *opts,
		struct dmcopy_copy_report *report)
{
	struct dmcopy_copy_opts full_opts = { .size = sizeof(full_opts) };
	const struct dmcopy_copy_opts *o = &full_opts;
	struct dmcopy_copy_report rep = { .size = sizeof(rep) };
	struct copy_run run = {
		.ctx = ctx, .src_off = src_off, .dst_off = dst_off, .rep = &rep,
		.src = { .fd = -1, .caps.size = sizeof(run.src.caps) },
		.dst = { .fd = -1, .caps.size = sizeof(run.dst.caps) },
	};
	uint64_t off0 = 0, emu0 = 0;
	bool counted = false;
	int r;

	r = dmcopy_check_size(ctx, report->size, DMCOPY_COPY_REPORT_SIZE_V1,
			      "dmcopy_copy_report");
	if (!r && opts)
		r = dmcopy_check_size(ctx, opts->size, DMCOPY_COPY_OPTS_SIZE_V1,
				      "dmcopy_copy_opts");
	if (r)
		return r;
	if (opts)
		dmcopy_struct_in(&full_opts, sizeof(full_opts), opts);
	rep.avoided = o->no_offload;
	ctx->err[0] = '\0';
	r = prepare(&run, src_path, dst_path, len, o);
	if (r)
		goto out;
	counted = !read_copy_stat(ctx, &run.dst, &off0, &emu0);
	r = copy_loop(&run, o);
	/* what was copied is flushed, a prefix after a stop or an error too */
	if (fdatasync(run.dst.fd) < 0 && !r)
		r = dmcopy_err(ctx, -errno, "%s: cannot flush: %s", dst_path,
			       strerror(errno));
	account(&run, off0, counted);
	if (!r)
		ctx->err[0] = '\0';
out:
	free(run.buf);
	if (run.src.fd >= 0)
		close(run.src.fd);
	if (run.dst.fd >= 0)
		close(run.dst.fd);
	dmcopy_caps_release(&run.src.caps);
	dmcopy_caps_release(&run.dst.caps);
	dmcopy_struct_out(report, &rep, sizeof(rep));
	return r;
}
