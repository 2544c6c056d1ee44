// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Sizes as users type them: "4096", "8M", "1GiB".
 */
#include <errno.h>
#include <strings.h>

#include "dmcopy-private.h"

/* The power of 1024 a suffix stands for, or -1 when it is none we know. */
static int size_shift(const char *suffix)
{
	static const char units[] = "KMGT";
	int i;

	if (!*suffix)
		return 0;
	for (i = 0; units[i]; i++) {
		if ((suffix[0] & ~0x20) != units[i])
			continue;
		if (!suffix[1] || !strcasecmp(suffix + 1, "iB"))
			return 10 * (i + 1);
		return -1;
	}
	return -1;
}

int dmcopy_parse_size(const char *s, uint64_t *bytes)
{
	bool overflow = false;
	uint64_t v = 0;
	int shift;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			overflow = true;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	/* Not a size at all is EINVAL, however many digits came first. */
	shift = size_shift(s);
	if (shift < 0)
		return -EINVAL;
	if (overflow || (shift && v > (UINT64_MAX >> shift)))
		return -ERANGE;
	*bytes = v << shift;
	return 0;
}
