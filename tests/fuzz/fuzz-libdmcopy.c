// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for libdmcopy's parsers of what users and the kernel
 * write: sizes (dmcopy_parse_size()), modes, and the copy target's INFO
 * status and table parameters. Byte 0 of an input picks the parser, the
 * rest is the text. Besides the sanitizers it checks:
 *
 *   - a size is accepted exactly when a plain reading of the grammar
 *     ("digits [K|M|G|T[iB]]", any case, powers of 1024) gives a value
 *     that fits 64 bits, with that value, and -ERANGE only for overflow;
 *   - a status or table line that parses prints (dmcopy_format_*) a line
 *     that parses to the same values, and prints that line again;
 *   - a refused line leaves the caller's structure untouched.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "libdmcopy.h"

#define MAX_TEXT	2048

/* The grammar of dmcopy_parse_size(), read plainly. */
static int reference_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	unsigned int shift = 0;
	uint64_t v = 0;
	const char *p = s, *u;
	int overflow = 0;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			overflow = 1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p) {
		u = strchr(units, toupper((unsigned char)*p));
		if (!u)
			return -EINVAL;
		shift = 10 * (unsigned int)(u - units + 1);
		p++;
		if (*p && strcasecmp(p, "iB"))
			return -EINVAL;
	}
	if (overflow || (shift && v > UINT64_MAX >> shift))
		return -ERANGE;
	*bytes = v << shift;
	return 0;
}

static void fuzz_size(const char *s)
{
	uint64_t got = 12345, want = 0;
	int r = dmcopy_parse_size(s, &got), rr = reference_size(s, &want);

	assert(r == rr);
	if (!r)
		assert(got == want);
	else
		assert(got == 12345);
}

static void fuzz_mode(const char *s)
{
	enum dmcopy_mode mode = (enum dmcopy_mode)-1;

	if (dmcopy_parse_mode(s, &mode)) {
		assert(mode == (enum dmcopy_mode)-1);
		return;
	}
	assert(dmcopy_mode_name(mode));
	assert(!strcasecmp(dmcopy_mode_name(mode), s));
}

static void fuzz_status(const char *s)
{
	struct dmcopy_copy_status a = { .size = sizeof(a) }, b, untouched;
	char line[512], again[512];
	int n;

	memset(&untouched, 0xa5, sizeof(untouched));
	untouched.size = sizeof(untouched);
	b = untouched;
	if (dmcopy_parse_copy_status(NULL, s, &b)) {
		assert(!memcmp(&b, &untouched, sizeof(b)));
		return;
	}
	a = b;
	n = dmcopy_format_copy_status(&a, line, sizeof(line));
	assert(n > 0 && (size_t)n < sizeof(line));
	b = untouched;
	assert(!dmcopy_parse_copy_status(NULL, line, &b));
	assert(!memcmp(&a, &b, sizeof(a)));
	assert(dmcopy_format_copy_status(&b, again, sizeof(again)) == n);
	assert(!strcmp(line, again));
}

static void fuzz_table(const char *s)
{
	struct dmcopy_copy_table a, b, untouched;
	char line[512], again[512];
	int n;

	memset(&untouched, 0xa5, sizeof(untouched));
	b = untouched;
	if (dmcopy_parse_copy_table(NULL, s, &b)) {
		assert(!memcmp(&b, &untouched, sizeof(b)));
		return;
	}
	a = b;
	n = dmcopy_format_copy_table(&a, line, sizeof(line));
	assert(n > 0 && (size_t)n < sizeof(line));
	memset(&b, 0, sizeof(b));
	assert(!dmcopy_parse_copy_table(NULL, line, &b));
	assert(!strcmp(a.device, b.device) && a.offset == b.offset &&
	       a.mode == b.mode && a.max_copy_bytes == b.max_copy_bytes);
	assert(dmcopy_format_copy_table(&b, again, sizeof(again)) == n);
	assert(!strcmp(line, again));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[MAX_TEXT];

	if (size < 1 || size - 1 >= sizeof(text))
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';

	switch (data[0] & 3) {
	case 0:
		fuzz_size(text);
		break;
	case 1:
		fuzz_mode(text);
		break;
	case 2:
		fuzz_status(text);
		break;
	case 3:
		fuzz_table(text);
		break;
	}
	return 0;
}
