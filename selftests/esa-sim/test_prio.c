// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's control plane priorities (tools/esa-sim/prio.c): the
 * LAS priority follows the bytes the switch aggregated for a job (its
 * packet counter times the bytes per packet, only what grew since the
 * last tick), and aging halves the attained service as the module's work
 * does. test_sim.sh sees only whether a newcomer preempts, which the
 * priorities' order decides, not their values.
 */
#include "kselftest_harness.h"
#include "prio.h"
#include "esa_rules.h"

TEST(las_counts_bytes_of_new_packets)
{
	struct prio_las l = {};

	EXPECT_EQ(esa_rules_las_priority(0), prio_las_update(&l, 0, 1452, 1));
	/* 10 packets of 1452 bytes: 14520 bytes attained */
	EXPECT_EQ(esa_rules_las_priority(14520), prio_las_update(&l, 10, 1452, 1));
	EXPECT_EQ(14520, l.attained);
	/* the counter did not move: nothing more attained */
	EXPECT_EQ(esa_rules_las_priority(14520), prio_las_update(&l, 10, 1452, 1));
	EXPECT_EQ(14520, l.attained);
	/* 6 more packets */
	prio_las_update(&l, 16, 1452, 1);
	EXPECT_EQ(16 * 1452, l.attained);
	/* a counter that went back (a new data plane) adds nothing */
	prio_las_update(&l, 2, 1452, 1);
	EXPECT_EQ(16 * 1452, l.attained);
	prio_las_update(&l, 3, 1452, 1);
	EXPECT_EQ(17 * 1452, l.attained);
}

TEST(las_service_is_per_job_not_per_worker)
{
	struct prio_las l = {};

	/* 4 workers' packets of one sum: the job attained one packet's bytes */
	EXPECT_EQ(esa_rules_las_priority(1452), prio_las_update(&l, 4, 1452, 4));
	EXPECT_EQ(4 * 1452, l.attained);
}

TEST(aging_halves_attained)
{
	struct prio_las l = { .attained = 1001 };

	prio_las_age(&l);
	EXPECT_EQ(500, l.attained);
	prio_las_age(&l);
	EXPECT_EQ(250, l.attained);
	l.attained = 1;
	prio_las_age(&l);
	EXPECT_EQ(0, l.attained);
	EXPECT_EQ(255, prio_las_update(&l, 0, 4, 1));
}

TEST_HARNESS_MAIN
