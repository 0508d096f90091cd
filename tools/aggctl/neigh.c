// SPDX-License-Identifier: GPL-2.0
/*
 * Managed neighbour entries for the members behind one-armed ports
 * (Documentation/deployment.rst, "Neighbour entries").
 *
 * A one-armed port's copies take their next hop's MAC from the kernel's
 * neighbour table (bpf_fib_lookup in esa_fanout): a member whose entry is
 * missing or failed cannot be sent its copy, which is a counted
 * drop_nexthop, and nothing in the data plane asks the kernel to resolve
 * it. So the control plane keeps one entry per next hop of a job member
 * (a worker or the PS) that a one-armed port reaches, managed (Linux
 * 5.16+, NTF_EXT_MANAGED: the kernel resolves it at once and keeps it
 * resolved) and marked ESA_NEIGH_PROTO. An entry that is there already
 * (static, permanent, learned, another tool's) stays as it is and is never
 * removed; a marked entry no job needs any more is removed.
 *
 * neigh_sync() works from the state, not from the command: after each job
 * add, change or delete and each attach or detach it makes the marked
 * entries those the jobs on the one-armed ports need, so a member two jobs
 * share keeps its entry until the last of them goes. It removes marked
 * entries only on this data plane's own ports (and those it just let
 * go): another data plane in the namespace (another pin) marks its
 * entries alike, and they are its members' next hops, not stale ones.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include "aggctl.h"
#include "esa_dp.h"
#include "esa_switch.h"
#include "job_args.h"
#include "port.h"

/* A next hop: the neighbour entry (port, IPv4 address) a copy needs. */
struct nexthop {
	int	ifindex;
	__u32	addr;		/* network order */
};

/*
 * Sets of next hops: filled by set_add(), then set_seal() sorts them and
 * drops repeats, and set_has() looks up in a sealed set (a switch may
 * hold a thousand jobs of 33 members).
 */
struct nexthop_set {
	struct nexthop *h;
	unsigned int n, max;
};

static int hop_cmp(const void *a, const void *b)
{
	const struct nexthop *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void set_add(struct nexthop_set *s, int ifindex, __u32 addr)
{
	if (s->n < s->max)
		s->h[s->n++] = (struct nexthop){ ifindex, addr };
}

static void set_seal(struct nexthop_set *s)
{
	unsigned int i, n = 0;

	qsort(s->h, s->n, sizeof(*s->h), hop_cmp);
	for (i = 0; i < s->n; i++)
		if (!n || hop_cmp(&s->h[n - 1], &s->h[i]))
			s->h[n++] = s->h[i];
	s->n = n;
}

static bool set_has(const struct nexthop_set *s, int ifindex, __u32 addr)
{
	struct nexthop key = { ifindex, addr };

	return bsearch(&key, s->h, s->n, sizeof(*s->h), hop_cmp);
}

/* The one-armed ports of the data plane @sw (esa_port_roles) into @ports. */
static unsigned int one_armed_ports(struct esa_switch *sw, int *ports)
{
	int fd = esa_switch_map_fd(sw, "esa_port_roles");
	__u32 key, next, *prev = NULL;
	struct esa_port_role r;
	unsigned int n = 0;

	while (fd >= 0 && n < ESA_MAX_PORTS &&
	       !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &r) &&
		    r.role == ESA_PORT_ONE_ARMED)
			ports[n++] = (int)key;
	}
	return n;
}

/*
 * The ports of the data plane @sw (esa_mcast: every attached port, any
 * role) into @ports, after the @nleft in @left it just let go; their
 * number.
 */
static unsigned int own_ports(struct esa_switch *sw, const int *left,
			      unsigned int nleft, int *ports)
{
	int fd = esa_switch_map_fd(sw, "esa_mcast");
	__u32 key, next, *prev = NULL;
	unsigned int n = 0;

	for (; n < nleft && n < ESA_MAX_PORTS; n++)
		ports[n] = left[n];
	while (fd >= 0 && n < 2 * ESA_MAX_PORTS &&
	       !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		ports[n++] = (int)key;
	}
	return n;
}

static bool port_in(const int *ports, unsigned int n, int ifindex)
{
	while (n--)
		if (ports[n] == ifindex)
			return true;
	return false;
}

