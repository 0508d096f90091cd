/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ingress: validation, the aggregator, and where each frame goes. The rules
 * are Documentation/wire-protocol.rst's; Documentation/tofino.rst maps each
 * one to the tables and register actions below, stage by stage, and lists
 * what this program does differently ("Subset").
 */
#ifndef _ESA_INGRESS_P4_
#define _ESA_INGRESS_P4_

/* Validation: every drop reason of the wire protocol, in its order. */
control EsaValidate(inout esa_headers_t hdr, inout esa_ig_meta_t md,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md)
{
    action set_config(bit<2> policy, bit<32> timeout, bit<32> partial_floor,
                      bit<32> hold) {
        md.policy = policy;
        md.timeout = timeout;
        md.partial_floor = partial_floor;
        md.hold = hold;
    }

    /* Switch-wide settings: the control plane sets the default action. */
    table esa_config {
        actions = { set_config; }
        size = 1;
    }

    action hdr_ok() { md.hdr_ok = 1; }

    /*
     * Version, flags allowed in (data: RESEND, ECN; a RESULT: OVERFLOW,
     * ECN, RESEND), value_count 1..363 and fan_in 1..32.
     */
    table esa_hdr_check {
        key = {
            hdr.esa.version     : exact;
            hdr.esa.flags       : ternary;
            hdr.esa.value_count : range;
            hdr.esa.fan_in      : range;
        }
        actions = { hdr_ok; NoAction; }
        const entries = {
            (ESA_WIRE_VERSION, 0x00 &&& (ESA_F_ALL ^ (ESA_F_RESEND | ESA_F_ECN)),
             1 .. ESA_MAX_VALUES, 1 .. ESA_MAX_WORKERS) : hdr_ok();
            (ESA_WIRE_VERSION, ESA_F_RESULT &&& (ESA_F_ALL ^ (ESA_F_OVERFLOW |
                ESA_F_ECN | ESA_F_RESEND)),
             1 .. ESA_MAX_VALUES, 1 .. ESA_MAX_WORKERS) : hdr_ok();
        }
        const default_action = NoAction();
        size = 2;
    }

    action set_job(bit<8> fan_in, bit<32> full, bit<32> base, bit<32> quota,
                   MulticastGroupId_t mgid) {
        md.job_known = 1;
        md.job_fan_in = fan_in;
        md.full = full;
        md.base = base;
        md.quota = quota;
        md.mgid = mgid;
    }

    /*
     * One entry per job. base/quota are the static slice under static and
     * 0/agg_slots otherwise, so one comparison checks the index either way.
     */
    table esa_job {
        key = { hdr.esa.job_id : exact; }
        actions = { set_job; NoAction; }
        const default_action = NoAction();
        size = 1024;
    }

    action one_bit() { md.one_bit = 1; }

#define ESA_BIT_ENTRY(i) (32w1 << i) : one_bit();
    /* worker_bitmap with exactly one bit set. */
    table esa_bit_index {
        key = { hdr.esa.worker_bitmap : exact; }
        actions = { one_bit; NoAction; }
        const entries = {
            ESA_VALUE_LIST(ESA_BIT_ENTRY)
        }
        const default_action = NoAction();
        size = 32;
    }

    action member() { md.member_ok = 1; }

    /*
     * Worker i of job J: its address, UDP port and the switch port it is
     * bound to (issue 18: a member is accepted only on its own port).
     */
    table esa_member {
        key = {
            hdr.esa.job_id          : exact;
            hdr.esa.worker_bitmap   : exact;
            hdr.ipv4.src_addr       : exact;
            hdr.udp.src_port        : exact;
            ig_intr_md.ingress_port : exact;
        }
        actions = { member; NoAction; }
        const default_action = NoAction();
        size = 32768;
    }

    action ps_member() { md.ps_ok = 1; }

    /* A RESULT only from the job's PS, on the PS's port. */
    table esa_ps_member {
        key = {
            hdr.esa.job_id          : exact;
            hdr.ipv4.src_addr       : exact;
            ig_intr_md.ingress_port : exact;
        }
        actions = { ps_member; NoAction; }
        const default_action = NoAction();
        size = 1024;
    }

    action drop_job(esa_cnt_t reason) {
        md.drop = 1;
        md.drop_reason = reason;
    }

    action drop_switch(esa_cnt_t reason) {
        md.drop = 1;
        md.drop_reason = reason;
        md.cnt_job = 0;
    }

    apply {
        esa_config.apply();
        md.is_result = hdr.esa.flags[3:3];
        md.is_resend = hdr.esa.flags[0:0];
        md.want_udp_len = (hdr.esa.value_count << 2) + 8 + ESA_HDR_LEN;
        md.want_ip_len = hdr.udp.length + 20;
        if (md.ip_options == 0 && hdr.esa.isValid()) {
            esa_hdr_check.apply();
            esa_job.apply();
            if (md.is_result == 1) {
                esa_ps_member.apply();
            } else {
                esa_bit_index.apply();
                esa_member.apply();
            }
        }
        md.outside = hdr.esa.worker_bitmap & ~md.full;
        md.index_over = hdr.esa.agg_index - md.quota;
        md.cnt_job = hdr.esa.job_id;

        if (md.ip_options == 1) {
            drop_switch(ESA_CNT_DROP_MALFORMED);
        } else if (!hdr.esa.isValid()) {
            /* Shorter than the ESA header. */
            drop_switch(ESA_CNT_DROP_TRUNCATED);
        } else if (md.hdr_ok == 0) {
            drop_switch(ESA_CNT_DROP_MALFORMED);
        } else if ((ig_prsr_md.parser_err & PARSER_ERROR_PARTIAL_HDR) != 0 ||
                   hdr.udp.length != md.want_udp_len ||
                   hdr.ipv4.total_len != md.want_ip_len) {
            drop_switch(ESA_CNT_DROP_TRUNCATED);
        } else if (md.job_known == 0) {
            drop_switch(ESA_CNT_DROP_UNKNOWN_JOB);
        } else if (hdr.esa.fan_in != md.job_fan_in) {
            drop_job(ESA_CNT_DROP_MALFORMED);
        } else if (md.is_result == 1) {
            if (md.ps_ok == 0) {
                drop_job(ESA_CNT_DROP_PORT);
            } else if (hdr.esa.worker_bitmap == 0 || md.outside != 0) {
                drop_job(ESA_CNT_DROP_MALFORMED);
            }
        } else {
            if (md.one_bit == 0 || md.outside != 0) {
                drop_job(ESA_CNT_DROP_MALFORMED);
            } else if (md.member_ok == 0) {
                drop_job(ESA_CNT_DROP_PORT);
            }
        }
        /* agg_index < quota: both below 2^16, so the difference's sign says. */
        if (md.drop == 0 &&
            (hdr.esa.agg_index[31:16] != 0 || md.index_over[31:31] == 0)) {
            drop_job(ESA_CNT_DROP_RANGE);
        }
    }
}

