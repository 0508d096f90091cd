/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flavour being built: the module's (-DESA_MODULE_FLAVOUR,
 * esa_flavour_kmod.h) or the module-less one (esa_flavour_maps.h). Each
 * gives the same functions (config, jobs, arbitration, accounting).
 */
#ifndef _ESA_FLAVOUR_H
#define _ESA_FLAVOUR_H

#ifdef ESA_MODULE_FLAVOUR
#include "esa_flavour_kmod.h"
#else
#include "esa_flavour_maps.h"
#endif

#endif /* _ESA_FLAVOUR_H */