/* The route to an address: its port and next hop. */
static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct nexthop *h = data;
	const struct nlattr *a;

	if (rtm->rtm_family != AF_INET)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*rtm)) {
		if (mnl_attr_get_type(a) == RTA_OIF &&
		    mnl_attr_get_payload_len(a) == 4)
			h->ifindex = (int)mnl_attr_get_u32(a);
		else if (mnl_attr_get_type(a) == RTA_GATEWAY &&
			 mnl_attr_get_payload_len(a) == 4)
			h->addr = mnl_attr_get_u32(a);
	}
	return MNL_CB_OK;
}

/*
 * The next hop of @addr by the kernel's routes (`ip route get`): its port
 * and the gateway, or @addr itself on a directly connected subnet.
 */
static int route_get(struct mnl_socket *nl, __u32 addr, struct nexthop *h)
{
	struct rtmsg rtm = { .rtm_family = AF_INET, .rtm_dst_len = 32 };
	char buf[128];
	struct nlmsghdr *nlh = rtnl_request(buf, RTM_GETROUTE, 0, &rtm,
					    sizeof(rtm));

	mnl_attr_put_u32(nlh, RTA_DST, addr);
	*h = (struct nexthop){ 0, addr };
	return rtnl_talk(nl, nlh, route_cb, h);
}

/* What the neighbour table holds: every IPv4 entry, and the marked ones. */
struct neigh_table {
	struct nexthop_set all, ours;
};

static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	struct neigh_table *t = data;
	const struct nlattr *a;
	bool ours = false;
	__u32 dst = 0;

	if (ndm->ndm_family != AF_INET)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ndm)) {
		if (mnl_attr_get_type(a) == NDA_DST &&
		    mnl_attr_get_payload_len(a) == 4)
			dst = mnl_attr_get_u32(a);
		else if (mnl_attr_get_type(a) == NDA_PROTOCOL &&
			 mnl_attr_get_payload_len(a) == 1)
			ours = mnl_attr_get_u8(a) == ESA_NEIGH_PROTO;
	}
	set_add(&t->all, ndm->ndm_ifindex, dst);
	if (ours)
		set_add(&t->ours, ndm->ndm_ifindex, dst);
	return MNL_CB_OK;
}

static int neigh_dump(struct mnl_socket *nl, struct neigh_table *t)
{
	struct ndmsg ndm = { .ndm_family = AF_INET };
	char buf[64];

	return rtnl_talk(nl, rtnl_request(buf, RTM_GETNEIGH, NLM_F_DUMP, &ndm,
					  sizeof(ndm)), neigh_cb, t);
}

/* A request (acknowledged) about the entry of @h: its port and address. */
static struct nlmsghdr *neigh_request(char *buf, __u16 type, __u16 flags,
				      const struct nexthop *h)
{
	struct ndmsg ndm = { .ndm_family = AF_INET, .ndm_ifindex = h->ifindex };
	struct nlmsghdr *nlh = rtnl_request(buf, type, NLM_F_ACK | flags, &ndm,
					    sizeof(ndm));

	mnl_attr_put_u32(nlh, NDA_DST, h->addr);
	return nlh;
}

/*
 * A new managed entry for @h, marked ours (`ip neigh add A dev IF managed
 * proto 229`); NLM_F_EXCL: one made meanwhile by someone else stays theirs.
 */
static int neigh_add(struct mnl_socket *nl, const struct nexthop *h)
{
	char buf[128];
	struct nlmsghdr *nlh = neigh_request(buf, RTM_NEWNEIGH,
					     NLM_F_CREATE | NLM_F_EXCL, h);

	mnl_attr_put_u8(nlh, NDA_PROTOCOL, ESA_NEIGH_PROTO);
	mnl_attr_put_u32(nlh, NDA_FLAGS_EXT, NTF_EXT_MANAGED);
	return rtnl_talk(nl, nlh, NULL, NULL);
}

static int neigh_del(struct mnl_socket *nl, const struct nexthop *h)
{
	char buf[128];

	return rtnl_talk(nl, neigh_request(buf, RTM_DELNEIGH, 0, h), NULL, NULL);
}

static const char *hop_name(const struct nexthop *h, char *buf, size_t n)
{
	char dev[IF_NAMESIZE];
	struct in_addr a = { h->addr };

	snprintf(buf, n, "%s dev %s", inet_ntoa(a),
		 if_indextoname((unsigned int)h->ifindex, dev) ? dev : "?");
	return buf;
}

/*
 * The next hops of the members of @jobs that a one-armed port of @ports
 * reaches, into @want. A member the routes send elsewhere is a per-host
 * port's (or nobody's): none.
 */