/*
 * A first-pass packet that met another sum's slot: reclaim it if stale,
 * preempt it if we win under esa, else collide. A take is done by a second
 * pass (resubmit) because the ownership stage is already behind us.
 */
control EsaJudge(inout esa_headers_t hdr, inout esa_ig_meta_t md,
                 inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md)
{
    action ask(bit<8> kind) {
        ig_dprsr_md.resubmit_type = ESA_RESUBMIT_TAKE;
        md.resub_out.setValid();
        md.resub_out.kind = kind;
        md.resub_out.res_prio = md.c_old[7:0];
        md.resub_out.res_job = md.c_old[23:8];
        md.resub_out.pad = 0;
    }

    action collide() {
        hdr.esa.flags = hdr.esa.flags | ESA_F_COLLISION;
        md.out = ESA_OUT_PS;
        md.outcome = ESA_CNT_COLLISIONS;
    }

    apply {
        md.age = md.now - md.d_time;
        md.prio_diff = (bit<16>)md.c_old[7:0] - (bit<16>)hdr.esa.priority;
        md.slack = md.timeout - md.age;
        if (md.timeout != 0 && md.slack[31:31] == 1) {
            ask(ESA_TAKE_RECLAIM);
        } else if (md.policy == ESA_POLICY_ESA &&
                   md.c_old[23:8] != hdr.esa.job_id &&
                   md.prio_diff[15:15] == 1) {
            ask(ESA_TAKE_PREEMPT);
        } else {
            collide();
        }
    }
}

/* The 32 value registers, one control each. */
#define ESA_VALUE_DECL(i) EsaValue() value_##i;
#define ESA_VALUE_APPLY(i) value_##i.apply(hdr.vals.v##i, hdr.esa.worker_bitmap, md);

