// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl switch attach / detach: the data plane on the switch ports.
 *
 * Both are all-or-nothing over the ports given: every port is checked
 * before anything changes, and a step that fails half way is undone (the
 * ports attached by this command are detached again, a data plane loaded
 * by it is unloaded; ports detached are attached again), so a command
 * either did everything it was asked or nothing.
 *
 * Both touch only what is this data plane's: attach refuses a port that
 * runs another XDP program (saying whose, when it is another ESA data
 * plane's), detach removes only this data plane's program (the loader
 * asks the kernel to detach it only if it is still the one attached) and
 * says what it found on a port that runs something else.
 *
 * After attaching, each port is checked for what forwarded frames need to
 * arrive (port.c): a warning names what is missing and the command that
 * fixes it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "aggctl.h"
#include "esa_dp.h"
#include "port.h"

#define MAX_DEVS 64

struct port_req {
	int		ifindex;
	char		name[IF_NAMESIZE];
	bool		was_ours;	/* ran this data plane's program already */
	bool		listed;		/* in its ports devmap */
	bool		done;		/* changed by this command */
	bool		same_role;	/* attach: has the role asked already */
	__u32		mode_flag;	/* detach: the mode to attach it back in */
	__u32		addr;		/* attach, one-armed: its address (be) */
};

struct port_set {
	struct port_req	p[MAX_DEVS];
	int		n;
	__u32		xdp_flags;	/* attach: mode native/generic */
	__u32		capacity;	/* attach: 0 = not given */
	__u32		role;		/* attach: enum esa_port_role_kind */
	__u32		addr;		/* attach: "address" (be), 0 = not given */
};

static int attach_usage(bool attach)
{
	fprintf(stderr, "aggctl: switch %s: \"dev IF\" is required\n",
		attach ? "attach" : "detach");
	return EXIT_USAGE;
}

/* One "dev IF": known, and not given twice. */
static int add_dev(struct port_set *s, const char *name)
{
	int i, ifindex = if_nametoindex(name);

	if (!ifindex) {
		fprintf(stderr, "aggctl: no such interface \"%s\"\n", name);
		return EXIT_FAIL;
	}
	for (i = 0; i < s->n; i++)
		if (s->p[i].ifindex == ifindex)
			return usage_bad("dev (given twice)", name);
	if (s->n == MAX_DEVS)
		return usage_bad("dev (too many)", name);
	s->p[s->n].ifindex = ifindex;
	snprintf(s->p[s->n].name, IF_NAMESIZE, "%s", name);
	s->n++;
	return EXIT_OK;
}

static int parse_ports(int argc, char **argv, struct port_set *s, bool attach)
{
	int ret;

	memset(s, 0, sizeof(*s));
	while (argc > 0) {
		if (!strcmp(*argv, "dev")) {
			NEXT_ARG();
			ret = add_dev(s, *argv);
			if (ret)
				return ret;
		} else if (attach && !strcmp(*argv, "mode")) {
			NEXT_ARG();
			if (!strcmp(*argv, "native"))
				s->xdp_flags = XDP_FLAGS_DRV_MODE;
			else if (!strcmp(*argv, "generic"))
				s->xdp_flags = XDP_FLAGS_SKB_MODE;
			else
				return usage_bad("mode (native or generic)", *argv);
		} else if (attach && !strcmp(*argv, "capacity")) {
			NEXT_ARG();
			if (arg_u32("capacity", *argv, 1, ESA_MAX_AGGREGATORS,
				    &s->capacity))
				return EXIT_USAGE;
		} else if (attach && !strcmp(*argv, "role")) {
			NEXT_ARG();
			if (!strcmp(*argv, "one-armed"))
				s->role = ESA_PORT_ONE_ARMED;
			else if (!strcmp(*argv, "per-host"))
				s->role = ESA_PORT_PER_HOST;
			else
				return usage_bad("role (one-armed or per-host)", *argv);
		} else if (attach && !strcmp(*argv, "address")) {
			NEXT_ARG();
			if (inet_pton(AF_INET, *argv, &s->addr) != 1 || !s->addr)
				return usage_bad("address (an IPv4 address A.B.C.D)", *argv);
		} else {
			return usage_unknown("switch", *argv);
		}
		argc--;
		argv++;
	}
	if (!s->n)
		return attach_usage(attach);
	if (s->addr && s->role != ESA_PORT_ONE_ARMED) {
		fprintf(stderr, "aggctl: switch attach: address is a one-armed port's (role one-armed); a per-host port has none\n");
		return EXIT_USAGE;
	}
	if (s->addr && s->n > 1) {
		fprintf(stderr, "aggctl: switch attach: address names the address of one port: give one dev with it (attach each one-armed port with its own command)\n");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * One-armed port @p's address: the one asked (@asked, network order; it
 * must be one of the port's, the server's own), else the port's one
 * primary IPv4 address. EXIT_OK or EXIT_FAIL after saying why.
 */
static int one_armed_addr(struct port_req *p, __u32 asked)
{
	__u32 addrs[16], found = 0;
	bool secondary[16];
	char a[INET_ADDRSTRLEN];
	int i, n, primaries = 0;

	n = link_ipv4_addrs(p->ifindex, addrs, secondary, 16);
	if (n < 0) {
		fprintf(stderr, "aggctl: switch attach %s: reading its IPv4 addresses: %s\n",
			p->name, strerror(-n));
		return EXIT_FAIL;
	}
	for (i = 0; i < n && i < 16; i++) {
		if (asked && addrs[i] == asked)
			found = asked;
		if (!secondary[i]) {
			primaries++;
			if (!asked)
				found = addrs[i];
		}
	}
	if (asked && !found) {
		fprintf(stderr, "aggctl: switch attach %s: address %s is not an address of %s (a one-armed port takes the server's own address on it: ip -4 address show dev %s)\n",
			p->name, inet_ntop(AF_INET, &asked, a, sizeof(a)), p->name, p->name);
		return EXIT_FAIL;
	}
	if (!asked && !primaries) {
		fprintf(stderr, "aggctl: switch attach %s: role one-armed: %s has no IPv4 address, and workers address the switch by it (ip address add A.B.C.D/N dev %s, then attach)\n",
			p->name, p->name, p->name);
		return EXIT_FAIL;
	}
	if (!asked && primaries > 1) {
		fprintf(stderr, "aggctl: switch attach %s: role one-armed: %s has %d IPv4 addresses; say which is the switch's with address A.B.C.D\n",
			p->name, p->name, primaries);
		return EXIT_FAIL;
	}
	p->addr = found;
	return EXIT_OK;
}

/* The kernel's id of the data plane's program. */
static __u32 our_prog_id(struct esa_switch *sw)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!sw || bpf_obj_get_info_by_fd(esa_switch_prog_fd(sw), &info, &len))
		return 0;
	return info.id;
}

