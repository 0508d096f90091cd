// SPDX-License-Identifier: GPL-2.0
/*
 * lib/esa_rules.c on its own, as every flavour builds it: job and settings
 * checks with the field each refusal concerns, the static layout, the
 * arbitration rule, the least-attained-service priority, its unit (bytes
 * of a job's tensor, whatever the job's width) and its aging.
 */
#include <arpa/inet.h>
#include <string.h>
#include "kselftest_harness.h"
#include "esa_rules.h"

/* Job 3: two workers, PS 10.9.0.1:47000, priority auto, no quota. */
static void job(struct esa_job_info *j)
{
	memset(j, 0, sizeof(*j));
	j->job_id = 3;
	j->fan_in = 2;
	j->prio_mode = ESA_PRIO_DYNAMIC;
	j->ps_addr = htonl(0x0a090001);
	j->ps_port = htons(ESA_UDP_PORT);
	j->worker_addr[0] = htonl(0x0a090002);
	j->worker_addr[1] = htonl(0x0a090003);
	j->worker_port[0] = j->worker_port[1] = htons(47001);
}

/* The check refuses @job_ with @msg_ about @field_ (worker @index_). */
#define EXPECT_REFUSED(job_, ret_, msg_, field_, index_) do {		\
	struct esa_rules_err e_ = {};					\
	EXPECT_EQ(ret_, esa_rules_check_job(job_, &e_));		\
	EXPECT_STREQ(msg_, e_.msg);					\
	EXPECT_EQ(field_, e_.field);					\
	EXPECT_EQ(index_, e_.index);					\
} while (0)

TEST(a_valid_job_passes)
{
	struct esa_job_info j;

	job(&j);
	EXPECT_EQ(0, esa_rules_check_job(&j, NULL));
	j.prio_mode = ESA_PRIO_FIXED;
	j.priority = 255;
	j.quota = 1 << 20;	/* ESA_MAX_AGGREGATORS, as the docs say it */
	j.agg_base = (1 << 20) - 1;
	j.agg_slice = 1;
	EXPECT_EQ(0, esa_rules_check_job(&j, NULL));
}

TEST(job_refusals_name_their_field)
{
	struct esa_job_info j;

	job(&j);
	j.job_id = 0;
	EXPECT_REFUSED(&j, -ERANGE, "job id out of 1..1023", ESA_RULES_F_JOB_ID, 0);
	j.job_id = ESA_MAX_JOB_ID + 1;
	EXPECT_REFUSED(&j, -ERANGE, "job id out of 1..1023", ESA_RULES_F_JOB_ID, 0);
	job(&j);
	j.fan_in = 0;
	EXPECT_REFUSED(&j, -ERANGE, "fan-in out of 1..32", ESA_RULES_F_FAN_IN, 0);
	j.fan_in = ESA_MAX_WORKERS + 1;
	EXPECT_REFUSED(&j, -ERANGE, "fan-in out of 1..32", ESA_RULES_F_FAN_IN, 0);
	job(&j);
	j.worker_addr[1] = htonl(0xe0000001);		/* 224.0.0.1 */
	EXPECT_REFUSED(&j, -EINVAL, "worker address is not a unicast IPv4 address",
		       ESA_RULES_F_WORKER_ADDR, 1);
	j.worker_addr[1] = htonl(0xffffffff);
	EXPECT_REFUSED(&j, -EINVAL, "worker address is not a unicast IPv4 address",
		       ESA_RULES_F_WORKER_ADDR, 1);
	j.worker_addr[1] = htonl(0x00000005);		/* 0.0.0.5 */
	EXPECT_REFUSED(&j, -EINVAL, "worker address is not a unicast IPv4 address",
		       ESA_RULES_F_WORKER_ADDR, 1);
	job(&j);
	j.worker_port[1] = 0;
	EXPECT_REFUSED(&j, -EINVAL, "worker port is 0", ESA_RULES_F_WORKER_PORT, 1);
	job(&j);
	j.worker_addr[1] = j.worker_addr[0];
	EXPECT_REFUSED(&j, -EINVAL, "duplicate worker address and port",
		       ESA_RULES_F_WORKER, 1);
	j.worker_port[1] = htons(47002);		/* another port: fine */
	EXPECT_EQ(0, esa_rules_check_job(&j, NULL));
	job(&j);
	j.ps_addr = 0;
	EXPECT_REFUSED(&j, -EINVAL, "PS address is not a unicast IPv4 address",
		       ESA_RULES_F_PS_ADDR, 0);
	job(&j);
	j.ps_port = 0;
	EXPECT_REFUSED(&j, -EINVAL, "PS port is 0", ESA_RULES_F_PS_PORT, 0);
	/* Any other port than the switch's: the PS would never be reached. */
	j.ps_port = htons(47001);
	EXPECT_REFUSED(&j, -EINVAL,
		       "PS port is not 47000: the switch takes only aggregation packets to that port, a PS elsewhere is bypassed",
		       ESA_RULES_F_PS_PORT, 0);
	j.ps_port = htons(ESA_UDP_PORT >> 8 | (ESA_UDP_PORT & 0xff) << 8);
	EXPECT_REFUSED(&j, -EINVAL,
		       "PS port is not 47000: the switch takes only aggregation packets to that port, a PS elsewhere is bypassed",
		       ESA_RULES_F_PS_PORT, 0);
	job(&j);
	j.prio_mode = 2;
	EXPECT_REFUSED(&j, -EINVAL, "unknown priority mode", ESA_RULES_F_PRIORITY, 0);
	job(&j);
	j.quota = (1 << 20) + 1;
	EXPECT_REFUSED(&j, -ERANGE, "quota above ESA_MAX_AGGREGATORS (1048576)",
		       ESA_RULES_F_QUOTA, 0);
	job(&j);
	j.agg_base = (1 << 20) - 1;
	j.agg_slice = 2;
	EXPECT_REFUSED(&j, -ERANGE, "static slice beyond the aggregator array",
		       ESA_RULES_F_SLICE, 0);
	/* base + slice computed in 32 bits would wrap to 16 and pass */
	j.agg_base = 0xfffffff0u;
	j.agg_slice = 0x20;
	EXPECT_REFUSED(&j, -ERANGE, "static slice beyond the aggregator array",
		       ESA_RULES_F_SLICE, 0);
	/* only the workers below fan_in count */
	job(&j);
	j.worker_addr[5] = htonl(0xe0000001);
	EXPECT_EQ(0, esa_rules_check_job(&j, NULL));
}

