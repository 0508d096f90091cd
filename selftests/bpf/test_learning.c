// SPDX-License-Identifier: GPL-2.0
/*
 * The learning tables under a host that sends from many source addresses
 * (Documentation/dataplane.rst, "Learning"; security.rst): each port
 * writes at most ESA_LEARN_PORT_BUDGET entries of each learned table per
 * ESA_LEARN_AGE_S, entries age and are learned again (or, over budget,
 * dropped), members' bindings live in their own table that no learning
 * evicts, and a binding table that is full is named in the error.
 * Every write of the learning voids the learning memo (esa_learn()'s
 * per-CPU memo of a frame that taught nothing): the writers of
 * bpf/esa_pkt.h bump the learning generation.
 * Module-less flavour under BPF_PROG_TEST_RUN with the data plane's
 * virtual clock (esa_clock), so ageing needs no waiting.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "kselftest_harness.h"
#include "dp_util.h"
#include "../lib/topo.h"

static struct esa_switch *g_sw;

/* Flood hosts: 10.99.0.0/16, MAC 02:99:00:00:hi:lo. */
#define FLOOD_ADDR(i)	(0x0a630000u + (i))

FIXTURE(learn) {
	struct dp_frame in, out;
};

static int set_clock_s(__u32 s)
{
	__u64 ns = (__u64)s * 1000000000ull;
	__u32 zero = 0;

	return bpf_map_update_elem(esa_switch_map_fd(g_sw, "esa_clock"), &zero,
				   &ns, 0) ? -errno : 0;
}

FIXTURE_SETUP(learn)
{
	ASSERT_EQ(0, dp_reset(g_sw, ESA_POLICY_ESA, DP_SLOTS, 0));
	ASSERT_EQ(0, set_clock_s(1000));
}

FIXTURE_TEARDOWN(learn)
{
}

/* An ordinary UDP frame from flood host @i in on port @port (0: lo). */
static int send_from_on(FIXTURE_DATA(learn) *self, __u32 i, __u32 port)
{
	__be32 a = htonl(FLOOD_ADDR(i));

	dp_build_l4(&self->in, IPPROTO_UDP, 16, 5, DP_CSUM_NONE, i);
	memcpy(self->in.buf + 26, &a, 4);
	self->in.buf[6] = 0x02;
	self->in.buf[7] = 0x99;
	self->in.buf[8] = 0;
	self->in.buf[9] = 0;
	self->in.buf[10] = i >> 8;
	self->in.buf[11] = i;
	return dp_run_on(g_sw, &self->in, &self->out, port);
}

/* The same in on port 1 (lo). */
static int send_from(FIXTURE_DATA(learn) *self, __u32 i)
{
	return send_from_on(self, i, 0);
}

/* Entries of map @name (key size @ksize) on port @port (0: any). */
static int entries(const char *name, __u32 ksize, __u32 port)
{
	int fd = esa_switch_map_fd(g_sw, name), n = 0;
	__u8 key[8], next[8], val[16];
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, ksize);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, val))
			continue;
		if (!port || *(__u32 *)val == port)
			n++;
	}
	return n;
}

static int learned(__u32 i, struct esa_neigh *n)
{
	__be32 a = htonl(FLOOD_ADDR(i));

	return bpf_map_lookup_elem(esa_switch_map_fd(g_sw, "esa_learned"), &a, n);
}

/* The port flood host @i's MAC was learned on, or 0. */
static __u32 fdb_port(__u32 i)
{
	struct esa_mac_key k = { .addr = { 0x02, 0x99, 0, 0, i >> 8, i } };
	struct esa_fdb_entry e;

	if (bpf_map_lookup_elem(esa_switch_map_fd(g_sw, "esa_fdb"), &k, &e))
		return 0;
	return e.ifindex;
}

/* The port flood host @i was learned on, or 0. */
static __u32 learned_port(__u32 i)
{
	struct esa_neigh n;

	return learned(i, &n) ? 0 : n.ifindex;
}

