/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generic netlink API of the esa_smoke test module (selftests only, not
 * part of the ESA product API in uapi/). One command reads how often the
 * module's kfunc was called from XDP.
 */
#ifndef _ESA_SMOKE_UAPI_H
#define _ESA_SMOKE_UAPI_H

#define ESA_SMOKE_GENL_NAME	"esa_smoke"
#define ESA_SMOKE_GENL_VERSION	1

enum esa_smoke_cmd {
	ESA_SMOKE_CMD_UNSPEC,
	ESA_SMOKE_CMD_GET,	/* reply carries ESA_SMOKE_A_CALLS */
	__ESA_SMOKE_CMD_MAX,
};

enum esa_smoke_attr {
	ESA_SMOKE_A_UNSPEC,
	ESA_SMOKE_A_PAD,
	ESA_SMOKE_A_CALLS,	/* u64, reply only: kfunc calls since load */
	__ESA_SMOKE_A_MAX,
};
#define ESA_SMOKE_A_MAX (__ESA_SMOKE_A_MAX - 1)

#endif /* _ESA_SMOKE_UAPI_H */