/* "program 12 (xdp_pass)" for the program with id @id. */
static const char *prog_desc(__u32 id, char *buf, size_t n, bool *esa)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	*esa = false;
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		snprintf(buf, n, "program %u", id);
	} else {
		snprintf(buf, n, "program %u (%s)", id, info.name);
		*esa = !strcmp(info.name, "esa_switch");
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

/* Say what runs on port @p instead of this data plane's program. */
static int foreign(struct ctx *c, const char *what, const struct port_req *p,
		   __u32 id)
{
	char desc[64], hint[96] = "";
	bool esa;

	prog_desc(id, desc, sizeof(desc), &esa);
	if (esa) {
		fprintf(stderr, "aggctl: %s %s: the port runs another ESA data plane's %s, not the one pinned under %s; left alone (use aggctl -d with that data plane's pin directory)\n",
			what, p->name, desc, c->pin_dir);
		return EXIT_FAIL;
	}
	/* What the user can do about it, when attaching. */
	if (!strcmp(what, "switch attach"))
		snprintf(hint, sizeof(hint),
			 " (remove it first if it is not needed: ip link set dev %s xdp off)",
			 p->name);
	fprintf(stderr, "aggctl: %s %s: the port runs another XDP %s, not ESA's; left alone%s\n",
		what, p->name, desc, hint);
	return EXIT_FAIL;
}

static bool port_listed(struct esa_switch *sw, int ifindex)
{
	__u32 key = ifindex, val;
	int fd = sw ? esa_switch_map_fd(sw, "esa_mcast") : -1;

	return fd >= 0 && !bpf_map_lookup_elem(fd, &key, &val);
}

typedef int (*port_check_fn)(struct ctx *c, struct esa_switch *sw,
			     struct port_req *p, const struct port_set *s,
			     const struct link_info *l, __u32 ours);

/* @check on every port, before any change; the first refusal ends it. */
static int check_ports(struct ctx *c, struct esa_switch *sw, struct port_set *s,
		       const char *what, port_check_fn check)
{
	__u32 ours = our_prog_id(sw);
	struct link_info l;
	int i, err, ret;

	for (i = 0; i < s->n; i++) {
		err = link_get(s->p[i].ifindex, &l);
		if (err) {
			fprintf(stderr, "aggctl: %s %s: %s\n", what, s->p[i].name,
				strerror(-err));
			return EXIT_FAIL;
		}
		ret = check(c, sw, &s->p[i], s, &l, ours);
		if (ret)
			return ret;
	}
	return EXIT_OK;
}

/* The port can take the switch program. */
static int attach_check(struct ctx *c, struct esa_switch *sw,
			struct port_req *p, const struct link_info *l, __u32 ours)
{
	if (l->flags & IFF_LOOPBACK) {
		fprintf(stderr, "aggctl: switch attach %s: the loopback device leads to no other host; give the ports the hosts are on\n",
			p->name);
		return EXIT_FAIL;
	}
	if (l->type != ARPHRD_ETHER) {
		fprintf(stderr, "aggctl: switch attach %s: not an Ethernet device (the switch forwards Ethernet frames)\n",
			p->name);
		return EXIT_FAIL;
	}
	if (l->xdp_prog && l->xdp_prog != ours)
		return foreign(c, "switch attach", p, l->xdp_prog);
	p->was_ours = l->xdp_prog && l->xdp_prog == ours;
	return EXIT_OK;
}

/*
 * A one-armed port sends by the kernel's routing and neighbour tables
 * (bpf_fib_lookup), which answer only for a port with IPv4 forwarding on
 * (BPF_FIB_LKUP_RET_FWD_DISABLED otherwise). aggctl does not turn it on:
 * it is the server's setting (it also routes what arrives there for
 * other addresses), the operator's to make. EXIT_OK or EXIT_FAIL.
 */
static int one_armed_forwarding(const struct port_req *p)
{
	char path[96];
	FILE *f;
	int on = -1;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/forwarding",
		 p->name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = -1;
		fclose(f);
	}
	if (on > 0)
		return EXIT_OK;
	if (on < 0)
		fprintf(stderr, "aggctl: switch attach %s: role one-armed: cannot read %s: %s\n",
			p->name, path, f ? "not a number" : strerror(errno));
	else
		fprintf(stderr, "aggctl: switch attach %s: role one-armed: IPv4 forwarding is off on %s, and the route lookup the switch sends by answers only on a forwarding port (sysctl -w net.ipv4.conf.%s.forwarding=1)\n",
			p->name, p->name, p->name);
	return EXIT_FAIL;
}

