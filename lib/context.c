// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library context: where sysfs is and the last error message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dmcopy-private.h"

struct dmcopy_ctx *dmcopy_new(const char *sysfs_root)
{
	struct dmcopy_ctx *ctx;
	size_t len;

	if (!sysfs_root || !*sysfs_root)
		sysfs_root = "/sys";
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->sysfs_root = strdup(sysfs_root);
	if (!ctx->sysfs_root) {
		free(ctx);
		return NULL;
	}
	/* "/sys/" is "/sys": paths are built as <root>/<file> */
	len = strlen(ctx->sysfs_root);
	while (len > 1 && ctx->sysfs_root[len - 1] == '/')
		ctx->sysfs_root[--len] = '\0';
	ctx->real_sysfs = !strcmp(ctx->sysfs_root, "/sys");
	ctx->udev_sync = true;
	return ctx;
}

void dmcopy_free(struct dmcopy_ctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->sysfs_root);
	free(ctx);
}

const char *dmcopy_last_error(struct dmcopy_ctx *ctx)
{
	return ctx ? ctx->err : "";
}

const char *dmcopy_strerror(struct dmcopy_ctx *ctx)
{
	return dmcopy_last_error(ctx);
}

int dmcopy_err(struct dmcopy_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	if (!ctx)
		return err;
	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	return err;
}

int dmcopy_check_size(struct dmcopy_ctx *ctx, size_t size, size_t min,
		      const char *what)
{
	if (size >= min)
		return 0;
	return dmcopy_err(ctx, -EINVAL,
			  "struct %s of %zu bytes: set its size (sizeof)",
			  what, size);
}

void dmcopy_struct_in(void *full, size_t full_size, const void *callers)
{
	size_t size = *(const size_t *)callers;

	memset(full, 0, full_size);
	memcpy(full, callers, size < full_size ? size : full_size);
	*(size_t *)full = full_size;
}

void dmcopy_struct_out(void *callers, const void *full, size_t full_size)
{
	size_t size = *(const size_t *)callers;

	if (size > full_size)
		size = full_size;
	memcpy((char *)callers + sizeof(size_t),
	       (const char *)full + sizeof(size_t), size - sizeof(size_t));
}

int dmcopy_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= len)
		return -ENOSPC;
	return n;
}

int dmcopy_parse_u64(const char *s, uint64_t *value)
{
	unsigned long long v;
	char *end;

	/* strtoull() takes spaces and signs ("-1" is ULLONG_MAX): not we */
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*value = v;
	return 0;
}

static int sysfs_vread(struct dmcopy_ctx *ctx, char *buf, size_t len,
		       const char *fmt, va_list ap)
{
	char rel[512], path[1024];
	ssize_t n;
	int fd, r;

	r = vsnprintf(rel, sizeof(rel), fmt, ap);
	if (r < 0 || (size_t)r >= sizeof(rel))
		return dmcopy_err(ctx, -ENAMETOOLONG, "sysfs path too long");
	r = dmcopy_snprintf(path, sizeof(path), "%s/%s", ctx->sysfs_root, rel);
	if (r < 0)
		return dmcopy_err(ctx, -ENAMETOOLONG, "sysfs path too long");

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT :
			dmcopy_err(ctx, -errno, "cannot open %s: %s", path,
				   strerror(errno));
	n = read(fd, buf, len - 1);
	r = errno;
	close(fd);
	if (n < 0)
		return dmcopy_err(ctx, -r, "cannot read %s: %s", path,
				  strerror(r));
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

int dmcopy_sysfs_read(struct dmcopy_ctx *ctx, char *buf, size_t len,
		      const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = sysfs_vread(ctx, buf, len, fmt, ap);
	va_end(ap);
	return r;
}

int dmcopy_sysfs_read_u64(struct dmcopy_ctx *ctx, uint64_t *value,
			  const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = sysfs_vread(ctx, buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	r = dmcopy_parse_u64(buf, value);
	if (r < 0)
		return dmcopy_err(ctx, -EIO, "unexpected sysfs value '%s'", buf);
	return 0;
}
