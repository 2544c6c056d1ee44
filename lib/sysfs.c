// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Block devices as sysfs shows them: names, copy limits and counters, the
 * dm name and uuid, slaves and holders.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dmcopy-private.h"

#define NO_COPY_SYSFS "kernel without copy offload: copies go through user space"

static int copy_name(struct dmcopy_ctx *ctx, const char *src, char *name,
		     size_t len)
{
	if (strlen(src) >= len)
		return dmcopy_err(ctx, -ENAMETOOLONG, "%s: name too long", src);
	strcpy(name, src);
	return 0;
}

/* A kernel name is one path component: no way out of the sysfs root. */
static bool valid_kernel_name(const char *name)
{
	return *name && !strchr(name, '/') && strcmp(name, ".") &&
		strcmp(name, "..");
}

/* <root>/dev/block/MAJ:MIN is a link to the device's directory. */
static int name_of_devnum(struct dmcopy_ctx *ctx, const char *spec,
			  unsigned int major, unsigned int minor,
			  char *name, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	if (dmcopy_snprintf(path, sizeof(path), "%s/dev/block/%u:%u",
			    ctx->sysfs_root, major, minor) < 0)
		return dmcopy_err(ctx, -ENAMETOOLONG, "sysfs path too long");
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return dmcopy_err(ctx, -ENOENT, "%s: no such block device", spec);
	target[n] = '\0';
	base = strrchr(target, '/');
	return copy_name(ctx, base ? base + 1 : target, name, len);
}

static int resolve_path(struct dmcopy_ctx *ctx, const char *spec,
			char *name, size_t len)
{
	struct stat st;

	if (stat(spec, &st) < 0) {
		int r = -errno;

		return dmcopy_err(ctx, r, "%s: %s", spec, strerror(-r));
	}
	if (!S_ISBLK(st.st_mode))
		return dmcopy_err(ctx, -ENOTBLK, "%s: not a block device", spec);
	return name_of_devnum(ctx, spec, major(st.st_rdev), minor(st.st_rdev),
			      name, len);
}

int dmcopy_resolve_device(struct dmcopy_ctx *ctx, const char *spec,
			  char *name, size_t len)
{
	unsigned int major, minor;
	char path[PATH_MAX], tail;

	if (!spec || !*spec)
		return dmcopy_err(ctx, -ENOENT, "no device named");
	if (strchr(spec, '/'))
		return resolve_path(ctx, spec, name, len);
	if (sscanf(spec, "%u:%u%c", &major, &minor, &tail) == 2)
		return name_of_devnum(ctx, spec, major, minor, name, len);
	if (!valid_kernel_name(spec))
		return dmcopy_err(ctx, -ENOENT, "%s: no such block device", spec);
	if (dmcopy_snprintf(path, sizeof(path), "%s/class/block/%s",
			    ctx->sysfs_root, spec) < 0)
		return dmcopy_err(ctx, -ENAMETOOLONG, "%s: name too long", spec);
	if (access(path, F_OK) < 0)
		return dmcopy_err(ctx, -ENOENT, "%s: no such block device", spec);
	return copy_name(ctx, spec, name, len);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

void dmcopy_free_names(char **names, size_t count)
{
	size_t i;

	if (!names)
		return;
	for (i = 0; i < count; i++)
		free(names[i]);
	free(names);
}

/*
 * The entries of directory <root>/<rel>, sorted; a directory that is not
 * there has none (a kernel or device without slaves/).
 */
static int read_names(struct dmcopy_ctx *ctx, const char *rel,
		      char ***names, size_t *count)
{
	char path[PATH_MAX], **list = NULL, **grown;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	DIR *dir;

	*names = NULL;
	*count = 0;
	if (dmcopy_snprintf(path, sizeof(path), "%s/%s", ctx->sysfs_root,
			    rel) < 0)
		return dmcopy_err(ctx, -ENAMETOOLONG, "sysfs path too long");
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT || errno == ENOTDIR ? 0 :
			dmcopy_err(ctx, -errno, "cannot read %s: %s", path,
				   strerror(errno));
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			grown = realloc(list, alloc * sizeof(*list));
			if (!grown)
				goto nomem;
			list = grown;
		}
		list[n] = strdup(de->d_name);
		if (!list[n])
			goto nomem;
		n++;
	}
	closedir(dir);
	if (n)
		qsort(list, n, sizeof(*list), cmp_names);
	*names = list;
	*count = n;
	return 0;
