// SPDX-License-Identifier: GPL-2.0
/*
 * The switch's rules (lib/esa_rules.c), built into the module: the same
 * source the module-less loader and the simulator build, so job checks,
 * static slices and quotas cannot drift between the flavours. Included
 * rather than named in Kbuild so that its object stays under kmod/.
 */
#include "../lib/esa_rules.c"
