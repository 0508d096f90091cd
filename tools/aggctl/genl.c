// SPDX-License-Identifier: GPL-2.0
/*
 * libmnl plumbing for the esa family (genl.h). Extended acks are on
 * (NETLINK_EXT_ACK) and the request is not echoed back (NETLINK_CAP_ACK),
 * so the TLVs of an error follow struct nlmsgerr directly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include "esa_genl.h"
#include "genl.h"
#include "names.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

struct family_info {
	uint16_t id;
	uint32_t mcgrp;
};

static int mcgrp_cb(const struct nlattr *grp, struct family_info *fi)
{
	const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1] = {};

	genl_parse_nested(grp, tb, CTRL_ATTR_MCAST_GRP_MAX);
	if (tb[CTRL_ATTR_MCAST_GRP_NAME] && tb[CTRL_ATTR_MCAST_GRP_ID] &&
	    !strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
		    ESA_GENL_MCGRP_EVENTS))
		fi->mcgrp = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	return 0;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1] = {};
	struct family_info *fi = data;
	const struct nlattr *a;
	struct nlattr *grp;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(a) <= CTRL_ATTR_MAX)
			tb[mnl_attr_get_type(a)] = a;
	}
	if (tb[CTRL_ATTR_FAMILY_ID])
		fi->id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_MCAST_GROUPS])
		mnl_attr_for_each_nested(grp, tb[CTRL_ATTR_MCAST_GROUPS])
			mcgrp_cb(grp, fi);
	return MNL_CB_OK;
}

int genl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		      unsigned int max)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_get_type(a) <= max)
			tb[mnl_attr_get_type(a)] = a;
	}
	return 0;
}

int genl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(a) <= ESA_A_MAX)
			tb[mnl_attr_get_type(a)] = a;
	}
	return 0;
}

static struct nlmsghdr *msg_start(struct genl *g, uint16_t type, uint8_t cmd,
				  uint8_t version, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(g->buf);
	struct genlmsghdr *gh;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++g->seq;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = version;
	return nlh;
}

struct nlmsghdr *genl_req(struct genl *g, uint8_t cmd, uint16_t flags)
{
	return msg_start(g, g->family, cmd, ESA_GENL_VERSION, flags | NLM_F_ACK);
}

/* Name the attribute at byte @off of request @req (top level or nested). */
static void name_offset(struct genl *g, const struct nlmsghdr *req,
			uint32_t off)
{
	const struct nlattr *a, *w, *f;
	const char *base = (const char *)req;
	int wi;

	mnl_attr_for_each(a, req, GENL_HDRLEN) {
		uint32_t start = (const char *)a - base;

		if (off == start) {
			snprintf(g->attr, sizeof(g->attr), "%s",
				 attr_name(mnl_attr_get_type(a)));
			return;
		}
		if (off < start || off >= start + mnl_attr_get_len(a) ||
		    mnl_attr_get_type(a) != ESA_A_JOB_WORKERS)
			continue;
		wi = 0;
		mnl_attr_for_each_nested(w, a) {
			uint32_t ws = (const char *)w - base;

			if (off == ws) {
				snprintf(g->attr, sizeof(g->attr),
					 "workers/worker[%d]", wi);
				return;
			}
			mnl_attr_for_each_nested(f, w) {
				if (off == (uint32_t)((const char *)f - base)) {
					snprintf(g->attr, sizeof(g->attr),
						 "workers/worker[%d]/%s", wi,
						 worker_attr_name(mnl_attr_get_type(f)));
					return;
				}
			}
			wi++;
		}
		snprintf(g->attr, sizeof(g->attr), "%s",
			 attr_name(mnl_attr_get_type(a)));
		return;
	}
	snprintf(g->attr, sizeof(g->attr), "at offset %u", off);
}

struct talk {
	struct genl *g;
	const struct nlmsghdr *req;
	mnl_cb_t cb;
	void *data;
};

