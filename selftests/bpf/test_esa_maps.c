// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane loader (tools/lib/dp): loading, pinning and re-opening,
 * config and job records with their errors, module-less commits laid out
 * by the rules, counters, aggregator reads, port attach, the virtual
 * clock option.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kselftest_harness.h"
#include "dp_util.h"
#include "../lib/topo.h"

static struct esa_switch *g_sw;

/*
 * No capacity given: 65536 aggregators (~100 MB), not the maximum 1 << 20
 * (~1.6 GB of kernel memory nobody should get unasked).
 */
TEST(load_default_capacity)
{
	struct esa_switch *sw = NULL;

	EXPECT_EQ(65536, esa_switch_opts_capacity(NULL));
	ASSERT_EQ(0, esa_switch_load(&sw, NULL));
	EXPECT_EQ(65536, esa_switch_agg_capacity(sw));	/* the kernel's map */
	esa_switch_close(sw);
	EXPECT_EQ(1 << 20, esa_switch_agg_bytes(1 << 20) /
			   esa_switch_agg_bytes(1));
}

/* A load the kernel had no memory for names the array and its size. */
TEST(load_error_names_the_array)
{
	struct esa_switch_opts o = { .agg_capacity = 1 << 20 };
	char msg[160], want[160];

	snprintf(want, sizeof(want),
		 "cannot allocate 1048576 aggregators (%llu MiB of kernel memory): Cannot allocate memory",
		 (unsigned long long)(esa_switch_agg_bytes(1 << 20) >> 20));
	EXPECT_STREQ(want, esa_switch_load_strerror(-ENOMEM, &o, msg, sizeof(msg)));
	EXPECT_LE(1500, esa_switch_agg_bytes(1 << 20) >> 20);	/* ~1.6 GB */
	EXPECT_STREQ("Invalid argument",
		     esa_switch_load_strerror(-EINVAL, &o, msg, sizeof(msg)));
}

TEST(load_rejects_bad_options)
{
	struct esa_switch_opts o = { .agg_capacity = (1 << 20) + 1 };
	struct esa_switch *sw = NULL;

	EXPECT_EQ(-EINVAL, esa_switch_load(&sw, &o));
	o.agg_capacity = 8;
	o.flavour = 7;
	EXPECT_EQ(-EINVAL, esa_switch_load(&sw, &o));
	EXPECT_EQ(NULL, sw);
}

TEST(config_checked)
{
	struct esa_switch_config c = { .policy = ESA_POLICY_STATIC,
				       .agg_slots = 32, .agg_timeout_us = 5 };
	struct esa_switch_config back;

	ASSERT_TRUE(esa_switch_has_job_maps(g_sw));
	ASSERT_EQ(0, esa_switch_set_config(g_sw, &c));
	ASSERT_EQ(0, esa_switch_get_config(g_sw, &back));
	EXPECT_EQ(0, memcmp(&c, &back, sizeof(c)));
	c.policy = __ESA_POLICY_MAX;
	EXPECT_EQ(-EINVAL, esa_switch_set_config(g_sw, &c));
	c.policy = ESA_POLICY_ESA;
	c.agg_slots = DP_SLOTS + 1;	/* beyond the loaded capacity */
	EXPECT_EQ(-EINVAL, esa_switch_set_config(g_sw, &c));
}

TEST(job_records_checked)
{
	struct esa_job_info j, back;

	dp_job(&j, 5, 4, 3, 0, 0);
	ASSERT_EQ(0, esa_switch_job_put(g_sw, &j));
	ASSERT_EQ(0, esa_switch_job_get(g_sw, 5, &back));
	/* the incarnation is the control plane's to give, never 0 */
	EXPECT_NE(0, back.incarnation);
	j.incarnation = back.incarnation;
	EXPECT_EQ(0, memcmp(&j, &back, sizeof(j)));
	ASSERT_EQ(0, esa_switch_job_del(g_sw, 5));
	EXPECT_EQ(-ENOENT, esa_switch_job_get(g_sw, 5, &back));
	EXPECT_EQ(-ENOENT, esa_switch_job_del(g_sw, 5));

	/* what lib/esa_rules.c refuses never reaches the map */
	j.job_id = 0;
	EXPECT_EQ(-EINVAL, esa_switch_job_put(g_sw, &j));
	j.job_id = 5;
	j.worker_port[2] = j.worker_port[1];
	j.worker_addr[2] = j.worker_addr[1];
	EXPECT_EQ(-EINVAL, esa_switch_job_put(g_sw, &j));
	EXPECT_EQ(-ENOENT, esa_switch_job_get(g_sw, 5, &back));
}