nomem:
	closedir(dir);
	dmcopy_free_names(list, n);
	return dmcopy_err(ctx, -ENOMEM, "out of memory");
}

int dmcopy_list_devices(struct dmcopy_ctx *ctx, char ***names)
{
	size_t count;
	int r;

	r = read_names(ctx, "block", names, &count);
	if (r < 0)
		return r;
	if (count > INT_MAX) {
		dmcopy_free_names(*names, count);
		return dmcopy_err(ctx, -EOVERFLOW, "too many block devices");
	}
	return (int)count;
}

void dmcopy_caps_release(struct dmcopy_caps *caps)
{
	dmcopy_free_names(caps->slaves, caps->nr_slaves);
	dmcopy_free_names(caps->holders, caps->nr_holders);
	caps->slaves = caps->holders = NULL;
	caps->nr_slaves = caps->nr_holders = 0;
}

/*
 * A partition's directory is inside its disk's: the disk is the parent of
 * what class/block/<name> links to.
 */
static int find_disk(struct dmcopy_ctx *ctx, struct dmcopy_caps *caps)
{
	char path[PATH_MAX], real[PATH_MAX], *slash;
	uint64_t start;
	int r;

	r = dmcopy_sysfs_read_u64(ctx, &start, "class/block/%s/partition",
				  caps->name);
	if (r == -ENOENT)
		return copy_name(ctx, caps->name, caps->disk, sizeof(caps->disk));
	if (r < 0)
		return r;

	caps->is_partition = true;
	r = dmcopy_sysfs_read_u64(ctx, &start, "class/block/%s/start",
				  caps->name);
	if (r < 0)
		return r == -ENOENT ? dmcopy_err(ctx, -EIO,
				"%s: partition without start", caps->name) : r;
	caps->partition_start = start * 512;

	snprintf(path, sizeof(path), "%s/class/block/%s", ctx->sysfs_root,
		 caps->name);
	if (!realpath(path, real))
		return dmcopy_err(ctx, -errno, "%s: %s", path, strerror(errno));
	slash = strrchr(real, '/');
	if (slash)
		*slash = '\0';
	slash = strrchr(real, '/');
	return copy_name(ctx, slash ? slash + 1 : real, caps->disk,
			 sizeof(caps->disk));
}

static int read_devnum(struct dmcopy_ctx *ctx, struct dmcopy_caps *caps)
{
	char buf[32], tail;
	int r;

	r = dmcopy_sysfs_read(ctx, buf, sizeof(buf), "class/block/%s/dev",
			      caps->name);
	if (r < 0)
		return r == -ENOENT ? dmcopy_err(ctx, -EIO, "%s: no dev in sysfs",
						 caps->name) : r;
	if (sscanf(buf, "%u:%u%c", &caps->major, &caps->minor, &tail) != 2)
		return dmcopy_err(ctx, -EIO, "%s: unexpected dev '%s'",
				  caps->name, buf);
	return 0;
}

/* An attribute every kernel has: missing means a broken sysfs view. */
static int read_required(struct dmcopy_ctx *ctx, uint64_t *value,
			 const char *dev, const char *attr)
{
	int r;

	r = dmcopy_sysfs_read_u64(ctx, value, "class/block/%s/%s", dev, attr);
	if (r == -ENOENT)
		return dmcopy_err(ctx, -EIO, "%s: no %s in sysfs", dev, attr);
	return r;
}

/*
 * Six numbers (the calls made on this disk), or eight since kernels count
 * the copies a device executed that passed through the disk as well.
 */
