/* SPDX-License-Identifier: GPL-2.0 */
/* linux/module.h for dm-copy.c in user space: see kernel-shim.h */
#include "../kernel-shim.h"
