/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What aggctl knows about a switch port: the link (rtnetlink), the XDP
 * program on it, and for a veth its peer, which may sit in another network
 * namespace. From that it judges whether frames the switch forwards to
 * the port can arrive, and says what to do when they cannot.
 */
#ifndef _AGGCTL_PORT_H
#define _AGGCTL_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>
#include <libmnl/libmnl.h>

struct link_info {
	int		ifindex;
	char		name[IF_NAMESIZE];
	unsigned int	flags;		/* IFF_* */
	unsigned short	type;		/* ARPHRD_* */
	unsigned int	mtu;
	bool		veth;
	int		link;		/* the peer's ifindex (veth), 0 if none */
	int		link_nsid;	/* its netns id, -1: this one */
	__u32		xdp_prog;	/* XDP program attached, 0 if none */
	__u8		xdp_mode;	/* XDP_ATTACHED_* */
};

struct port_info {
	struct link_info link;
	/* A veth's peer; known false when it could not be looked at. */
	bool		peer_known;
	struct link_info peer;
	char		peer_ns[64];	/* "" (this netns), a name or "pid N" */
	bool		peer_gro;
	char		peer_why[96];	/* why the peer is unknown */
	/* set by the caller: a one-armed port (esa_port_role) */
	bool		one_armed;
};

/* The link @ifindex of this netns. 0 or -errno. */
int link_get(int ifindex, struct link_info *l);
/* @l, and for a veth its peer. 0 or -errno (the link itself). */
int port_probe(int ifindex, struct port_info *p);

enum port_ready {
	PORT_READY,
	PORT_NOT_READY,
	PORT_UNCHECKED,		/* what the port needs cannot be seen */
};

/*
 * Can frames the switch forwards to port @p arrive? With @prog_id (the
 * data plane's program) it must also be the one attached. @why (may be
 * NULL) gets the reason and the command that fixes it.
 */
enum port_ready port_verdict(const struct port_info *p, __u32 prog_id,
			     char *why, size_t n);

/*
 * The IPv4 addresses of link @ifindex (network order) into @addrs (up to
 * @max; secondary ones flagged in @secondary): how many it has, or
 * -errno.
 */
int link_ipv4_addrs(int ifindex, __u32 *addrs, bool *secondary, int max);

/* A bound rtnetlink socket of this netns into @nl. 0 or -errno. */
int rtnl_open(struct mnl_socket **nl);
/*
 * Start a request in @buf: message @type, flags NLM_F_REQUEST | @flags,
 * then the family header @hdr of @len bytes; attributes go after it.
 */
struct nlmsghdr *rtnl_request(char *buf, __u16 type, __u16 flags,
			      const void *hdr, size_t len);
/*
 * Send @nlh and run @cb over the reply (a dump, NLM_F_DUMP: over every
 * part). 0 or -errno (the kernel's refusal: its error).
 */
int rtnl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
	      void *data);

/* "native", "generic", ... for XDP_ATTACHED_*. */
const char *xdp_mode_name(__u8 mode);

#endif