static int run_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * A second port for the memo tests: a veth in a network namespace of the
 * test's own (the harness runs each test in a child; BPF_PROG_TEST_RUN
 * needs a real device). Its ifindex, or 0. The memo's way is picked by
 * the address and the port: a port that differs from lo's (1) in the low
 * bits keeps a frame's memo on lo apart from its frames on this port.
 */
static __u32 second_port(void)
{
	__u32 port;

	if (unshare(CLONE_NEWNET) || topo_veth_add("esalr0", "esalr1"))
		return 0;
	port = if_nametoindex("esalr0");
	return port % 64 == 1 ? 0 : port;
}

/*
 * Flood host 0 learned on lo, then sent again: the second frame teaches
 * nothing and is memoised on this CPU.
 */
static void memoise_host0(struct __test_metadata *_metadata,
			  FIXTURE_DATA(learn) *self)
{
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 0));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 0));
	ASSERT_EQ(1, learned_port(0));
	ASSERT_EQ(1, fdb_port(0));
}

/*
 * One port, many sources: the port writes its budget of each learned
 * table and no more; every frame is still switched.
 */
TEST_F(learn, one_port_writes_at_most_its_budget)
{
	__u32 i, n = ESA_LEARN_PORT_BUDGET + 200;

	for (i = 0; i < n; i++)
		ASSERT_EQ(XDP_REDIRECT, send_from(self, i)) TH_LOG("host %u", i);
	EXPECT_EQ(ESA_LEARN_PORT_BUDGET, entries("esa_learned", 4, 1));
	EXPECT_EQ(ESA_LEARN_PORT_BUDGET, entries("esa_fdb", 8, 1));
	EXPECT_EQ(0, entries("esa_neigh", 4, 0));
	EXPECT_EQ(n, dp_cnt(g_sw, 0, ESA_CNT_FORWARDED));
}

/*
 * Entries age: within ESA_LEARN_AGE_S a learned host is left as it is;
 * after it, its next frame writes it again (in the new window's budget),
 * and one whose port has no budget left is dropped, not kept past its age.
 */
TEST_F(learn, aged_entries_learned_again_or_dropped)
{
	struct esa_neigh n;
	__u32 i;

	for (i = 0; i < ESA_LEARN_PORT_BUDGET; i++)
		ASSERT_EQ(XDP_REDIRECT, send_from(self, i));
	ASSERT_EQ(0, learned(0, &n));
	EXPECT_EQ(1000, n.learned_s);
	ASSERT_EQ(0, set_clock_s(1000 + ESA_LEARN_AGE_S - 1));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 0));
	ASSERT_EQ(0, learned(0, &n));
	EXPECT_EQ(1000, n.learned_s) TH_LOG("rewritten before its age");
	/*
	 * A new host first: its write voids the learning memo, which would
	 * otherwise skip host 0's lookup (dataplane.rst, "The learning memo")
	 */
	ASSERT_EQ(0, set_clock_s(1000 + ESA_LEARN_AGE_S));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 10000));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 0));
	ASSERT_EQ(0, learned(0, &n));
	EXPECT_EQ(1000 + ESA_LEARN_AGE_S, n.learned_s);
	/* the rest of the new window's budget spent by new hosts */
	for (i = 1; i < ESA_LEARN_PORT_BUDGET - 1; i++)
		ASSERT_EQ(XDP_REDIRECT, send_from(self, 10000 + i));
	ASSERT_EQ(0, learned(1, &n));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 1));
	EXPECT_NE(0, learned(1, &n)) TH_LOG("an aged entry kept over budget");
}

/*
 * A job's members are bound in esa_neigh, which learning never writes:
 * hosts sending from thousands of addresses over many windows (the
 * learned tables full, their least recently used entries evicted) leave
 * every binding in place, and a new job's members are bound after it.
 */
