/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The esa generic netlink family over libmnl: resolve the family, send a
 * request, run the reply callbacks, and turn a kernel rejection into one
 * message that carries the extack text and names the attribute it
 * points at (or the one it reports missing).
 */
#ifndef _AGGCTL_GENL_H
#define _AGGCTL_GENL_H

#include <stdint.h>
#include <libmnl/libmnl.h>

struct genl {
	struct mnl_socket *nl;
	uint16_t family;
	uint32_t mcgrp_events;
	uint32_t portid;
	uint32_t seq;
	char *buf;			/* MNL_SOCKET_BUFFER_SIZE */
	/* the last kernel rejection */
	int err;			/* positive errno, 0 = none */
	char msg[256];			/* extack text, "" if none */
	char attr[96];			/* name of the attribute it blames */
	int attr_missing;		/* attr names a missing one */
};

/* 0, -ENOENT when the esa family is not registered, or -errno. */
int genl_open(struct genl *g);
void genl_close(struct genl *g);

/* Start a request in g->buf. */
struct nlmsghdr *genl_req(struct genl *g, uint8_t cmd, uint16_t flags);

/*
 * Send @nlh and process replies until the ack/done; @cb (may be NULL) gets
 * each data message. 0, or -errno with g->err/msg/attr filled when the
 * kernel rejected the request.
 */
int genl_talk(struct genl *g, struct nlmsghdr *nlh, mnl_cb_t cb, void *data);

/* Join the events group and receive notifications until @cb stops. */
int genl_listen(struct genl *g, mnl_cb_t cb, void *data);

/* Parse the attributes of a genl message into @tb (size ESA_A_MAX + 1). */
int genl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb);
/* Parse a nest into @tb of @max + 1 entries (no type checks). */
int genl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		      unsigned int max);

/* Print "aggctl: WHAT: error: extack (attribute X)" to stderr. */
void genl_perror(const struct genl *g, const char *what, int err);

#endif
