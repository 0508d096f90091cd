// SPDX-License-Identifier: GPL-2.0
/*
 * Switch ports as aggctl sees them (port.h), over rtnetlink.
 *
 * The rule that matters most on veth: the XDP data plane redirects a
 * frame into port P, which hands it to P's peer; veth only takes
 * redirected frames into a peer that runs NAPI, i.e. has GRO on or an XDP
 * program of its own. Otherwise every forwarded frame is dropped without
 * a counter anywhere (pings fail, "forwarded" climbs). The peer usually
 * sits in another network namespace (a host), which rtnetlink names only
 * by an id: aggctl finds the namespace among the named ones (/run/netns)
 * and the processes' (/proc/PID/ns/net), enters it just long enough to
 * open two sockets, and reads the peer's link and GRO setting there.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <net/if_arp.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>
#include <linux/if_addr.h>
#include <linux/sockios.h>
#include "esa_wire.h"
#include "port.h"

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP	0x10000		/* linux/if.h: the carrier is on */
#endif

const char *xdp_mode_name(__u8 mode)
{
	switch (mode) {
	case XDP_ATTACHED_NONE: return "none";
	case XDP_ATTACHED_DRV: return "native";
	case XDP_ATTACHED_SKB: return "generic";
	case XDP_ATTACHED_HW: return "offload";
	default: return "multi";
	}
}

int rtnl_open(struct mnl_socket **nl)
{
	*nl = mnl_socket_open(NETLINK_ROUTE);
	if (!*nl)
		return -errno;
	if (mnl_socket_bind(*nl, 0, MNL_SOCKET_AUTOPID)) {
		int err = -errno;

		mnl_socket_close(*nl);
		*nl = NULL;
		return err;
	}
	return 0;
}

struct nlmsghdr *rtnl_request(char *buf, __u16 type, __u16 flags,
			      const void *hdr, size_t len)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	memcpy(mnl_nlmsg_put_extra_header(nlh, len), hdr, len);
	return nlh;
}

int rtnl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
	      void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int portid = mnl_socket_get_portid(nl);
	bool dump = nlh->nlmsg_flags & NLM_F_DUMP;
	int ret;

	nlh->nlmsg_seq = 1;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {	/* a dump: parts until NLMSG_DONE (MNL_CB_STOP) */
		ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret < 0)
			return -errno;
		ret = mnl_cb_run(buf, ret, 1, portid, cb, data);
	} while (dump && ret > 0);
	return ret < 0 ? -errno : 0;
}

static void parse_linkinfo(const struct nlattr *nest, struct link_info *l)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest)
		if (mnl_attr_get_type(a) == IFLA_INFO_KIND)
			l->veth = !strcmp(mnl_attr_get_str(a), "veth");
}

static void parse_xdp(const struct nlattr *nest, struct link_info *l)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_get_type(a) == IFLA_XDP_ATTACHED)
			l->xdp_mode = mnl_attr_get_u8(a);
		else if (mnl_attr_get_type(a) == IFLA_XDP_PROG_ID)
			l->xdp_prog = mnl_attr_get_u32(a);
	}
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct link_info *l = data;
	const struct nlattr *a;

	l->ifindex = ifm->ifi_index;
	l->flags = ifm->ifi_flags;
	l->type = ifm->ifi_type;
	mnl_attr_for_each(a, nlh, sizeof(*ifm)) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			snprintf(l->name, sizeof(l->name), "%s", mnl_attr_get_str(a));
			break;
		case IFLA_MTU:
			l->mtu = mnl_attr_get_u32(a);
			break;
		case IFLA_LINK:
			l->link = (int)mnl_attr_get_u32(a);
			break;
		case IFLA_LINK_NETNSID:
			l->link_nsid = (int)mnl_attr_get_u32(a);
			break;
		case IFLA_LINKINFO:
			parse_linkinfo(a, l);
			break;
		case IFLA_XDP:
			parse_xdp(a, l);
			break;
		}
	}
	return MNL_CB_OK;
}

static int link_query(struct mnl_socket *nl, int ifindex, struct link_info *l)
{
	struct ifinfomsg ifm = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
	char buf[256];
	struct nlmsghdr *nlh = rtnl_request(buf, RTM_GETLINK, 0, &ifm,
					    sizeof(ifm));

	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	memset(l, 0, sizeof(*l));
	l->link_nsid = -1;
	return rtnl_talk(nl, nlh, link_cb, l);
}

int link_get(int ifindex, struct link_info *l)
{
	struct mnl_socket *nl;
	int err = rtnl_open(&nl);

	if (err)
		return err;
	err = link_query(nl, ifindex, l);
	mnl_socket_close(nl);
	return err;
}