static void wanted_hops(struct mnl_socket *nl, const struct job_list *jobs,
			const int *ports, unsigned int nports,
			struct nexthop_set *members, struct nexthop_set *want)
{
	const struct esa_job_info *j;
	struct nexthop h;
	unsigned int k, p;
	int i;

	for (k = 0; k < jobs->n; k++) {
		j = &jobs->j[k];
		set_add(members, 0, j->ps_addr);
		for (i = 0; i < j->fan_in && i < ESA_MAX_WORKERS; i++)
			set_add(members, 0, j->worker_addr[i]);
	}
	set_seal(members);	/* each address asked about once */
	for (k = 0; k < members->n; k++) {
		if (route_get(nl, members->h[k].addr, &h))
			continue;
		for (p = 0; p < nports; p++)
			if (ports[p] == h.ifindex)
				set_add(want, h.ifindex, h.addr);
	}
	set_seal(want);
}

/*
 * Make the marked entries on the ports in @own (@nown of them) those
 * @want names; warnings for what fails.
 */
static void neigh_apply(struct mnl_socket *nl, const char *what,
			const struct nexthop_set *want,
			const struct neigh_table *t,
			const int *own, unsigned int nown)
{
	char name[48];
	unsigned int i;
	int err;

	for (i = 0; i < want->n; i++) {
		if (set_has(&t->all, want->h[i].ifindex, want->h[i].addr))
			continue;	/* ours already, or not ours to touch */
		err = neigh_add(nl, &want->h[i]);
		if (err && err != -EEXIST)
			fprintf(stderr, "aggctl: warning: %s: no managed neighbour entry for %s: %s%s; copies to it are drop_nexthop until the kernel resolves it\n",
				what, hop_name(&want->h[i], name, sizeof(name)),
				strerror(-err), err == -EINVAL ?
				" (managed entries need Linux 5.16 or later)" : "");
	}
	for (i = 0; i < t->ours.n; i++) {
		if (set_has(want, t->ours.h[i].ifindex, t->ours.h[i].addr) ||
		    !port_in(own, nown, t->ours.h[i].ifindex))
			continue;	/* needed, or another data plane's */
		err = neigh_del(nl, &t->ours.h[i]);
		if (err && err != -ENOENT)
			fprintf(stderr, "aggctl: warning: %s: cannot remove the switch's neighbour entry %s: %s\n",
				what, hop_name(&t->ours.h[i], name, sizeof(name)),
				strerror(-err));
	}
}

void neigh_sync(struct ctx *c, const char *what, const int *left,
		unsigned int nleft)
{
	struct esa_switch *sw = pinned_switch(c);
	struct cmd_req r = { .what = what };
	struct nexthop_set want = { 0 }, members = { 0 };
	struct neigh_table t = { 0 };
	int ports[ESA_MAX_PORTS], own[2 * ESA_MAX_PORTS];
	unsigned int nports, nown, max;
	struct mnl_socket *nl = NULL;
	int err;

	if (!sw)
		return;		/* no data plane: no port, no entry of its */
	nports = one_armed_ports(sw, ports);
	nown = own_ports(sw, left, nleft, own);
	max = ESA_MAX_JOB_ID * (ESA_MAX_WORKERS + 1);
	r.jobs = calloc(1, sizeof(*r.jobs));
	want.h = calloc(max, sizeof(*want.h));
	members.h = calloc(max, sizeof(*members.h));
	t.all.h = calloc(max, sizeof(*t.all.h));
	t.ours.h = calloc(max, sizeof(*t.ours.h));
	want.max = members.max = t.all.max = t.ours.max = max;
	err = r.jobs && want.h && members.h && t.all.h && t.ours.h ? 0 : -ENOMEM;
	if (!err && nports && run_cmd(c, CMD_JOB_LIST, &r))
		err = -EIO;	/* said why */
	if (!err)
		err = rtnl_open(&nl);
	if (!err)
		err = neigh_dump(nl, &t);
	if (!err) {
		set_seal(&t.all);
		set_seal(&t.ours);
		if (nports)
			wanted_hops(nl, r.jobs, ports, nports, &members, &want);
		neigh_apply(nl, what, &want, &t, own, nown);
	} else if (err != -EIO) {
		fprintf(stderr, "aggctl: warning: %s: the neighbour entries of one-armed ports are not updated: %s\n",
			what, strerror(-err));
	}
	if (nl)
		mnl_socket_close(nl);
	free(t.ours.h);
	free(t.all.h);
	free(members.h);
	free(want.h);
	free(r.jobs);
}
