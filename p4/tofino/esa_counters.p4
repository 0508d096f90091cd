/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counter ids of enum esa_counter (uapi/esa_switch.h, their one
 * definition), mirrored for the P4 program; test_header_layout.py checks
 * every name and value. A counter event of job j is counted at index
 * (j << ESA_CNT_SHIFT) | id of the ingress or egress event counters, so
 * the control plane (esa_tofino/stats.py) adds them up per job and
 * switch-wide exactly as aggctl prints the XDP data plane's.
 */
#ifndef _ESA_COUNTERS_P4_
#define _ESA_COUNTERS_P4_

typedef bit<5> esa_cnt_t;

const esa_cnt_t ESA_CNT_RX              = 0;
const esa_cnt_t ESA_CNT_AGGREGATED      = 1;
const esa_cnt_t ESA_CNT_COMPLETED       = 2;
const esa_cnt_t ESA_CNT_COLLISIONS      = 3;
const esa_cnt_t ESA_CNT_PREEMPTIONS     = 4;
const esa_cnt_t ESA_CNT_EVICTIONS       = 5;
const esa_cnt_t ESA_CNT_RESENDS         = 6;
const esa_cnt_t ESA_CNT_DUPLICATES      = 7;
const esa_cnt_t ESA_CNT_RESULTS         = 8;
const esa_cnt_t ESA_CNT_OVERFLOWS       = 9;
const esa_cnt_t ESA_CNT_FORWARDED       = 10;
const esa_cnt_t ESA_CNT_DROP_MALFORMED  = 11;
const esa_cnt_t ESA_CNT_DROP_TRUNCATED  = 12;
const esa_cnt_t ESA_CNT_DROP_UNKNOWN_JOB = 13;
const esa_cnt_t ESA_CNT_DROP_RANGE      = 14;
const esa_cnt_t ESA_CNT_DROP_PORT       = 15;
const esa_cnt_t ESA_CNT_PULLS           = 16;
const esa_cnt_t ESA_CNT_STRANDED        = 17;
const esa_cnt_t ESA_CNT_STRANDED_US     = 18;
const esa_cnt_t ESA_CNT_EARLY_PARTIALS  = 19;
const esa_cnt_t ESA_CNT_DROP_SPOOF      = 20;
/* the XDP switch's lock wait ran out; the pipeline has no lock to wait on */
const esa_cnt_t ESA_CNT_DROP_BUSY       = 21;
/* a job's token wrong or missing; this program's jobs have none */
const esa_cnt_t ESA_CNT_DROP_TOKEN      = 22;
/* one-armed ports (the XDP switch's); the pipeline has per-host ports only */
const esa_cnt_t ESA_CNT_DROP_MODE       = 23;
const esa_cnt_t ESA_CNT_DROP_NEXTHOP    = 24;

/* Index bits per job: 32 counter ids per job, 1024 job ids (0: no job). */
#define ESA_CNT_SHIFT 5
#define ESA_CNT_ENTRIES 32768

#endif /* _ESA_COUNTERS_P4_ */