/* Job @id of @fan_in workers with @quota, priority auto, no slice yet. */
static void quota_job(struct esa_job_info *j, __u32 id, __u32 quota)
{
	dp_job(j, id, 2, 0, 0, 0);
	j->prio_mode = ESA_PRIO_DYNAMIC;
	j->quota = quota;
}

static void expect_slice(struct __test_metadata *_metadata, __u32 id,
			 __u32 base, __u32 slice)
{
	struct esa_job_info back;

	ASSERT_EQ(0, esa_switch_job_get(g_sw, id, &back));
	EXPECT_EQ(base, back.agg_base);
	EXPECT_EQ(slice, back.agg_slice);
}

/*
 * esa_switch_commit() lays out the static slices as the module does: a
 * job without a quota shares what the quotas leave (it used to get a
 * slice of 0 here, so every packet of it was out of range), a deletion
 * lets the others grow, and a change that does not fit changes nothing.
 */
TEST(commit_lays_out_like_the_module)
{
	struct esa_switch_config c = { .policy = ESA_POLICY_STATIC,
				       .agg_slots = 20 };
	struct esa_rules_err e = {};
	struct esa_job_info j, back;

	ASSERT_EQ(0, dp_reset(g_sw, ESA_POLICY_ESA, DP_SLOTS, 0));
	quota_job(&j, 1, 8);
	ASSERT_EQ(0, esa_switch_commit(g_sw, NULL, &j, 0, &e));
	quota_job(&j, 2, 0);
	ASSERT_EQ(0, esa_switch_commit(g_sw, NULL, &j, 0, &e));
	quota_job(&j, 3, 0);
	ASSERT_EQ(0, esa_switch_commit(g_sw, NULL, &j, 0, &e));
	/* no slices outside static */
	expect_slice(_metadata, 2, 0, 0);
	ASSERT_EQ(0, esa_switch_commit(g_sw, &c, NULL, 0, &e));
	expect_slice(_metadata, 1, 0, 8);
	expect_slice(_metadata, 2, 8, 6);
	expect_slice(_metadata, 3, 14, 6);
	ASSERT_EQ(0, esa_switch_commit(g_sw, NULL, NULL, 1, &e));
	EXPECT_EQ(-ENOENT, esa_switch_job_get(g_sw, 1, &back));
	expect_slice(_metadata, 2, 0, 10);
	expect_slice(_metadata, 3, 10, 10);
	EXPECT_EQ(-ENOENT, esa_switch_commit(g_sw, NULL, NULL, 1, &e));
	EXPECT_STREQ("no such job", e.msg);

	/* 20 for job 2 and one slot for job 3 do not fit 20 slots */
	quota_job(&j, 2, 20);
	EXPECT_EQ(-ENOSPC, esa_switch_commit(g_sw, NULL, &j, 0, &e));
	expect_slice(_metadata, 2, 0, 10);
	c.agg_slots = 1;
	EXPECT_EQ(-ENOSPC, esa_switch_commit(g_sw, &c, NULL, 0, &e));
	ASSERT_EQ(0, esa_switch_get_config(g_sw, &c));
	EXPECT_EQ(20, c.agg_slots);

	/* the rules' refusals, with their reason */
	quota_job(&j, 4, 0);
	j.worker_addr[1] = j.worker_addr[0];
	j.worker_port[1] = j.worker_port[0];
	EXPECT_EQ(-EINVAL, esa_switch_commit(g_sw, NULL, &j, 0, &e));
	EXPECT_STREQ("duplicate worker address and port", e.msg);
	EXPECT_EQ(ESA_RULES_F_WORKER, e.field);
	EXPECT_EQ(1, e.index);
	EXPECT_EQ(-ENOENT, esa_switch_job_get(g_sw, 4, &back));
	c.agg_slots = DP_SLOTS + 1;
	EXPECT_EQ(-ERANGE, esa_switch_commit(g_sw, &c, NULL, 0, &e));
	EXPECT_EQ(ESA_RULES_F_AGG_SLOTS, e.field);
	ASSERT_EQ(0, dp_reset(g_sw, ESA_POLICY_ESA, DP_SLOTS, 0));
}
/*
 * A change keeps the job's incarnation, whatever the record asks; a job
 * added again under a deleted job's id gets a new one.
 */