struct addr_list {
	int	ifindex;
	__u32	*addrs;
	bool	*secondary;
	int	max, n;
};

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	struct addr_list *l = data;
	const struct nlattr *a;

	if (ifa->ifa_family != AF_INET || (int)ifa->ifa_index != l->ifindex)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifa)) {
		if (mnl_attr_get_type(a) != IFA_LOCAL ||
		    mnl_attr_get_payload_len(a) != 4)
			continue;
		if (l->n < l->max) {
			memcpy(&l->addrs[l->n], mnl_attr_get_payload(a), 4);
			l->secondary[l->n] = ifa->ifa_flags & IFA_F_SECONDARY;
		}
		l->n++;
	}
	return MNL_CB_OK;
}

int link_ipv4_addrs(int ifindex, __u32 *addrs, bool *secondary, int max)
{
	struct ifaddrmsg ifa = { .ifa_family = AF_INET, .ifa_index = ifindex };
	char buf[256];
	struct addr_list l = { ifindex, addrs, secondary, max, 0 };
	struct mnl_socket *nl;
	int ret = rtnl_open(&nl);

	if (ret)
		return ret;
	ret = rtnl_talk(nl, rtnl_request(buf, RTM_GETADDR, NLM_F_DUMP, &ifa,
					 sizeof(ifa)), addr_cb, &l);
	mnl_socket_close(nl);
	return ret ? ret : l.n;
}

static int nsid_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct rtgenmsg))
		if (mnl_attr_get_type(a) == NETNSA_NSID)
			*(int *)data = (int)mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

/* The id this netns gives the netns behind @fd (-1: none assigned). */
static int nsid_of_fd(struct mnl_socket *nl, int fd)
{
	char buf[128];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtgenmsg *g;
	int id = -1;

	nlh->nlmsg_type = RTM_GETNSID;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_FD, fd);
	return rtnl_talk(nl, nlh, nsid_cb, &id) ? -1 : id;
}

/*
 * An fd of the netns this one calls @nsid, found among /run/netns (named
 * as there) and the processes' netns ("pid N"). -ENOENT if none is it.
 */
static int netns_find(struct mnl_socket *nl, int nsid, char *name, size_t n)
{
	static const char *const dirs[] = { "/run/netns", "/proc" };
	char path[300];
	struct dirent *e;
	unsigned int i;
	DIR *d;
	int fd;

	for (i = 0; i < 2; i++) {
		d = opendir(dirs[i]);
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.' ||
			    (i == 1 && (e->d_name[0] < '1' || e->d_name[0] > '9')))
				continue;
			snprintf(path, sizeof(path), i ? "%s/%s/ns/net" : "%s/%s",
				 dirs[i], e->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (nsid_of_fd(nl, fd) == nsid) {
				snprintf(name, n, i ? "pid %s" : "%s", e->d_name);
				closedir(d);
				return fd;
			}
			close(fd);
		}
		if (d)
			closedir(d);
	}
	return -ENOENT;
}

/* GRO on link @name, asked through @sock (a socket of its netns). */
static bool gro_on(int sock, const char *name)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GGRO };
	struct ifreq ifr = { .ifr_data = (void *)&ev };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	return !ioctl(sock, SIOCETHTOOL, &ifr) && ev.data;
}

/*
 * Sockets of netns @nsfd (-1: this one): entered for the two socket()
 * calls only, then back, so nothing else of aggctl runs there.
 */
static int sockets_in(int nsfd, struct mnl_socket **nl, int *sock)
{
	int self = -1, err = 0;

	if (nsfd >= 0) {
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0 || setns(nsfd, CLONE_NEWNET)) {
			err = -errno;
			if (self >= 0)
				close(self);
			return err;
		}
	}
	err = rtnl_open(nl);
	*sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (!err && *sock < 0)
		err = -errno;
	if (self >= 0) {
		if (setns(self, CLONE_NEWNET))
			abort();	/* never run on in a host's netns */
		close(self);
	}
	if (err) {
		if (*sock >= 0)
			close(*sock);
		if (*nl)
			mnl_socket_close(*nl);
		*nl = NULL;
	}
	return err;
}

