// SPDX-License-Identifier: GPL-2.0
/*
 * genl_raw: send one hand-built request to the esa family, bypassing
 * aggctl's own checks, and print the kernel's verdict. Lets the tests
 * send wrong attribute types, read-only or unknown attributes, and
 * malformed nests, and check the extack the module returns.
 *
 *   genl_raw CMD [dump] ITEM...
 *   ITEM := NAME:TYPE:VALUE | NAME:nest{ | }
 *   TYPE := u8 | u16 | u32 | u64 | be16 | be32 | ip | flag | str
 *   NAME := an attribute name (job-id, fan-in, ..., worker, addr, port)
 *           or a number
 *
 * Prints "ok" (and the number of reply messages), or
 * "error EINVAL msg=<extack text> attr=<name of the attribute the kernel
 * points at> miss=<missing attribute number>". Exit 0 for ok, 1 for a
 * kernel error, 2 for a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include "esa_genl.h"

#define MAX_ITEMS 128

static const struct { const char *name; unsigned int type; } names[] = {
	{ "job-id", ESA_A_JOB_ID }, { "fan-in", ESA_A_JOB_FAN_IN },
	{ "priority", ESA_A_JOB_PRIORITY }, { "prio-auto", ESA_A_JOB_PRIO_AUTO },
	{ "quota", ESA_A_JOB_QUOTA }, { "ps-addr", ESA_A_JOB_PS_ADDR },
	{ "ps-port", ESA_A_JOB_PS_PORT }, { "workers", ESA_A_JOB_WORKERS },
	{ "prio-mode", ESA_A_JOB_PRIO_MODE }, { "state", ESA_A_JOB_STATE },
	{ "occupancy", ESA_A_JOB_OCCUPANCY }, { "stats", ESA_A_STATS },
	{ "agg-slots", ESA_A_CFG_AGG_SLOTS },
	{ "agg-timeout-us", ESA_A_CFG_AGG_TIMEOUT_US },
	{ "aging-ms", ESA_A_CFG_AGING_MS }, { "policy", ESA_A_POLICY },
	{ "dp-generation", ESA_A_CFG_DP_GENERATION },
	{ "worker", ESA_A_WORKERS_WORKER }, { "addr", ESA_A_WORKER_ADDR },
	{ "port", ESA_A_WORKER_PORT }, { "token", ESA_A_JOB_TOKEN },
	{ "has-token", ESA_A_JOB_HAS_TOKEN },
};

static const struct { const char *name; unsigned int cmd; } cmds[] = {
	{ "job-add", ESA_CMD_JOB_ADD }, { "job-change", ESA_CMD_JOB_CHANGE },
	{ "job-del", ESA_CMD_JOB_DEL }, { "job-get", ESA_CMD_JOB_GET },
	{ "config-set", ESA_CMD_CONFIG_SET }, { "config-get", ESA_CMD_CONFIG_GET },
	{ "policy-set", ESA_CMD_POLICY_SET }, { "policy-get", ESA_CMD_POLICY_GET },
	{ "stats-get", ESA_CMD_STATS_GET },
	{ "occupancy-get", ESA_CMD_OCCUPANCY_GET },
	{ "job-token-get", ESA_CMD_JOB_TOKEN_GET },
};

/* Where each attribute went, to name the one an error points at. */
static struct { unsigned int off; char name[64]; } placed[MAX_ITEMS];
static int nplaced;

static char buf[32768];
static char reqcopy[32768];

static int lookup(const char *s, unsigned int *out)
{
	unsigned int i;
	char *end;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i].name)) {
			*out = names[i].type;
			return 0;
		}
	}
	*out = strtoul(s, &end, 0);
	return *end || !*s ? -1 : 0;
}

static int family_id(struct mnl_socket *nl, uint16_t *id)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *gh;
	struct nlattr *a;
	int n;

	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = CTRL_CMD_GETFAMILY;
	gh->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ESA_GENL_NAME);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n <= 0)
		return -1;
	nlh = (struct nlmsghdr *)buf;
	if (nlh->nlmsg_type == NLMSG_ERROR)
		return -1;
	mnl_attr_for_each(a, nlh, GENL_HDRLEN)
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			*id = mnl_attr_get_u16(a);
	return 0;
}

