// SPDX-License-Identifier: GPL-2.0
/*
 * smoke_genl - talk to the esa_smoke module's generic netlink family.
 *
 *   smoke_genl calls       print the kfunc call count (a decimal number)
 *   smoke_genl bad-attr    send GET with an attribute the strict policy
 *                          rejects; print the kernel's extack message and
 *                          exit 0 only if the kernel refused it
 *
 * Exit status: 0 on success, 1 on any error (message on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "smoke/esa_smoke_uapi.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif

static char buf[8192];	/* MNL_SOCKET_BUFFER_SIZE is not a constant */

struct reply {
	int family;		/* resolved family id */
	int have_calls;
	unsigned long long calls;
	char errmsg[256];	/* extack message of a failed request */
};

static int family_attr_cb(const struct nlattr *attr, void *data)
{
	struct reply *r = data;

	if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
	    mnl_attr_validate(attr, MNL_TYPE_U16) >= 0)
		r->family = mnl_attr_get_u16(attr);
	return MNL_CB_OK;
}

static int calls_attr_cb(const struct nlattr *attr, void *data)
{
	struct reply *r = data;

	if (mnl_attr_get_type(attr) == ESA_SMOKE_A_CALLS &&
	    mnl_attr_validate(attr, MNL_TYPE_U64) >= 0) {
		r->calls = mnl_attr_get_u64(attr);
		r->have_calls = 1;
	}
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, GENL_HDRLEN, family_attr_cb, data);
}

static int calls_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, GENL_HDRLEN, calls_attr_cb, data);
}

/* Keep the extack message of an error ack (NLMSGERR_ATTR_MSG). */
static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct reply *r = data;
	const struct nlattr *attr;
	unsigned int off = sizeof(*err);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += mnl_nlmsg_get_payload_len(&err->msg);
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		mnl_attr_for_each(attr, nlh, off) {
			if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
			    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
				snprintf(r->errmsg, sizeof(r->errmsg), "%s",
					 mnl_attr_get_str(attr));
		}
	}
	if (err->error) {
		errno = -err->error;
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

/* Send one request and run @cb on the replies until the ack. */
static int transact(struct mnl_socket *nl, struct nlmsghdr *nlh,
		    mnl_cb_t cb, struct reply *r)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = error_cb };
	unsigned int portid = mnl_socket_get_portid(nl);
	unsigned int seq = nlh->nlmsg_seq;
	int ret;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	do {
		ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret < 0)
			return -1;
		ret = mnl_cb_run2(buf, ret, seq, portid, cb, r, ctl,
				  NLMSG_MIN_TYPE);
	} while (ret > 0);
	return ret;
}

static struct nlmsghdr *genl_request(int type, int cmd, unsigned int seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *genl;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = type == GENL_ID_CTRL ? 1 : ESA_SMOKE_GENL_VERSION;
	return nlh;
}

int main(int argc, char **argv)
{
	struct reply r = { 0 };
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	unsigned int seq = time(NULL);
	int one = 1, bad;

	if (argc != 2 || (strcmp(argv[1], "calls") && strcmp(argv[1], "bad-attr"))) {
		fprintf(stderr, "usage: %s calls|bad-attr\n", argv[0]);
		return 1;
	}
	bad = !strcmp(argv[1], "bad-attr");

	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("smoke_genl: netlink socket");
		return 1;
	}
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));

	nlh = genl_request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, seq++);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ESA_SMOKE_GENL_NAME);
	if (transact(nl, nlh, family_cb, &r) < 0 || !r.family) {
		fprintf(stderr, "smoke_genl: family %s not found: %s (module not loaded?)\n",
			ESA_SMOKE_GENL_NAME, strerror(errno));
		return 1;
	}

	nlh = genl_request(r.family, ESA_SMOKE_CMD_GET, seq++);
	if (bad)
		mnl_attr_put_u64(nlh, ESA_SMOKE_A_CALLS, 1);
	if (transact(nl, nlh, calls_cb, &r) < 0) {
		if (bad) {
			printf("rejected: %s (%s)\n", strerror(errno),
			       r.errmsg[0] ? r.errmsg : "no extack message");
			return 0;
		}
		fprintf(stderr, "smoke_genl: GET failed: %s%s%s\n", strerror(errno),
			r.errmsg[0] ? ": " : "", r.errmsg);
		return 1;
	}
	if (bad) {
		fprintf(stderr, "smoke_genl: kernel accepted a forbidden attribute\n");
		return 1;
	}
	if (!r.have_calls) {
		fprintf(stderr, "smoke_genl: reply without ESA_SMOKE_A_CALLS\n");
		return 1;
	}
	printf("%llu\n", r.calls);
	mnl_socket_close(nl);
	return 0;
}