static int read_copy_stat(struct dmcopy_ctx *ctx, struct dmcopy_caps *caps)
{
	unsigned long long v[8];
	char buf[256], tail;
	int r, n;

	r = dmcopy_sysfs_read(ctx, buf, sizeof(buf), "block/%s/copy_stat",
			      caps->disk);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	n = sscanf(buf, "%llu %llu %llu %llu %llu %llu %llu %llu %c", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &tail);
	if (n != 6 && n != 8)
		return dmcopy_err(ctx, -EIO, "%s: unexpected copy_stat '%s'",
				  caps->disk, buf);
	caps->has_copy_stat = true;
	caps->offloaded_copies = v[0];
	caps->offloaded_bytes = v[1];
	caps->emulated_copies = v[2];
	caps->emulated_bytes = v[3];
	caps->failed_copies = v[4];
	caps->failed_bytes = v[5];
	return 0;
}

static int read_copy_limits(struct dmcopy_ctx *ctx, struct dmcopy_caps *caps)
{
	int r;

	r = dmcopy_sysfs_read_u64(ctx, &caps->copy_max_hw_bytes,
				  "block/%s/queue/copy_max_hw_bytes",
				  caps->disk);
	if (r == -ENOENT) {
		dmcopy_err(ctx, 0, NO_COPY_SYSFS);
		return 0;
	}
	if (r < 0)
		return r;
	caps->has_copy_sysfs = true;
	r = dmcopy_sysfs_read_u64(ctx, &caps->copy_max_bytes,
				  "block/%s/queue/copy_max_bytes", caps->disk);
	if (r == -ENOENT)
		return dmcopy_err(ctx, -EIO, "%s: copy_max_hw_bytes without copy_max_bytes",
				  caps->disk);
	if (r < 0)
		return r;
	return read_copy_stat(ctx, caps);
}

static int read_dm(struct dmcopy_ctx *ctx, struct dmcopy_caps *caps)
{
	int r;

	r = dmcopy_sysfs_read(ctx, caps->dm_name, sizeof(caps->dm_name),
			      "block/%s/dm/name", caps->disk);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	caps->is_dm = true;
	r = dmcopy_sysfs_read(ctx, caps->dm_uuid, sizeof(caps->dm_uuid),
			      "block/%s/dm/uuid", caps->disk);
	return r == -ENOENT ? 0 : r;
}

static int read_caps(struct dmcopy_ctx *ctx, struct dmcopy_caps *caps)
{
	char rel[PATH_MAX];
	int r;

	r = find_disk(ctx, caps);
	if (!r)
		r = read_devnum(ctx, caps);
	if (!r)
		r = read_required(ctx, &caps->size_bytes, caps->name, "size");
	if (r)
		return r;
	caps->size_bytes *= 512;
	r = read_required(ctx, &caps->logical_block_size, caps->disk,
			  "queue/logical_block_size");
	if (!r)
		r = read_dm(ctx, caps);
	if (r)
		return r;

	snprintf(rel, sizeof(rel), "class/block/%s/slaves", caps->name);
	r = read_names(ctx, rel, &caps->slaves, &caps->nr_slaves);
	if (r)
		return r;
	snprintf(rel, sizeof(rel), "class/block/%s/holders", caps->name);
	r = read_names(ctx, rel, &caps->holders, &caps->nr_holders);
	if (r)
		return r;
	/* last: its message, if any, is what the caller sees */
	return read_copy_limits(ctx, caps);
}

int dmcopy_device_caps(struct dmcopy_ctx *ctx, const char *name,
		       struct dmcopy_caps *callers)
{
	struct dmcopy_caps caps = { .size = sizeof(caps) };
	int r;

	r = dmcopy_check_size(ctx, callers->size, DMCOPY_CAPS_SIZE_V1,
			      "dmcopy_caps");
	if (r)
		return r;
	ctx->err[0] = '\0';
	r = dmcopy_resolve_device(ctx, name, caps.name, sizeof(caps.name));
	if (!r)
		r = read_caps(ctx, &caps);
	if (r) {
		dmcopy_caps_release(&caps);
		return r;
	}
	/* what the first version has: the lists are in it */
	dmcopy_struct_out(callers, &caps, sizeof(caps));
	return 0;
}