TEST(job_incarnations)
{
	struct esa_job_info j, back;
	__u32 first;

	dp_job(&j, 6, 2, 1, 0, 0);
	ASSERT_EQ(0, esa_switch_job_put(g_sw, &j));
	ASSERT_EQ(0, esa_switch_job_get(g_sw, 6, &back));
	first = back.incarnation;
	j.priority = 9;
	j.incarnation = first + 5;
	ASSERT_EQ(0, esa_switch_job_put(g_sw, &j));
	ASSERT_EQ(0, esa_switch_job_get(g_sw, 6, &back));
	EXPECT_EQ(first, back.incarnation);
	EXPECT_EQ(9, back.priority);
	ASSERT_EQ(0, esa_switch_job_del(g_sw, 6));
	j.incarnation = first;
	ASSERT_EQ(0, esa_switch_job_put(g_sw, &j));
	ASSERT_EQ(0, esa_switch_job_get(g_sw, 6, &back));
	EXPECT_NE(0, back.incarnation);
	EXPECT_NE(first, back.incarnation);
	ASSERT_EQ(0, esa_switch_job_del(g_sw, 6));
}

TEST(counters_and_aggregators)
{
	__u64 c[__ESA_CNT_MAX];
	struct esa_agg a;
	unsigned int i;

	EXPECT_EQ(0, esa_switch_counters(g_sw, 0, c));
	EXPECT_EQ(0, esa_switch_counters(g_sw, ESA_MAX_JOB_ID, c));
	EXPECT_EQ(-EINVAL, esa_switch_counters(g_sw, ESA_MAX_JOB_ID + 1, c));
	EXPECT_EQ(0, esa_switch_agg_read(g_sw, DP_SLOTS - 1, &a));
	EXPECT_EQ(-ERANGE, esa_switch_agg_read(g_sw, DP_SLOTS, &a));
	for (i = 0; i < __ESA_CNT_MAX; i++)
		ASSERT_NE(NULL, esa_counter_name(i));
	EXPECT_STREQ("drop_port", esa_counter_name(ESA_CNT_DROP_PORT));
	EXPECT_EQ(NULL, esa_counter_name(__ESA_CNT_MAX));
}

/* Put a raw aggregator record into slot @k. */
static int put_agg(__u32 k, __u32 job, __u8 state)
{
	struct esa_agg a = { .job_id = job, .state = state, .seq = k };

	return bpf_map_update_elem(esa_switch_map_fd(g_sw, "esa_aggs"), &k,
				   &a, 0);
}

TEST(agg_owners)
{
	static __u32 per[ESA_MAX_JOB_ID + 1];

	ASSERT_EQ(0, esa_switch_agg_clear(g_sw, DP_SLOTS));
	ASSERT_EQ(0, put_agg(0, 3, ESA_AGG_PARTIAL));
	ASSERT_EQ(0, put_agg(1, 3, ESA_AGG_DONE));
	ASSERT_EQ(0, put_agg(10, 7, ESA_AGG_FREE));	/* free: not held */
	ASSERT_EQ(0, put_agg(20, ESA_MAX_JOB_ID + 5, ESA_AGG_PARTIAL));
	ASSERT_EQ(0, put_agg(DP_SLOTS - 1, 5, ESA_AGG_PARTIAL));
	EXPECT_EQ(0, esa_switch_agg_owners(g_sw, DP_SLOTS, per));
	EXPECT_EQ(2, per[3]);
	EXPECT_EQ(1, per[5]);
	EXPECT_EQ(0, per[7]);
	EXPECT_EQ(0, per[0]);
	/* only the slots in use count; past the capacity is clamped */
	EXPECT_EQ(0, esa_switch_agg_owners(g_sw, DP_SLOTS - 1, per));
	EXPECT_EQ(2, per[3]);
	EXPECT_EQ(0, per[5]);
	EXPECT_EQ(0, esa_switch_agg_owners(g_sw, 1, per));
	EXPECT_EQ(1, per[3]);
	EXPECT_EQ(0, esa_switch_agg_owners(g_sw, 100000, per));
	EXPECT_EQ(2, per[3]);
	EXPECT_EQ(1, per[5]);
	EXPECT_EQ(0, esa_switch_agg_owners(g_sw, 0, per));
	EXPECT_EQ(0, per[3]);
	EXPECT_EQ(0, esa_switch_agg_clear(g_sw, DP_SLOTS));
	EXPECT_EQ(0, esa_switch_agg_owners(g_sw, DP_SLOTS, per));
	EXPECT_EQ(0, per[3]);
}

