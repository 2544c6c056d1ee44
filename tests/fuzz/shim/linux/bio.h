/* SPDX-License-Identifier: GPL-2.0 */
/* linux/bio.h for dm-copy.c in user space: see kernel-shim.h */
#include "../kernel-shim.h"