TEST(config_checks)
{
	struct esa_switch_config c = { .policy = ESA_POLICY_STATIC,
				       .agg_slots = 1, .agg_timeout_us = 0 };
	struct esa_rules_err e = {};

	EXPECT_EQ(0, esa_rules_check_config(&c, &e));	/* 0: no reclaim */
	c.agg_timeout_us = ESA_TIMEOUT_US_MAX;		/* the edges are in */
	EXPECT_EQ(0, esa_rules_check_config(&c, &e));
	c.agg_timeout_us = ESA_TIMEOUT_US_MAX + 1;
	EXPECT_EQ(-ERANGE, esa_rules_check_config(&c, &e));
	EXPECT_EQ(ESA_RULES_F_TIMEOUT, e.field);
	c.agg_timeout_us = ESA_TIMEOUT_US_DEFAULT;
	c.agg_slots = 0;
	EXPECT_EQ(-ERANGE, esa_rules_check_config(&c, &e));
	EXPECT_EQ(ESA_RULES_F_AGG_SLOTS, e.field);
	c.agg_slots = (1 << 20) + 1;
	EXPECT_EQ(-ERANGE, esa_rules_check_config(&c, &e));
	EXPECT_STREQ("slots out of 1..1048576", e.msg);
	c.agg_slots = 1 << 20;
	EXPECT_EQ(0, esa_rules_check_config(&c, &e));
	c.policy = __ESA_POLICY_MAX;
	EXPECT_EQ(-EINVAL, esa_rules_check_config(&c, &e));
	EXPECT_EQ(ESA_RULES_F_POLICY, e.field);
}

TEST(static_layout)
{
	struct esa_rules_slice s[4] = {
		{ .quota = 10 }, { .quota = 0 }, { .quota = 5 }, { .quota = 0 },
	};
	__u32 need = 0;

	/* 100 slots: 10 and 5 fixed, the two others share 85 (43 + 42) */
	ASSERT_EQ(0, esa_rules_layout(ESA_POLICY_STATIC, 100, s, 4, &need));
	EXPECT_EQ(0, s[0].base);
	EXPECT_EQ(10, s[0].slice);
	EXPECT_EQ(10, s[1].base);
	EXPECT_EQ(43, s[1].slice);
	EXPECT_EQ(53, s[2].base);
	EXPECT_EQ(5, s[2].slice);
	EXPECT_EQ(58, s[3].base);
	EXPECT_EQ(42, s[3].slice);
	/* the quotas plus one slot per job without one: 17 */
	EXPECT_EQ(0, esa_rules_layout(ESA_POLICY_STATIC, 17, s, 4, &need));
	EXPECT_EQ(1, s[1].slice);
	EXPECT_EQ(1, s[3].slice);
	EXPECT_EQ(-ENOSPC, esa_rules_layout(ESA_POLICY_STATIC, 16, s, 4, &need));
	EXPECT_EQ(17, need);
	/* untouched by the refusal */
	EXPECT_EQ(16, s[3].base);
	/* no slices outside static */
	EXPECT_EQ(0, esa_rules_layout(ESA_POLICY_ESA, 16, s, 4, &need));
	EXPECT_EQ(0, s[1].base);
	EXPECT_EQ(0, s[1].slice);
	EXPECT_EQ(0, esa_rules_layout(ESA_POLICY_STATIC, 1, s, 0, &need));
}

