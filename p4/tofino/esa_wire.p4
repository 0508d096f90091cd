/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ESA wire protocol in P4_16: the header and constants of
 * uapi/esa_wire.h, which stays their one definition. This file mirrors it
 * field for field and value for value; selftests/tofino/test_header_layout.py
 * parses both and fails on any difference (order, width, offset, value).
 * Documentation/wire-protocol.rst describes the protocol.
 */
#ifndef _ESA_WIRE_P4_
#define _ESA_WIRE_P4_

const bit<16> ESA_UDP_PORT      = 47000;
const bit<8>  ESA_WIRE_VERSION  = 1;
const bit<16> ESA_MTU           = 1500;
const bit<16> ESA_MIN_VALUES    = 64;
const bit<16> ESA_MAX_VALUES    = 363;
const bit<8>  ESA_MAX_WORKERS   = 32;
const bit<16> ESA_MAX_JOB_ID    = 1023;
const bit<8>  ESA_MAX_PRIORITY  = 255;

/* enum esa_flags */
const bit<8>  ESA_F_RESEND      = 0x01;
const bit<8>  ESA_F_COLLISION   = 0x02;
const bit<8>  ESA_F_PREEMPTED   = 0x04;
const bit<8>  ESA_F_RESULT      = 0x08;
const bit<8>  ESA_F_ECN         = 0x10;
const bit<8>  ESA_F_OVERFLOW    = 0x20;
const bit<8>  ESA_F_COMPLETE    = 0x40;
const bit<8>  ESA_F_PARTIAL     = 0x80;
const bit<8>  ESA_F_ALL         = 0xff;

/* struct esa_hdr: 20 bytes, network byte order. */
header esa_h {
    bit<8>  version;        /* ESA_WIRE_VERSION */
    bit<8>  flags;          /* ESA_F_* */
    bit<8>  fan_in;         /* workers in the job, 1..ESA_MAX_WORKERS */
    bit<8>  priority;       /* sender's job priority */
    bit<16> job_id;         /* 1..ESA_MAX_JOB_ID */
    bit<16> value_count;    /* values after the header */
    bit<32> seq;            /* packet sequence within the job */
    bit<32> agg_index;      /* aggregator slot chosen by the worker */
    bit<32> worker_bitmap;  /* data: sender's bit; partial/result: bits summed */
}

const bit<16> ESA_HDR_LEN = 20;

/*
 * Wire version 2 carries a job's token after the values (uapi/
 * esa_wire.h). This program's jobs have none: it takes version 1 only.
 */
const bit<8>  ESA_WIRE_VERSION_TOKEN = 2;
const bit<16> ESA_TOKEN_LEN          = 8;

#endif /* _ESA_WIRE_P4_ */