TEST(pin_and_open_pinned)
{
	char dir[64];
	struct esa_switch *p;
	struct esa_job_info j, back;
	struct esa_agg a;

	snprintf(dir, sizeof(dir), "/sys/fs/bpf/esa-test-%d", getpid());
	EXPECT_EQ(-ENOENT, esa_switch_open_pinned(&p, dir));
	ASSERT_EQ(0, esa_switch_pin(g_sw, dir));
	ASSERT_EQ(0, esa_switch_open_pinned(&p, dir));
	dp_job(&j, 9, 2, 1, 0, 0);
	/* written through the pins, seen through the loader's fds */
	EXPECT_EQ(0, esa_switch_job_put(p, &j));
	EXPECT_EQ(0, esa_switch_job_get(g_sw, 9, &back));
	EXPECT_EQ(2, back.fan_in);
	EXPECT_TRUE(esa_switch_has_job_maps(p));
	/* the capacity is read back from the pinned map */
	EXPECT_EQ(-ERANGE, esa_switch_agg_read(p, DP_SLOTS, &a));
	EXPECT_EQ(0, esa_switch_agg_read(p, DP_SLOTS - 1, &a));
	esa_switch_close(p);
	EXPECT_EQ(0, esa_switch_unpin(dir));
	EXPECT_NE(0, access(dir, F_OK));
}

/*
 * A pin that fails half way takes back what it pinned: here the program
 * pins last and finds its name taken, so every map pinned before it must
 * be gone again (they used to stay, and the next attach then failed on
 * them).
 */
TEST(pin_fails_whole)
{
	char dir[64], path[96];
	struct esa_switch *p;
	int fd;

	snprintf(dir, sizeof(dir), "/sys/fs/bpf/esa-test-half-%d", getpid());
	ASSERT_EQ(0, mkdir(dir, 0700));
	snprintf(path, sizeof(path), "%s/esa_egress", dir);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bpf_obj_pin(fd, path));
	close(fd);
	EXPECT_GT(0, esa_switch_pin(g_sw, dir));
	snprintf(path, sizeof(path), "%s/esa_aggs", dir);
	EXPECT_NE(0, access(path, F_OK));
	snprintf(path, sizeof(path), "%s/esa_switch", dir);
	EXPECT_NE(0, access(path, F_OK));
	EXPECT_EQ(-ENOENT, esa_switch_open_pinned(&p, dir));
	snprintf(path, sizeof(path), "%s/esa_egress", dir);
	EXPECT_EQ(0, unlink(path));
	/* the directory was there before: it stays */
	EXPECT_EQ(0, rmdir(dir));
}

/*
 * The port: a veth in a network namespace of the test's own (the harness
 * runs each test in a child), gone with it.
 */
TEST(attach_detach_port)
{
	__u32 id = 0;
	int ifindex;

	if (unshare(CLONE_NEWNET) || topo_veth_add("esat0", "esat1"))
		SKIP(return, "cannot create a veth pair");
	ifindex = if_nametoindex("esat0");
	ASSERT_NE(0, ifindex);
	EXPECT_EQ(-EINVAL, esa_switch_attach_port(g_sw, 0, 0));
	EXPECT_EQ(0, esa_switch_attach_port(g_sw, ifindex, 0));
	EXPECT_EQ(0, bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, &id));
	EXPECT_NE(0, id);
	EXPECT_EQ(0, esa_switch_detach_port(g_sw, ifindex));
	id = 0;
	EXPECT_EQ(0, bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, &id));
	EXPECT_EQ(0, id);
}