TEST(arbitration)
{
	struct esa_rules_arb a = {
		.policy = ESA_POLICY_ESA, .job_id = 1, .owner_id = 2,
		.prio = 5, .owner_prio = 4,
	};

	EXPECT_EQ(ESA_ARB_PREEMPT, esa_rules_arbitrate(&a));
	a.prio = 4;					/* equal: no */
	EXPECT_EQ(ESA_ARB_COLLIDE, esa_rules_arbitrate(&a));
	a.owner_gone = 1;				/* deleted holder */
	EXPECT_EQ(ESA_ARB_PREEMPT, esa_rules_arbitrate(&a));
	a.quota = 3;
	a.occupancy = 3;				/* at its quota */
	EXPECT_EQ(ESA_ARB_COLLIDE, esa_rules_arbitrate(&a));
	a.occupancy = 2;
	EXPECT_EQ(ESA_ARB_PREEMPT, esa_rules_arbitrate(&a));
	a.owner_id = 1;					/* itself */
	EXPECT_EQ(ESA_ARB_COLLIDE, esa_rules_arbitrate(&a));
	a.owner_id = 2;
	a.policy = ESA_POLICY_ATP;
	EXPECT_EQ(ESA_ARB_COLLIDE, esa_rules_arbitrate(&a));
	a.policy = ESA_POLICY_STATIC;
	EXPECT_EQ(ESA_ARB_COLLIDE, esa_rules_arbitrate(&a));
}

TEST(least_attained_service)
{
	EXPECT_EQ(255, esa_rules_las_priority(0));
	EXPECT_EQ(251, esa_rules_las_priority(1));
	EXPECT_EQ(247, esa_rules_las_priority(2));
	EXPECT_EQ(247, esa_rules_las_priority(3));
	EXPECT_EQ(255 - 4 * 20, esa_rules_las_priority(1 << 19));
	EXPECT_EQ(3, esa_rules_las_priority(1ULL << 62));
	EXPECT_EQ(0, esa_rules_las_priority(1ULL << 63));
	EXPECT_EQ(0, esa_rules_las_priority(~0ULL));
	EXPECT_EQ(0, esa_rules_fls64(0));
	EXPECT_EQ(64, esa_rules_fls64(~0ULL));
	/* aging halves, rounding the part taken up, down to 0 */
	EXPECT_EQ(500, esa_rules_age(1000));
	EXPECT_EQ(500, esa_rules_age(1001));
	EXPECT_EQ(0, esa_rules_age(1));
	EXPECT_EQ(0, esa_rules_age(0));
}

/*
 * A job's service is in bytes of its tensor: the value bytes every worker's
 * packets added, over the fan-in (what a 4-worker job adds for one
 * sequence a 32-worker job adds 8 times over).
 */
TEST(las_service_is_per_job)
{
	EXPECT_EQ(1024, esa_rules_las_service(4 * 1024, 4));
	EXPECT_EQ(1024, esa_rules_las_service(32 * 1024, 32));
	EXPECT_EQ(1024, esa_rules_las_service(1024, 1));
	EXPECT_EQ(1024, esa_rules_las_service(1024, 0));
	/* summed, then divided: 3 workers' 100-byte packets are 100 bytes */
	EXPECT_EQ(100, esa_rules_las_service(3 * 100, 3));
}

/*
 * Two jobs with the same tensor, 4 and 32 workers, served alike (each
 * round every worker of each adds one call of 1000 values in 64-value
 * packets: 15 of 256 bytes, one of 160), aged every 4th round as the
 * module's work ages service: at every point their priorities are equal.
 */
TEST(equal_tensors_rank_equal_whatever_the_width)
{
	const __u32 fan_in[2] = { 4, 32 };
	__u64 attained[2] = { 0, 0 };
	__u8 prio[2];
	unsigned int round, p, j;

	for (round = 1; round <= 64; round++) {
		for (j = 0; j < 2; j++) {
			for (p = 0; p < 16; p++)
				attained[j] += (__u64)fan_in[j] *
					       (p < 15 ? 256 : 160);
			if (round % 4 == 0)
				attained[j] = esa_rules_age(attained[j]);
			prio[j] = esa_rules_las_priority(
				esa_rules_las_service(attained[j], fan_in[j]));
		}
		EXPECT_EQ(prio[0], prio[1]) {
			TH_LOG("round %u: 4 workers %u, 32 workers %u", round,
			       prio[0], prio[1]);
		}
	}
	/* and they were served: both left the top priority */
	EXPECT_GT(ESA_MAX_PRIORITY, prio[0]);
}

TEST_HARNESS_MAIN
