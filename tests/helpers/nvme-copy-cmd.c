// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-copy-cmd: send one NVMe Copy command, built here field by field from
 * the NVM Command Set specification, and print what the controller
 * answered, Dword 0 included (nvme-cli prints no result for a failed
 * command, and cannot send more than 128 ranges).
 *
 *   nvme-copy-cmd [-d] [-f FORMAT] [-F BITS15:8] [-n NR] [-c CDW12-HIGH]
 *                 DEV SDLBA SLBA:NLB...
 *
 * DEV is a namespace block device (or its generic char device), SDLBA the
 * destination LBA, each SLBA:NLB a source range (NLB a count of blocks, at
 * least 1). FORMAT is the descriptor format, 0 (32-byte descriptors) or 1
 * (40 bytes); CDW12-HIGH goes into bits 31:16 of Dword 12 (FUA, LR, ...).
 * For malformed commands: -F puts BITS15:8 into Dword 12 bits 15:8 as they
 * are (descriptor format and PRINFOR; descriptors are still laid out as
 * -f says), -n claims NR ranges (1 to 256) whatever number is sent.
 * Prints "status=0xSSS result=N" (status without DNR and More) and exits 0
 * whenever the command reached the controller; with -d, " dnr=0|1" follows
 * (Do Not Retry: 0 for a condition the host may retry).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/nvme_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define NVME_CMD_COPY		0x19
#define MAX_RANGES		256	/* NR is 8 bits, 0's based */
#define NVME_STATUS_DNR		0x4000	/* status as the ioctl returns it */

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	if (!*s || *s == '-')
		return -1;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nvme-copy-cmd [-d] [-f 0|1] [-F BITS15:8] [-n NR] [-c CDW12-HIGH] DEV SDLBA SLBA:NLB...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct nvme_passthru_cmd64 cmd;
	uint64_t sdlba, format = 0, high = 0, slba, nlb, raw_format = 0, claim = 0;
	int have_raw_format = 0;
	unsigned int nr, i, desc_size;
	uint8_t *desc;
	int opt, fd, nsid, ret, show_dnr = 0;
	char *colon;

	while ((opt = getopt(argc, argv, "df:F:n:c:")) != -1) {
		switch (opt) {
		case 'd':
			show_dnr = 1;
			break;
		case 'f':
			if (parse_u64(optarg, &format) || format > 1)
				usage();
			break;
		case 'F':
			if (parse_u64(optarg, &raw_format) || raw_format > 0xff)
				usage();
			have_raw_format = 1;
			break;
		case 'n':
			if (parse_u64(optarg, &claim) || !claim ||
			    claim > MAX_RANGES)
				usage();
			break;
		case 'c':
			if (parse_u64(optarg, &high) || high > 0xffff)
				usage();
			break;
		default:
			usage();
		}
	}
	if (argc - optind < 3)
		usage();
	nr = argc - optind - 2;
	if (nr > MAX_RANGES || parse_u64(argv[optind + 1], &sdlba))
		usage();

	/* Format 0h: SLBA at 8, NLB (0's based) at 16, 32 bytes; 1h: 40 */
	desc_size = format ? 40 : 32;
	desc = calloc(nr, desc_size);
	if (!desc)
		return 1;
	for (i = 0; i < nr; i++) {
		char *arg = argv[optind + 2 + i];

		colon = strchr(arg, ':');
		if (!colon)
			usage();
		*colon = '\0';
		if (parse_u64(arg, &slba) || parse_u64(colon + 1, &nlb) ||
		    nlb < 1 || nlb > 0x10000)
			usage();
		put_le64(desc + i * desc_size + 8, slba);
		put_le16(desc + i * desc_size + 16, nlb - 1);
	}

	fd = open(argv[optind], O_RDWR);
	if (fd < 0) {
		perror(argv[optind]);
		return 1;
	}
	nsid = ioctl(fd, NVME_IOCTL_ID);
	if (nsid <= 0) {
		perror("NVME_IOCTL_ID");
		return 1;
	}

	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = NVME_CMD_COPY;
	cmd.nsid = nsid;
	cmd.addr = (uintptr_t)desc;
	cmd.data_len = nr * desc_size;
	cmd.cdw10 = sdlba;
	cmd.cdw11 = sdlba >> 32;
	cmd.cdw12 = ((claim ? claim : nr) - 1) |
		    (have_raw_format ? raw_format : format) << 8 | high << 16;
	ret = ioctl(fd, NVME_IOCTL_IO64_CMD, &cmd);
	if (ret < 0) {
		perror("NVME_IOCTL_IO64_CMD");
		return 1;
	}
	printf("status=0x%x result=%" PRIu64, ret & 0x7ff,
	       (uint64_t)cmd.result);
	if (show_dnr)
		printf(" dnr=%d", !!(ret & NVME_STATUS_DNR));
	putchar('\n');
	return 0;
}