control EsaIngress(inout esa_headers_t hdr, inout esa_ig_meta_t md,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)
{
    EsaValidate() validate;
    EsaOwner() owner;
    EsaSlotRecord() record;
    EsaJudge() judge;
    ESA_VALUE_LIST(ESA_VALUE_DECL)

    /* Counter events: index job << ESA_CNT_SHIFT | id (esa_counters.p4). */
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_rx;
    Counter<bit<64>, bit<16>>(ESA_CNT_ENTRIES, CounterType_t.PACKETS) esa_outcome;
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_completed;
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_results;
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_resends;
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_preemptions;
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_evictions;
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_stranded;
    /* L2 frames (index 0): each counter is counted in one place only */
    Counter<bit<64>, bit<1>>(1, CounterType_t.PACKETS) esa_forwarded;
    /* frames claiming a member's address from another port, per job */
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_spoof;

    /* ---- members' addresses are bound to their ports ---- */

    action bound(PortId_t port, bit<16> job) {
        md.bound = 1;
        md.bound_port = port;
        md.bound_job = job;
    }

    /*
     * Every job member's address, its port (the port map) and the first
     * job it is a member of. A frame whose IPv4 source or ARP sender is
     * such an address from another port is dropped before anything else
     * (issue 18): it may not use a member's address, whatever it carries.
     */
    table esa_bound_ip {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { bound; NoAction; }
        const default_action = NoAction();
        size = 4096;
    }

    table esa_bound_arp {
        key = { hdr.arp.spa : exact; }
        actions = { bound; NoAction; }
        const default_action = NoAction();
        size = 4096;
    }

    /* ---- where frames go ---- */

    action route(PortId_t port, bit<32> ps_addr, bit<48> ps_mac,
                 bit<8> fan_in, bit<32> base) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ipv4.dst_addr = ps_addr;
        hdr.ethernet.dst_addr = ps_mac;
        hdr.udp.dst_port = ESA_UDP_PORT;
        md.route_known = 1;
        md.route_base = base;
        hdr.esa.fan_in = fan_in;
    }

    /* A job's PS: port, address, MAC; its fan_in and base for evictions. */
    table esa_ps_route {
        key = { md.route_job : exact; }
        actions = { route; NoAction; }
        const default_action = NoAction();
        size = 1024;
    }

    action l2_unicast(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }

    action l2_flood() {
        ig_tm_md.mcast_grp_a = ESA_FLOOD_MGID;
    }

    /* Hosts' MAC addresses (the control plane's port map; no learning). */
    table esa_l2 {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { l2_unicast; l2_flood; }
        const default_action = l2_flood();
        size = 4096;
    }

    /* ---- the outcomes ---- */

    action absorbed() {
        md.absorb = 1;
        md.outcome = ESA_CNT_AGGREGATED;
    }

    action duplicate() {
        md.absorb = 1;
        md.outcome = ESA_CNT_DUPLICATES;
    }

    /* Sent on to the job's PS unaggregated, with @flag (0: as it is). */
    action unaggregated(bit<8> flag) {
        hdr.esa.flags = hdr.esa.flags | flag;
        md.out = ESA_OUT_PS;
        md.outcome = ESA_CNT_COLLISIONS;
    }

    /* A sum leaves: COMPLETE to the PS (and RESULT to the workers). */
    action complete_out(bit<8> out) {
        hdr.esa.flags = ESA_F_COMPLETE;
        hdr.esa.worker_bitmap = md.out_bitmap;
        md.out = out;
        md.has_sum = 1;
        md.ev_completed = 1;
    }

    action partial_out() {
        hdr.esa.flags = ESA_F_PARTIAL;
        hdr.esa.worker_bitmap = md.out_bitmap;
        md.out = ESA_OUT_PS;
        md.has_sum = 1;
    }

    /* A partial that left without completing here (flush, reclaim). */
    action stranded() {
        md.ev_stranded = 1;
        hdr.bridge.held = md.now - md.d_time;
    }

    /* The frame carries another job's evicted partial to that job's PS. */
    action evict_out(bit<8> flag) {
        hdr.esa.flags = flag;
        hdr.esa.job_id = md.c_old[23:8];
        hdr.esa.priority = md.c_old[7:0];
        hdr.esa.seq = md.d_seq;
        hdr.esa.worker_bitmap = md.b_old;
        md.route_job = md.c_old[23:8];
        md.out = ESA_OUT_PS;
        md.has_sum = 1;
        md.ev_evicted = 1;
    }

    /* A complete sum: multicast under esa and static, the PS only under atp. */
