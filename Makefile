# SPDX-License-Identifier: GPL-2.0
#
# dm-copy: block-layer copy offload for Linux 6.12, the device-mapper
# "copy" target and the userspace that drives them.
#
#   make check      install what is missing, build everything, run all tests
#   make userspace  libdmcopy (lib/) and the dmcopy command (tools/)
#   make install    libdmcopy (header, .pc), dmcopy (man page, bash
#                   completion), udev rules [PREFIX=/usr/local DESTDIR=]
#   make demo       provision clones of a golden image in the test VM
#
# See README.md and docs/workflow.md.

SHELL := /bin/bash

# Debian packages the build and the tests need (the guest runs the host's
# tools over 9p, so the test tools are host packages too).
DEB_PACKAGES := \
	build-essential bc bison flex libelf-dev libssl-dev dwarves cpio kmod \
	xz-utils zstd rsync git ccache debian-archive-keyring \
	qemu-system-x86 qemu-utils busybox-static \
	pkg-config libdevmapper-dev libblkid-dev libsmartcols-dev \
	libcmocka-dev libjson-c-dev jq valgrind clang libclang-rt-14-dev \
	bats nvme-cli xfsprogs lvm2 dmsetup fio e2fsprogs util-linux fdisk iproute2 \
	mdadm udev man-db groff-base python3 thin-provisioning-tools

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
KERNEL_ENV := build/kernel.env
PREFIX ?= /usr/local

.PHONY: all deps kernel kernel-tree kernel-export kernel-check-series \
	modules helpers userspace install check \
	check-host check-vm vm-shell bench demo clean distclean

all: kernel modules helpers userspace

# Install the Debian packages that are missing (nothing when all are there).
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${db:Status-Abbrev}\n' $$p 2>/dev/null | \
			grep -q '^ii' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing" $$missing; \
		$(SUDO) apt-get -q update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get -q -y \
			install --no-install-recommends $$missing; \
	else \
		echo "deps: all Debian packages present"; \
	fi

# Linux 6.12 with kernel/series applied; cached outside the clone.
kernel:
	kernel/build

# A git tree of the source with the series as commits (docs/workflow.md).
kernel-tree:
	kernel/build --tree

kernel-export:
	kernel/build --export

# Build after every patch and checkpatch each one (slow: a build per patch).
kernel-check-series: deps
	kernel/build --check-series

# dm-copy.ko, out of tree, against the kernel built above.
modules: kernel
	. $(KERNEL_ENV) && $(MAKE) -C dm-copy KDIR=$$KERNEL_OBJ modules

# Small programs the test suites run (tests/helpers).
helpers:
	$(MAKE) -C tests/helpers

# libdmcopy and dmcopy; tools/dmcopy finds lib/libdmcopy.so.0 through its
# rpath $ORIGIN/../lib in the tree (the installed one has none).
userspace:
	$(MAKE) -C lib
	$(MAKE) -C tools

install: userspace
	$(MAKE) -C lib install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C udev install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

# When make started, so that tests/check's times include the build.
CHECK_START := $(shell date +%s)

check: deps kernel modules helpers userspace
	DMCOPY_CHECK_START=$(CHECK_START) tests/check

check-host: deps kernel modules helpers userspace
	tests/check --host

check-vm: deps kernel modules helpers userspace
	tests/check --vm

# An interactive guest on this terminal; exit powers it off.
vm-shell: deps kernel modules
	tests/vm/run --shell

# Requests at the disk per offloaded copy, then throughput ratios measured
# side by side in one guest (not a test): local copies, through
# device-mapper, then NVMe/TCP between two network namespaces of the guest.
bench: deps kernel modules helpers
	tests/vm/run --mem 3072 --disk 1G --timeout 5400 -- \
		sh -c 'tests/bench/requests && tests/bench/copy && tests/bench/dm && tests/bench/nvme-tcp'

# Provisioning VM disks from a golden image, told step by step (not a
# test): thick clones, thin snapshots, offload vs no offload vs dd.
demo: deps kernel modules helpers userspace
	tests/vm/run --mem 2048 --timeout 3600 \
		--nvme 8G,mssrl=2048,mcl=2048,msrc=1 -- tests/demo/provision-demo

clean:
	-[ -f $(KERNEL_ENV) ] && . $(KERNEL_ENV) && $(MAKE) -C dm-copy KDIR=$$KERNEL_OBJ clean
	$(MAKE) -C tests/helpers clean
	$(MAKE) -C tests/host/unit clean
	$(MAKE) -C tools clean
	$(MAKE) -C lib clean
	rm -rf build

# Also drop every cached kernel build (the downloaded source and
# ccache stay; DMCOPY_CACHE, default ~/.cache/dm-copy).
distclean: clean
	rm -rf "$${DMCOPY_CACHE:-$$HOME/.cache/dm-copy}/build" \
		"$${DMCOPY_CACHE:-$$HOME/.cache/dm-copy}/check-series"