/*
 * attach_check(), then the role: a one-armed port's address, and whether
 * the port has the role asked already (attached again: nothing to do).
 */
static int attach_check_role(struct ctx *c, struct esa_switch *sw,
			     struct port_req *p, const struct port_set *s,
			     const struct link_info *l, __u32 ours)
{
	struct esa_port_role now = { 0 };
	int ret = attach_check(c, sw, p, l, ours);

	if (ret)
		return ret;
	if (s->role == ESA_PORT_ONE_ARMED) {
		ret = one_armed_addr(p, s->addr);
		if (!ret)
			ret = one_armed_forwarding(p);
		if (ret)
			return ret;
	}
	if (sw && esa_switch_port_role(sw, p->ifindex, &now))
		now.role = ~0u;		/* unreadable: set it again */
	p->same_role = now.role == s->role && now.addr == p->addr;
	return EXIT_OK;
}

/* What a refused native attach most likely means. */
static const char *attach_hint(int err, __u32 xdp_flags)
{
	if (xdp_flags & XDP_FLAGS_SKB_MODE)
		return "";
	if (err == -ERANGE)
		return " (the MTU is too large for native XDP on this device: lower it, or attach with mode generic)";
	if (err == -EOPNOTSUPP)
		return " (the driver has no native XDP: attach with mode generic)";
	return "";
}