/* The peer of veth @p->link, in whichever netns it is. */
static void probe_peer(struct mnl_socket *nl, struct port_info *p)
{
	struct mnl_socket *pnl = NULL;
	int nsfd = -1, sock = -1, err;

	if (p->link.link_nsid >= 0) {
		nsfd = netns_find(nl, p->link.link_nsid, p->peer_ns,
				  sizeof(p->peer_ns));
		if (nsfd < 0) {
			snprintf(p->peer_why, sizeof(p->peer_why),
				 "its peer is in netns id %d, not under /run/netns nor a process's",
				 p->link.link_nsid);
			return;
		}
	}
	err = sockets_in(nsfd, &pnl, &sock);
	if (nsfd >= 0)
		close(nsfd);
	if (err) {
		snprintf(p->peer_why, sizeof(p->peer_why),
			 "its peer's netns cannot be entered: %s", strerror(-err));
		return;
	}
	err = link_query(pnl, p->link.link, &p->peer);
	if (!err) {
		p->peer_known = true;
		p->peer_gro = gro_on(sock, p->peer.name);
	} else {
		snprintf(p->peer_why, sizeof(p->peer_why),
			 "its peer (ifindex %d) cannot be read: %s",
			 p->link.link, strerror(-err));
	}
	close(sock);
	mnl_socket_close(pnl);
}

int port_probe(int ifindex, struct port_info *p)
{
	struct mnl_socket *nl;
	int err;

	memset(p, 0, sizeof(*p));
	err = rtnl_open(&nl);
	if (err)
		return err;
	err = link_query(nl, ifindex, &p->link);
	if (!err && p->link.veth && p->link.link > 0)
		probe_peer(nl, p);
	mnl_socket_close(nl);
	return err;
}

/* "eth0 (netns w1)" or "eth0" for a peer in this netns. */
static const char *peer_name(const struct port_info *p, char *buf, size_t n)
{
	if (p->peer_ns[0])
		snprintf(buf, n, "%s (netns %s)", p->peer.name, p->peer_ns);
	else
		snprintf(buf, n, "%s", p->peer.name);
	return buf;
}

/* The command that enables GRO on the peer, as the user would type it. */
static const char *gro_command(const struct port_info *p, char *buf, size_t n)
{
	if (!p->peer_ns[0])
		snprintf(buf, n, "ethtool -K %s gro on", p->peer.name);
	else if (!strncmp(p->peer_ns, "pid ", 4))
		snprintf(buf, n, "nsenter --net=/proc/%s/ns/net ethtool -K %s gro on",
			 p->peer_ns + 4, p->peer.name);
	else
		snprintf(buf, n, "ip netns exec %s ethtool -K %s gro on",
			 p->peer_ns, p->peer.name);
	return buf;
}

enum port_ready port_verdict(const struct port_info *p, __u32 prog_id,
			     char *why, size_t n)
{
	const struct link_info *l = &p->link;
	char dummy[8], pn[96], cmd[160];

	if (!why) {
		why = dummy;
		n = sizeof(dummy);
	}
	if (prog_id && l->xdp_prog != prog_id) {
		snprintf(why, n, "the data plane's program is not attached to %s (aggctl switch attach dev %s)",
			 l->name, l->name);
		return PORT_NOT_READY;
	}
	if (!(l->flags & IFF_UP)) {
		snprintf(why, n, "%s is down (ip link set dev %s up)", l->name, l->name);
		return PORT_NOT_READY;
	}
	if (!(l->flags & IFF_LOWER_UP)) {
		snprintf(why, n, "%s has no carrier%s", l->name,
			 l->veth ? " (its veth peer is down)" : "");
		return PORT_NOT_READY;
	}
	if (l->mtu < ESA_MTU) {
		snprintf(why, n, "%s has MTU %u: full aggregation packets (%u values) need %u (ip link set dev %s mtu %u, or endpoints with --values %u)",
			 l->name, l->mtu, ESA_MAX_VALUES, ESA_MTU, l->name,
			 ESA_MTU, l->mtu > 48 ? (l->mtu - 48) / 4 : 0);
		return PORT_NOT_READY;
	}
	if (!l->veth)
		return PORT_READY;
	if (!p->peer_known) {
		snprintf(why, n, "a veth whose peer cannot be checked: %s", p->peer_why);
		return PORT_UNCHECKED;
	}
	if (!(p->peer.flags & IFF_UP)) {
		snprintf(why, n, "its veth peer %s is down", peer_name(p, pn, sizeof(pn)));
		return PORT_NOT_READY;
	}
	/*
	 * A one-armed port sends only skbs (esa_fanout's clones and
	 * redirects), which a veth delivers without NAPI on its peer.
	 */
	if (!p->peer_gro && !p->peer.xdp_prog && !p->one_armed) {
		snprintf(why, n, "its veth peer %s has neither GRO nor an XDP program, so the frames the switch forwards to %s are dropped: %s",
			 peer_name(p, pn, sizeof(pn)), l->name,
			 gro_command(p, cmd, sizeof(cmd)));
		return PORT_NOT_READY;
	}
	return PORT_READY;
}