#define ESA_COMPLETE_SUM()                              \
        if (md.policy == ESA_POLICY_ATP) {              \
            complete_out(ESA_OUT_PS);                   \
        } else {                                        \
            complete_out(ESA_OUT_COMPLETE);             \
            md.ev_results = 1;                          \
        }

    /* ---- the aggregator ---- */

    /* Data frame with values the switch can sum, on a slot it may hold. */
    action aggregate_prepare() {
        md.key = hdr.esa.job_id[9:0] ++ hdr.esa.seq[21:0];
        md.claim = (md.full ^ hdr.esa.worker_bitmap) | md.hold;
        md.owner_word = (bit<32>)(hdr.esa.job_id ++ hdr.esa.priority);
        md.slot = md.base + hdr.esa.agg_index;
    }

    apply {
        hdr.bridge.setValid();
        hdr.bridge.out = ESA_OUT_L2;
        hdr.bridge.cnt_flags = 0;
        hdr.bridge.pad = 0;
        hdr.bridge.ingress_port = ig_intr_md.ingress_port;
        hdr.bridge.pull_bitmap = 0;
        hdr.bridge.held = 0;

        if (hdr.ipv4.isValid()) {
            esa_bound_ip.apply();
        } else if (hdr.arp.isValid()) {
            esa_bound_arp.apply();
        }
        if (md.bound == 1 && md.bound_port != ig_intr_md.ingress_port) {
            /* Not counted RX: nothing of it is looked at. */
            ig_dprsr_md.drop_ctl = 1;
            esa_spoof.count(md.bound_job);
            exit;
        }

        if (!hdr.udp.isValid() || hdr.udp.dst_port != ESA_UDP_PORT) {
            /* Not aggregation traffic: an L2 switch. */
            esa_l2.apply();
            esa_forwarded.count(0);
            hdr.bridge.job = 0;
            exit;
        }

        md.now = ig_prsr_md.global_tstamp[47:16];
        md.route_job = hdr.esa.job_id;
        validate.apply(hdr, md, ig_intr_md, ig_prsr_md);
        aggregate_prepare();
        if (md.drop == 1) {
            md.outcome = md.drop_reason;
        } else if (md.is_result == 1) {
            /* A RESULT releases an atp slot held for it; a pull does not. */
            if (md.is_resend == 0) {
                md.own_op = ESA_OWN_RELEASE;
                md.own = 1;
            }
            if (md.is_resend == 1) {
                md.outcome = ESA_CNT_PULLS;
                md.out = ESA_OUT_PULL;
                hdr.bridge.pull_bitmap = hdr.esa.worker_bitmap;
            } else {
                md.outcome = ESA_CNT_RESULTS;
                md.out = ESA_OUT_RESULT;
            }
        } else if (hdr.esa.fan_in == 1) {
            /* Complete on arrival: no aggregator needed. */
            md.outcome = ESA_CNT_AGGREGATED;
            md.out_bitmap = hdr.esa.worker_bitmap;
            ESA_COMPLETE_SUM()
        } else if (!hdr.vals.isValid()) {
            /* value_count the switch cannot sum: the PS does it all. */
            if (md.is_resend == 1) {
                unaggregated(0);
            } else {
                unaggregated(ESA_F_COLLISION);
            }
        } else {
            md.summing = 1;
            md.own = 1;
            if (md.resub_in.isValid()) {
                md.own_op = ESA_OWN_TAKE;
            } else if (md.is_resend == 1) {
                md.own_op = ESA_OWN_RESEND;
            } else {
                md.own_op = ESA_OWN_DATA;
            }
        }

        /* The ownership stage, once: a RESULT's release or a data packet's op. */
        if (md.own == 1) {
            owner.apply(md);
        }

        /* A data packet on a slot it may hold: the slot record, the values. */
        if (md.summing == 1) {
            md.a_rest = md.a_missing ^ hdr.esa.worker_bitmap;
            if (md.a_class == esa_owner_class_t.CLAIMED) {
                md.vop = ESA_VOP_WRITE;
            } else if (md.a_class == esa_owner_class_t.TAKEN) {
                md.vop = ESA_VOP_SWAP;
            } else if (md.a_class == esa_owner_class_t.MINE) {
                md.vop = ESA_VOP_ADD;
            } else if (md.a_class == esa_owner_class_t.FLUSHED) {
                md.vop = ESA_VOP_FLUSH;
            } else {
                md.vop = ESA_VOP_NONE;
            }
            record.apply(md, hdr.esa);
            md.b_hit = md.b_old & hdr.esa.worker_bitmap;
            ESA_VALUE_LIST(ESA_VALUE_APPLY)

            if (md.a_class == esa_owner_class_t.CLAIMED) {
                absorbed();
            } else if (md.a_class == esa_owner_class_t.TAKEN) {
                absorbed();
                if (md.resub_in.kind == ESA_TAKE_PREEMPT) {
                    md.ev_preempted = 1;
                }
                /* A taken atp slot held complete has nothing to evict. */
                if (md.a_missing != ESA_HOLD) {
                    md.absorb = 0;
                    if (md.resub_in.kind == ESA_TAKE_PREEMPT) {
                        evict_out(ESA_F_PREEMPTED);
                    } else {
                        evict_out(ESA_F_PARTIAL);
                        stranded();
                    }
                }
            } else if (md.a_class == esa_owner_class_t.MINE) {
                md.out_bitmap = md.b_old | hdr.esa.worker_bitmap;
                if (md.d_seq != 0) {
                    /* Aliased sequence: not this slot's sum after all. */
                    unaggregated(ESA_F_COLLISION);
                } else if (md.b_hit != 0) {
                    duplicate();
                } else if (md.a_rest != md.hold) {
                    absorbed();
                } else {
                    md.outcome = ESA_CNT_AGGREGATED;
                    if (md.out_bitmap == md.full) {
                        ESA_COMPLETE_SUM()
                    } else {
                        /* Only after an alias took a bit: the PS merges. */
                        partial_out();
                    }
                }
            } else if (md.a_class == esa_owner_class_t.FLUSHED) {
                if (md.d_seq != 0) {
                    /* The resident was an aliased sequence: it leaves whole. */
                    md.outcome = ESA_CNT_COLLISIONS;
                    hdr.esa.seq = hdr.esa.seq ^ md.d_seq;
                    md.out_bitmap = md.b_old;
                    partial_out();
                    stranded();
                } else {
                    if (md.b_hit != 0) {
                        md.outcome = ESA_CNT_DUPLICATES;
                        md.out_bitmap = md.b_old;
                    } else {
                        md.outcome = ESA_CNT_AGGREGATED;
                        md.out_bitmap = md.b_old | hdr.esa.worker_bitmap;
                    }
                    if (md.out_bitmap == md.full) {
                        ESA_COMPLETE_SUM()
                    } else {
                        partial_out();
                        stranded();
                    }
                }
            } else if (md.a_class == esa_owner_class_t.OTHER) {
                judge.apply(hdr, md, ig_dprsr_md);
            } else {
                /* KEPT: a resend that found no partial of its own. */
                unaggregated(0);
            }
        }

        /* ---- send ---- */
        if (ig_dprsr_md.resubmit_type == ESA_RESUBMIT_TAKE) {
            /* The second pass does the rest. */
        } else if (md.drop == 1 || md.absorb == 1) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (md.out == ESA_OUT_PS) {
            esa_ps_route.apply();
            if (md.route_known == 0) {
                /* The evicted partial's job is gone: nobody to send it to. */
                ig_dprsr_md.drop_ctl = 1;
            }
            hdr.esa.agg_index = md.slot - md.route_base;
            hdr.udp.checksum = 0;
        } else {
            ig_tm_md.mcast_grp_a = md.mgid;
            hdr.udp.checksum = 0;
        }
        hdr.bridge.out = md.out;
        /* Egress counts a sum's overflow for its job: the victim's if evicted. */
        hdr.bridge.job = md.route_job;
        hdr.bridge.cnt_flags = (bit<8>)md.has_sum |
                               ((bit<8>)md.ev_stranded << 1);

        /* ---- count (a first pass that asks for a take counts nothing) ---- */
        if (ig_dprsr_md.resubmit_type != ESA_RESUBMIT_TAKE) {
            esa_rx.count(md.cnt_job);
            esa_outcome.count(md.cnt_job << ESA_CNT_SHIFT | (bit<16>)md.outcome);
            if (md.ev_completed == 1) {
                esa_completed.count(md.cnt_job);
            }
            if (md.ev_results == 1) {
                esa_results.count(md.cnt_job);
            }
            if (md.is_resend == 1 && md.is_result == 0 && md.drop == 0) {
                esa_resends.count(md.cnt_job);
            }
            if (md.ev_preempted == 1) {
                esa_preemptions.count(md.cnt_job);
            }
            if (md.ev_evicted == 1) {
                esa_evictions.count(md.route_job);
            }
            /* the sum's job: the flusher's own, a reclaim's victim */
            if (md.ev_stranded == 1) {
                esa_stranded.count(md.route_job);
            }
        }
    }
}

#endif /* _ESA_INGRESS_P4_ */