/* Attach port @p in the role @s asks. 0 or -errno. */
static int attach_one(struct esa_switch *sw, const struct port_set *s,
		      const struct port_req *p)
{
	if (s->role == ESA_PORT_ONE_ARMED)
		return esa_switch_attach_one_armed(sw, p->ifindex, s->xdp_flags,
						   p->addr);
	return esa_switch_attach_port(sw, p->ifindex, s->xdp_flags);
}

/* What a refused attach in the role @s asks means. */
static const char *attach_strerror(int err, const struct port_set *s)
{
	static char held[160];

	if (s->role != ESA_PORT_ONE_ARMED)
		return strerror(-err);
	switch (err) {
	case -EADDRINUSE:
		return "another one-armed port of the switch has that address";
	case -EEXIST:
		snprintf(held, sizeof(held), "the port runs another XDP program, or another tc filter holds ingress handle %#x, priority %#x (the fan-out's)",
			 ESA_TC_HANDLE, ESA_TC_PRIO);
		return held;
	case -EOPNOTSUPP:
		return "the data plane pinned was loaded by a build without one-armed ports (detach its ports, aggctl switch unload, attach again)";
	default:
		return strerror(-err);
	}
}

/* Detach what this command attached; unload what it loaded. */
static void attach_undo(struct ctx *c, struct esa_switch *sw,
			struct port_set *s, bool loaded)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->p[i].done)
			esa_switch_detach_port(sw, s->p[i].ifindex);
	if (loaded)
		switch_unload_pinned(c, "switch attach");
}

/* Warn about each port where forwarded frames cannot arrive. */
static void attach_warn(struct esa_switch *sw, const struct port_set *s)
{
	__u32 ours = our_prog_id(sw);
	struct port_info pi;
	char why[512];
	int i;

	for (i = 0; i < s->n; i++) {
		if (port_probe(s->p[i].ifindex, &pi))
			continue;
		pi.one_armed = s->role == ESA_PORT_ONE_ARMED;
		switch (port_verdict(&pi, ours, why, sizeof(why))) {
		case PORT_NOT_READY:
			fprintf(stderr, "aggctl: warning: switch attach %s: %s\n",
				s->p[i].name, why);
			break;
		case PORT_UNCHECKED:
			fprintf(stderr, "aggctl: note: switch attach %s: %s\n",
				s->p[i].name, why);
			break;
		case PORT_READY:
			break;
		}
	}
}