static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk *t = data;
	struct genl *g = t->g;
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	unsigned int hlen = sizeof(*e);
	uint32_t miss_type = 0;
	int have_miss = 0, miss_nested = 0;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
		return MNL_CB_ERROR;
	if (!e->error)
		return MNL_CB_STOP;
	g->err = -e->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		hlen += e->msg.nlmsg_len - sizeof(e->msg);
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		mnl_attr_for_each(a, nlh, hlen) {
			switch (mnl_attr_get_type(a)) {
			case NLMSGERR_ATTR_MSG:
				snprintf(g->msg, sizeof(g->msg), "%s",
					 mnl_attr_get_str(a));
				break;
			case NLMSGERR_ATTR_OFFS:
				if (t->req)
					name_offset(g, t->req,
						    mnl_attr_get_u32(a));
				break;
			case NLMSGERR_ATTR_MISS_TYPE:
				miss_type = mnl_attr_get_u32(a);
				have_miss = 1;
				break;
			case NLMSGERR_ATTR_MISS_NEST:
				miss_nested = 1;
				break;
			}
		}
	}
	if (have_miss) {
		g->attr_missing = 1;
		snprintf(g->attr, sizeof(g->attr), "%s",
			 miss_nested && miss_type <= ESA_A_WORKER_MAX &&
			 !g->attr[0] ? worker_attr_name(miss_type) :
			 miss_nested ? worker_attr_name(miss_type) :
			 attr_name(miss_type));
	}
	errno = g->err;
	return MNL_CB_ERROR;
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk *t = data;

	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

/* A dump ends with NLMSG_DONE, which may carry an error code. */
static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk *t = data;
	const int *err = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(int)) && *err < 0) {
		t->g->err = -*err;
		errno = -*err;
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

int genl_talk(struct genl *g, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = error_cb,
		[NLMSG_DONE] = done_cb,
	};
	struct talk t = { .g = g, .req = nlh, .cb = cb, .data = data };
	uint32_t seq = nlh->nlmsg_seq;
	struct nlmsghdr *copy;
	int ret;

	g->err = 0;
	g->msg[0] = g->attr[0] = '\0';
	g->attr_missing = 0;
	/* Keep the request: the receive buffer is the same memory. */
	copy = malloc(nlh->nlmsg_len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, nlh, nlh->nlmsg_len);
	t.req = copy;
	if (mnl_socket_sendto(g->nl, copy, copy->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	do {
		ret = mnl_socket_recvfrom(g->nl, g->buf, MNL_SOCKET_BUFFER_SIZE);
		if (ret < 0) {
			ret = -errno;
			goto out;
		}
		ret = mnl_cb_run2(g->buf, ret, seq, g->portid, data_cb, &t,
				  ctl, NLMSG_MIN_TYPE);
	} while (ret > 0);
	ret = ret < 0 ? -(g->err ? g->err : errno) : 0;
out:
	free(copy);
	return ret;
}

int genl_open(struct genl *g)
{
	struct family_info fi = {};
	struct nlmsghdr *nlh;
	int one = 1, ret;

	memset(g, 0, sizeof(*g));
	g->buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	if (!g->buf)
		return -ENOMEM;
	g->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!g->nl)
		return -errno;
	if (mnl_socket_bind(g->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	/* Old kernels lack these; errors then just carry no text. */
	mnl_socket_setsockopt(g->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(g->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	g->portid = mnl_socket_get_portid(g->nl);
	g->seq = time(NULL);

	nlh = msg_start(g, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ESA_GENL_NAME);
	ret = genl_talk(g, nlh, family_cb, &fi);
	if (ret)
		return ret;
	if (!fi.id)
		return -ENOENT;
	g->family = fi.id;
	g->mcgrp_events = fi.mcgrp;
	return 0;
}

void genl_close(struct genl *g)
{
	if (g->nl)
		mnl_socket_close(g->nl);
	free(g->buf);
	g->nl = NULL;
	g->buf = NULL;
}

int genl_listen(struct genl *g, mnl_cb_t cb, void *data)
{
	int grp = g->mcgrp_events, ret;

	if (!grp)
		return -ENOENT;
	if (mnl_socket_setsockopt(g->nl, NETLINK_ADD_MEMBERSHIP, &grp,
				  sizeof(grp)) < 0)
		return -errno;
	for (;;) {
		ret = mnl_socket_recvfrom(g->nl, g->buf, MNL_SOCKET_BUFFER_SIZE);
		if (ret < 0)
			return -errno;
		ret = mnl_cb_run(g->buf, ret, 0, 0, cb, data);
		if (ret <= 0)
			return ret < 0 ? -errno : 0;
	}
}

void genl_perror(const struct genl *g, const char *what, int err)
{
	fprintf(stderr, "aggctl: %s: %s", what, strerror(-err));
	if (g && g->err == -err && g->msg[0])
		fprintf(stderr, ": %s", g->msg);
	if (g && g->err == -err && g->attr[0])
		fprintf(stderr, " (%sattribute %s)",
			g->attr_missing ? "missing " : "", g->attr);
	if (err == -EPERM)
		fprintf(stderr, " (changes need CAP_NET_ADMIN)");
	fputc('\n', stderr);
}