TEST_F(learn, bindings_survive_floods_new_jobs_still_bound)
{
	struct esa_rules_err err = {};
	struct esa_job_info job;
	struct esa_neigh n;
	__be32 a;
	__u32 i, w;

	dp_job(&job, 1, 3, 1, 0, 0);
	job.worker_ifindex[0] = 7;
	ASSERT_EQ(0, esa_switch_commit(g_sw, NULL, &job, 0, &err)) TH_LOG("%s", err.msg);
	for (w = 0; w < 10; w++) {
		ASSERT_EQ(0, set_clock_s(1000 + w * ESA_LEARN_AGE_S));
		for (i = 0; i < ESA_LEARN_PORT_BUDGET; i++)
			ASSERT_EQ(XDP_REDIRECT, send_from(self, w * 1000 + i));
	}
	/* full: the LRU evicted (it frees a batch at a time) */
	i = entries("esa_learned", 4, 0);
	EXPECT_GT(i, ESA_LEARNED_ENTRIES - ESA_LEARN_PORT_BUDGET);
	EXPECT_LT(i, 10 * ESA_LEARN_PORT_BUDGET);
	dp_job(&job, 2, ESA_MAX_WORKERS, 5, 0, 0);
	ASSERT_EQ(0, esa_switch_commit(g_sw, NULL, &job, 0, &err)) TH_LOG("%s", err.msg);
	a = htonl(DP_WORKER_ADDR(1, 0));
	ASSERT_EQ(0, bpf_map_lookup_elem(esa_switch_map_fd(g_sw, "esa_neigh"), &a, &n));
	EXPECT_EQ(7, n.ifindex);
	EXPECT_EQ(1, n.bound_job);
	EXPECT_EQ(4 + 1 + ESA_MAX_WORKERS, entries("esa_neigh", 4, 0));
}

/*
 * A binding table full of members' addresses: the job that does not fit
 * is refused whole, and the error names the table and why.
 */
TEST_F(learn, full_binding_table_named_in_the_error)
{
	struct esa_rules_err err = {};
	struct esa_job_info job;
	__u32 j, fits = ESA_NEIGH_ENTRIES / (ESA_MAX_WORKERS + 1);
	int ret;

	for (j = 1; j <= fits; j++) {
		dp_job(&job, j, ESA_MAX_WORKERS, 1, 0, 0);
		ASSERT_EQ(0, esa_switch_commit(g_sw, NULL, &job, 0, &err))
			TH_LOG("job %u: %s", j, err.msg);
	}
	dp_job(&job, j, ESA_MAX_WORKERS, 1, 0, 0);
	ret = esa_switch_commit(g_sw, NULL, &job, 0, &err);
	EXPECT_EQ(-E2BIG, ret);
	ASSERT_NE(NULL, err.msg);
	EXPECT_NE(NULL, strstr(err.msg, "esa_neigh")) TH_LOG("%s", err.msg);
	EXPECT_NE(NULL, strstr(err.msg, "is full")) TH_LOG("%s", err.msg);
	EXPECT_NE(0, esa_switch_job_get(g_sw, j, &job)) TH_LOG("job %u kept", j);
	EXPECT_EQ(fits * (ESA_MAX_WORKERS + 1), entries("esa_neigh", 4, 0));
}

/*
 * The learning memo is per CPU: these tests run on one CPU (the last one
 * on two), so that the memo a frame leaves is the one the next frame
 * finds. Each has a writer of the learning change a table behind a memo;
 * a writer that did not bump the generation would leave the memo
 * standing, and the memoised frame would teach nothing.
 *
 * Written: host 0, memoised on lo, is learned on another port; back on
 * lo, it is learned on lo again.
 */