int switch_attach(struct ctx *c, int argc, char **argv)
{
	struct esa_switch *sw;
	struct port_set s;
	bool loaded = false;
	__u32 cap;
	int i, err, ret;

	ret = parse_ports(argc, argv, &s, true);
	if (ret)
		return ret;
	sw = pinned_switch(c);
	if (sw && s.capacity && s.capacity != (cap = esa_switch_agg_capacity(sw))) {
		fprintf(stderr, "aggctl: switch attach: capacity %u: the data plane pinned under %s has %u aggregators, fixed when it was loaded (to change it: aggctl switch detach its ports, aggctl switch unload, attach again)\n",
			s.capacity, c->pin_dir, cap);
		return EXIT_FAIL;
	}
	ret = check_ports(c, sw, &s, "switch attach", attach_check_role);
	if (ret)
		return ret;
	if (!sw) {
		sw = switch_get_or_load(c, s.capacity);
		if (!sw)
			return EXIT_FAIL;
		loaded = true;
	}
	for (i = 0; i < s.n; i++) {
		if (s.p[i].was_ours && s.p[i].same_role)
			continue;
		err = attach_one(sw, &s, &s.p[i]);
		if (err) {
			fprintf(stderr, "aggctl: switch attach %s: %s%s%s\n", s.p[i].name,
				attach_strerror(err, &s), attach_hint(err, s.xdp_flags),
				i || loaded ? "; nothing attached by this command stays" : "");
			attach_undo(c, sw, &s, loaded);
			return EXIT_FAIL;
		}
		s.p[i].done = true;
	}
	attach_warn(sw, &s);
	neigh_sync(c, "switch attach", NULL, 0);
	return EXIT_OK;
}

/* The port runs this data plane's program (or is still listed by it). */
static int detach_check(struct ctx *c, struct esa_switch *sw,
			struct port_req *p, const struct port_set *s,
			const struct link_info *l, __u32 ours)
{
	p->listed = port_listed(sw, p->ifindex);
	if (l->xdp_prog && l->xdp_prog != ours)
		return foreign(c, "switch detach", p, l->xdp_prog);
	if (!l->xdp_prog && !p->listed) {
		fprintf(stderr, "aggctl: switch detach %s: not a port of the data plane under %s (no XDP program on it); nothing to detach\n",
			p->name, c->pin_dir);
		return EXIT_FAIL;
	}
	p->was_ours = l->xdp_prog == ours;
	p->mode_flag = l->xdp_mode == XDP_ATTACHED_SKB ?
		       XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	return EXIT_OK;
}

int switch_detach(struct ctx *c, int argc, char **argv)
{
	struct esa_switch *sw;
	struct port_set s;
	int i, j, err, ret, left[MAX_DEVS];

	ret = parse_ports(argc, argv, &s, false);
	if (ret)
		return ret;
	sw = pinned_switch(c);
	if (!sw)
		return no_dataplane(c, "switch detach");
	ret = check_ports(c, sw, &s, "switch detach", detach_check);
	if (ret)
		return ret;
	/*
	 * The program comes off every port before any port leaves the
	 * multicast: a sum completed meanwhile on a port not yet detached
	 * still reaches every member, the PS included. Taking the ports out
	 * one by one would let the last ones complete sums whose copies no
	 * longer reach the PS or the workers of the first ones, and a worker
	 * that missed its result then has nobody to get it from (the PS
	 * never had it): a switch restart could stall a job for good.
	 */
	for (i = 0; i < s.n; i++) {
		err = esa_switch_detach_prog(sw, s.p[i].ifindex);
		if (err) {
			fprintf(stderr, "aggctl: switch detach %s: %s%s\n", s.p[i].name,
				err == -EEXIST ? "another program was attached meanwhile; left alone" :
				strerror(-err), i ? "; the ports detached by this command are attached again" : "");
			for (j = 0; j < i; j++)
				if (s.p[j].was_ours)
					esa_switch_attach_port(sw, s.p[j].ifindex,
							       s.p[j].mode_flag);
			return EXIT_FAIL;
		}
	}
	for (i = 0; i < s.n; i++) {
		esa_switch_forget_port(sw, s.p[i].ifindex);
		left[i] = s.p[i].ifindex;
		if (!s.p[i].was_ours)
			fprintf(stderr, "aggctl: switch detach %s: no XDP program was attached any more (removed by other means); taken out of the data plane's ports\n",
				s.p[i].name);
	}
	/* the entries on the ports it let go are its own to remove */
	neigh_sync(c, "switch detach", left, (unsigned int)s.n);
	return EXIT_OK;
}