/*
 * A packet of job 2 at slot 0, held by job 1 since time 0, with esa_clock
 * at @now: the flags of the frame it leaves as (0xff: none).
 */
static __u8 other_job_at(struct esa_switch *sw, volatile __u64 *clock,
			 __u64 now)
{
	static const __s32 v[4] = { 1, 2, 3, 4 };
	struct dp_frame in, out;
	struct dp_out o;
	struct dp_pkt p;

	*clock = now;
	dp_pkt_worker(&p, 2, 2, 0, 9, 0, v, 4);
	dp_build(&in, &p);
	if (dp_run(sw, &in, &out) == XDP_DROP || dp_parse(out.buf, out.len, &o))
		return 0xff;
	return o.h.flags;
}

#define CLOCK_MAP_LEN	4096	/* esa_clock's one u64, a page mapped */

/* @sw's esa_clock mapped for reading and writing, or MAP_FAILED. */
static volatile __u64 *map_clock(struct esa_switch *sw)
{
	int fd = esa_switch_map_fd(sw, "esa_clock");

	if (fd < 0)
		return MAP_FAILED;
	return mmap(NULL, CLOCK_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
}

/* Job 1 claims slot 0 with the clock at 0; jobs 1 and 2 are registered. */
static int claim_at_zero(struct esa_switch *sw, volatile __u64 *clock)
{
	static const __s32 v[4] = { 5, 6, 7, 8 };
	struct esa_job_info j;
	struct dp_frame in;
	struct dp_pkt p;

	if (dp_reset(sw, ESA_POLICY_ATP, 4, 1000000))	/* timeout 1 s */
		return -1;
	dp_job(&j, 1, 2, 0, 0, 0);
	if (esa_switch_job_put(sw, &j))
		return -1;
	dp_job(&j, 2, 2, 0, 0, 0);
	if (esa_switch_job_put(sw, &j))
		return -1;
	*clock = 0;
	dp_pkt_worker(&p, 1, 2, 0, 7, 0, v, 4);
	dp_build(&in, &p);
	return dp_run(sw, &in, NULL) == XDP_DROP ? 0 : -1;
}

/*
 * With virtual_clock the reclaim timeout runs on esa_clock: a slot
 * claimed at 0 is reclaimed (PARTIAL to its owner's PS) by a packet at
 * 1 s + 1 ns and not at 1 s. Without it esa_clock is ignored.
 */
TEST(virtual_clock)
{
	struct esa_switch_opts o = { .agg_capacity = DP_SLOTS,
				     .virtual_clock = true };
	struct esa_switch *sw = NULL;
	volatile __u64 *clock;

	ASSERT_EQ(0, esa_switch_load(&sw, &o));
	clock = map_clock(sw);
	ASSERT_NE(MAP_FAILED, clock);
	ASSERT_EQ(0, claim_at_zero(sw, clock));
	EXPECT_EQ(ESA_F_COLLISION, other_job_at(sw, clock, 1000000000ull));
	EXPECT_EQ(ESA_F_PARTIAL, other_job_at(sw, clock, 1000000001ull));
	munmap((void *)clock, CLOCK_MAP_LEN);
	esa_switch_close(sw);

	/* The normal load: real time (microseconds) is what counts. */
	clock = map_clock(g_sw);
	ASSERT_NE(MAP_FAILED, clock);
	ASSERT_EQ(0, claim_at_zero(g_sw, clock));
	EXPECT_EQ(ESA_F_COLLISION, other_job_at(g_sw, clock, 5000000000ull));
	munmap((void *)clock, CLOCK_MAP_LEN);
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .agg_capacity = DP_SLOTS };
	int err = esa_switch_load(&g_sw, &o);

	if (err) {
		printf("TAP version 13\n1..1\nnot ok 1 load: %s\n",
		       strerror(-err));
		return 1;
	}
	return test_harness_run(argc, argv);
}
