// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl: a job's members as job show prints them, the same for a record
 * of the module (job.c) and of the module-less maps (maps.c).
 */
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "aggctl.h"
#include "esa_dp.h"
#include "output.h"

/*
 * The switch port member @addr is bound to, into @name: the record's
 * @ifindex, or for 0 (first sight) the port the data plane bound it on,
 * "-" while it has not been seen.
 */
static void member_port(struct ctx *c, __be32 addr, __u32 ifindex,
			char name[IF_NAMESIZE])
{
	struct esa_switch *sw;
	struct esa_neigh n;
	int fd;

	if (!ifindex) {
		sw = pinned_switch(c);
		fd = sw ? esa_switch_map_fd(sw, "esa_neigh") : -1;
		if (fd >= 0 && !bpf_map_lookup_elem(fd, &addr, &n) && n.bound_job)
			ifindex = n.ifindex;
		if (!ifindex) {
			strcpy(name, "-");
			return;
		}
	}
	if (!if_indextoname(ifindex, name))
		snprintf(name, IF_NAMESIZE, "%u", ifindex);
}

/* One member: "ADDR:PORT dev IF [(first sight)]" (text), or the fields. */
static void print_member(struct ctx *c, const char *key, const char *label,
			 __be32 addr, __be16 port, __u32 ifindex)
{
	char name[IF_NAMESIZE];

	member_port(c, addr, ifindex, name);
	out_str(key, label, fmt_addr_port(addr, port));
	if (!out_is_json())
		out_text("dev %s%s", name, ifindex ? "" : " (first sight)");
}

/*
 * The PS and the workers with the ports they are bound to. JSON keeps "ps"
 * and "workers" as ADDR:PORT strings and adds "ps_dev", "ps_first_sight",
 * "worker_devs" and "worker_first_sight".
 */
void print_members(struct ctx *c, const struct esa_job_info *j)
{
	char name[IF_NAMESIZE];
	int i;

	print_member(c, "ps", NULL, j->ps_addr, j->ps_port, j->ps_ifindex);
	if (out_is_json()) {
		member_port(c, j->ps_addr, j->ps_ifindex, name);
		out_str("ps_dev", NULL, name);
		out_bool("ps_first_sight", NULL, !j->ps_ifindex);
	}
	out_open_array("workers");
	for (i = 0; i < j->fan_in && i < ESA_MAX_WORKERS; i++)
		print_member(c, NULL, "worker", j->worker_addr[i],
			     j->worker_port[i], j->worker_ifindex[i]);
	out_close_array();
	if (!out_is_json())
		return;
	out_open_array("worker_devs");
	for (i = 0; i < j->fan_in && i < ESA_MAX_WORKERS; i++) {
		member_port(c, j->worker_addr[i], j->worker_ifindex[i], name);
		out_str(NULL, NULL, name);
	}
	out_close_array();
	out_open_array("worker_first_sight");
	for (i = 0; i < j->fan_in && i < ESA_MAX_WORKERS; i++)
		out_bool(NULL, NULL, !j->worker_ifindex[i]);
	out_close_array();
}