static int put_item(struct nlmsghdr *nlh, char *item, struct nlattr **stack,
		    int *depth)
{
	char *type_s, *val;
	unsigned int type;
	struct in_addr ip;

	if (!strcmp(item, "}")) {
		if (!*depth)
			return -1;
		mnl_attr_nest_end(nlh, stack[--*depth]);
		return 0;
	}
	type_s = strchr(item, ':');
	if (!type_s)
		return -1;
	*type_s++ = '\0';
	if (lookup(item, &type))
		return -1;
	placed[nplaced].off = nlh->nlmsg_len;
	snprintf(placed[nplaced].name, sizeof(placed[0].name), "%s", item);
	nplaced++;
	if (!strcmp(type_s, "nest{")) {
		stack[(*depth)++] = mnl_attr_nest_start(nlh, type);
		return 0;
	}
	val = strchr(type_s, ':');
	if (!strcmp(type_s, "flag")) {
		mnl_attr_put(nlh, type, 0, NULL);
		return 0;
	}
	if (!val)
		return -1;
	*val++ = '\0';
	if (!strcmp(type_s, "u8"))
		mnl_attr_put_u8(nlh, type, strtoul(val, NULL, 0));
	else if (!strcmp(type_s, "u16"))
		mnl_attr_put_u16(nlh, type, strtoul(val, NULL, 0));
	else if (!strcmp(type_s, "u32"))
		mnl_attr_put_u32(nlh, type, strtoul(val, NULL, 0));
	else if (!strcmp(type_s, "u64"))
		mnl_attr_put_u64(nlh, type, strtoull(val, NULL, 0));
	else if (!strcmp(type_s, "be16"))
		mnl_attr_put_u16(nlh, type, htons(strtoul(val, NULL, 0)));
	else if (!strcmp(type_s, "be32"))
		mnl_attr_put_u32(nlh, type, htonl(strtoul(val, NULL, 0)));
	else if (!strcmp(type_s, "ip") && inet_pton(AF_INET, val, &ip) == 1)
		mnl_attr_put_u32(nlh, type, ip.s_addr);
	else if (!strcmp(type_s, "str"))
		mnl_attr_put_strz(nlh, type, val);
	else
		return -1;
	return 0;
}

static const char *errname(int e)
{
	static char b[16];

	switch (e) {
	case EINVAL: return "EINVAL";
	case ERANGE: return "ERANGE";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EPERM: return "EPERM";
	case ENOSPC: return "ENOSPC";
	case E2BIG: return "E2BIG";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	}
	snprintf(b, sizeof(b), "E%d", e);
	return b;
}

static int report(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const char *msg = "", *attr = "";
	char miss[32] = "";
	struct nlattr *a;
	unsigned int hlen = sizeof(*e);
	int i;

	if (!e->error)
		return 0;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		hlen += e->msg.nlmsg_len - sizeof(e->msg);
	mnl_attr_for_each(a, nlh, hlen) {
		switch (mnl_attr_get_type(a)) {
		case NLMSGERR_ATTR_MSG:
			msg = mnl_attr_get_str(a);
			break;
		case NLMSGERR_ATTR_OFFS:
			attr = "?";
			for (i = 0; i < nplaced; i++)
				if (placed[i].off == mnl_attr_get_u32(a))
					attr = placed[i].name;
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			snprintf(miss, sizeof(miss), "%u", mnl_attr_get_u32(a));
			break;
		}
	}
	printf("error %s msg=%s attr=%s miss=%s\n", errname(-e->error), msg,
	       attr, miss);
	return 1;
}

int main(int argc, char **argv)
{
	struct nlattr *stack[8];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct genlmsghdr *gh;
	unsigned int cmd = 0, i, replies = 0;
	int depth = 0, one = 1, n, argi = 2, dump = 0;
	uint16_t fam = 0;
	uint32_t seq = time(NULL);

	if (argc < 2) {
		fputs("usage: genl_raw CMD [dump] NAME:TYPE:VALUE|NAME:nest{|}...\n", stderr);
		return 2;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			cmd = cmds[i].cmd;
	if (!cmd && lookup(argv[1], &cmd))
		return 2;
	if (argc > 2 && !strcmp(argv[2], "dump")) {
		dump = 1;
		argi++;
	}
	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return perror("netlink"), 1;
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (family_id(nl, &fam) || !fam) {
		puts("error no esa family");
		return 1;
	}
	nlh = mnl_nlmsg_put_header(reqcopy);
	nlh->nlmsg_type = fam;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	nlh->nlmsg_seq = ++seq;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = ESA_GENL_VERSION;
	for (; argi < argc; argi++) {
		if (put_item(nlh, argv[argi], stack, &depth)) {
			fprintf(stderr, "genl_raw: bad item \"%s\"\n", argv[argi]);
			return 2;
		}
	}
	while (depth)
		mnl_attr_nest_end(nlh, stack[--depth]);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return perror("send"), 1;
	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n <= 0)
			return perror("recv"), 1;
		for (nlh = (struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, n);
		     nlh = mnl_nlmsg_next(nlh, &n)) {
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				if (report(nlh))
					return 1;
				printf("ok %u\n", replies);
				return 0;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				const int *err = mnl_nlmsg_get_payload(nlh);

				if (*err) {
					printf("error %s msg= attr= miss=\n", errname(-*err));
					return 1;
				}
				printf("ok %u\n", replies);
				return 0;
			}
			replies++;
		}
	}
}