TEST_F(learn, memo_void_after_learned_entry_written)
{
	__u32 other;

	ASSERT_EQ(0, run_on_cpu(sched_getcpu()));
	other = second_port();
	ASSERT_NE(0, other);
	memoise_host0(_metadata, self);
	ASSERT_EQ(XDP_REDIRECT, send_from_on(self, 0, other));
	ASSERT_EQ(other, learned_port(0));
	ASSERT_EQ(other, fdb_port(0));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 0));
	EXPECT_EQ(1, learned_port(0)) TH_LOG("a memo hit kept the old entry");
	EXPECT_EQ(1, fdb_port(0)) TH_LOG("a memo hit kept the old entry");
}

/*
 * Deleted: a port whose budget is spent drops the entries of a host that
 * moves to it. Host 0, memoised on lo, sends on such a port and is
 * dropped from both tables; back on lo, it is learned on lo again.
 */
TEST_F(learn, memo_void_after_learned_entry_deleted)
{
	__u32 other, i;

	ASSERT_EQ(0, run_on_cpu(sched_getcpu()));
	other = second_port();
	ASSERT_NE(0, other);
	for (i = 0; i < ESA_LEARN_PORT_BUDGET; i++)
		ASSERT_EQ(XDP_REDIRECT, send_from_on(self, 10000 + i, other));
	memoise_host0(_metadata, self);
	ASSERT_EQ(XDP_REDIRECT, send_from_on(self, 0, other));
	ASSERT_EQ(0, learned_port(0));
	ASSERT_EQ(0, fdb_port(0));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 0));
	EXPECT_EQ(1, learned_port(0)) TH_LOG("a memo hit left it unlearned");
	EXPECT_EQ(1, fdb_port(0)) TH_LOG("a memo hit left it unlearned");
}

/*
 * A member's MAC: host 0, bound to lo and memoised on this CPU with its
 * MAC, sends with host 1's MAC from another CPU (its binding takes that
 * MAC), then with its own again here: the binding takes its own MAC back.
 * Host 1's MAC is learned on lo first, so that only the binding changes;
 * it comes from the other CPU, as a frame of the memoised port and
 * address on this one would take the memo's way over.
 */
TEST_F(learn, memo_void_after_member_mac_written)
{
	struct esa_neigh n = { .ifindex = 1, .bound_job = 1 };
	int cpu = sched_getcpu(), cpu2 = -1, i;
	__be32 a = htonl(FLOOD_ADDR(0));
	cpu_set_t set;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (i = 0; i < CPU_SETSIZE && cpu2 < 0; i++)
		if (i != cpu && CPU_ISSET(i, &set))
			cpu2 = i;
	if (cpu2 < 0)
		SKIP(return, "one CPU: the other MAC must come from another");
	ASSERT_EQ(0, bpf_map_update_elem(esa_switch_map_fd(g_sw, "esa_neigh"),
					 &a, &n, 0));
	ASSERT_EQ(0, esa_switch_learned_changed(g_sw));
	ASSERT_EQ(0, run_on_cpu(cpu));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 1));
	ASSERT_EQ(1, fdb_port(1));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 0));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 0));
	ASSERT_EQ(0, run_on_cpu(cpu2));
	self->in.buf[11] ^= 1;
	ASSERT_EQ(XDP_REDIRECT, dp_run(g_sw, &self->in, &self->out));
	ASSERT_EQ(0, bpf_map_lookup_elem(esa_switch_map_fd(g_sw, "esa_neigh"),
					 &a, &n));
	ASSERT_EQ(1, n.mac[5]);
	ASSERT_EQ(0, run_on_cpu(cpu));
	ASSERT_EQ(XDP_REDIRECT, send_from(self, 0));
	ASSERT_EQ(0, bpf_map_lookup_elem(esa_switch_map_fd(g_sw, "esa_neigh"),
					 &a, &n));
	EXPECT_EQ(0, n.mac[5]) TH_LOG("a memo hit kept the other MAC");
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .agg_capacity = DP_SLOTS,
				     .virtual_clock = true };

	if (dp_load_or_fail(&g_sw, &o))
		return 1;
	return test_harness_run(argc, argv);
}
