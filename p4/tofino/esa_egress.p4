/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Egress: one copy per member of a job's multicast group (the PS's copy of
 * a switch completion stays COMPLETE, each worker's becomes its RESULT, a
 * pull reaches only the workers it names), the OVERFLOW flag of every sum
 * leaving the switch, and the length check of frames the ingress could not
 * parse to their end.
 */
#ifndef _ESA_EGRESS_P4_
#define _ESA_EGRESS_P4_

/*
 * eg_intr_md.pkt_length counts what the egress parser sees, bridge header
 * included; Documentation/tofino.rst lists this among the first-run checks.
 */
const bit<16> ESA_EG_LEN_EXTRA = 14;  /* sizeInBytes(esa_bridge_h) */

/* Four values per table: INT32_MAX or INT32_MIN anywhere marks a saturation. */
#define ESA_SAT_TABLE(g, a, b, c, d)                                        \
    table esa_saturated_##g {                                               \
        key = {                                                             \
            hdr.vals.v##a : ternary;                                        \
            hdr.vals.v##b : ternary;                                        \
            hdr.vals.v##c : ternary;                                        \
            hdr.vals.v##d : ternary;                                        \
        }                                                                   \
        actions = { saturated; NoAction; }                                  \
        const entries = {                                                   \
            (0x7fffffff, _, _, _) : saturated();                            \
            (0x80000000, _, _, _) : saturated();                            \
            (_, 0x7fffffff, _, _) : saturated();                            \
            (_, 0x80000000, _, _) : saturated();                            \
            (_, _, 0x7fffffff, _) : saturated();                            \
            (_, _, 0x80000000, _) : saturated();                            \
            (_, _, _, 0x7fffffff) : saturated();                            \
            (_, _, _, 0x80000000) : saturated();                            \
        }                                                                   \
        const default_action = NoAction();                                  \
        size = 8;                                                           \
    }

control EsaEgress(inout esa_headers_t hdr, inout esa_eg_meta_t md,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md)
{
    /* Per job: sums leaving flagged OVERFLOW, frames dropped as truncated. */
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_overflows;
    Counter<bit<64>, bit<16>>(1024, CounterType_t.PACKETS) esa_truncated;

    /*
     * STRANDED_US: per job, the time stranded partials held their slot,
     * in ESA_TIME_SHIFT units (a counter counts events, this is an
     * amount); the control plane reads it in microseconds. Egress has the
     * stateful ALUs the value stages leave none of in ingress.
     */
    Register<bit<32>, bit<16>>(1024, 0) esa_stranded_time;
    RegisterAction<bit<32>, bit<16>, bit<32>>(esa_stranded_time) stranded_add = {
        void apply(inout bit<32> t) {
            t = t + hdr.bridge.held;
        }
    };

    action saturated() { md.saturated = 1; }

    ESA_SAT_TABLE(0, 0, 1, 2, 3)
    ESA_SAT_TABLE(1, 4, 5, 6, 7)
    ESA_SAT_TABLE(2, 8, 9, 10, 11)
    ESA_SAT_TABLE(3, 12, 13, 14, 15)
    ESA_SAT_TABLE(4, 16, 17, 18, 19)
    ESA_SAT_TABLE(5, 20, 21, 22, 23)
    ESA_SAT_TABLE(6, 24, 25, 26, 27)
    ESA_SAT_TABLE(7, 28, 29, 30, 31)

    /* Copy for worker i: its RESULT, from the PS's address and port. */
    action to_worker(bit<32> addr, bit<16> port, bit<48> mac,
                     bit<32> worker_bit, bit<32> ps_addr, bit<48> ps_mac) {
        hdr.esa.flags = ESA_F_RESULT |
            (hdr.esa.flags & (ESA_F_OVERFLOW | ESA_F_ECN | ESA_F_RESEND));
        hdr.ipv4.src_addr = ps_addr;
        hdr.ipv4.dst_addr = addr;
        hdr.udp.src_port = ESA_UDP_PORT;
        hdr.udp.dst_port = port;
        hdr.ethernet.src_addr = ps_mac;
        hdr.ethernet.dst_addr = mac;
        md.worker_bit = worker_bit;
    }

    /* The PS's copy: kept only for a switch completion (COMPLETE). */
    action to_ps(bit<32> ps_addr, bit<48> ps_mac) {
        hdr.ipv4.dst_addr = ps_addr;
        hdr.udp.dst_port = ESA_UDP_PORT;
        hdr.ethernet.dst_addr = ps_mac;
        md.worker_bit = 0;
    }

    action not_member() {
        eg_dprsr_md.drop_ctl = 1;
    }

    /* (job, replication id) -> member; rid ESA_RID_PS is the PS. */
    table esa_mcast_member {
        key = {
            hdr.bridge.job          : exact;
            eg_intr_md.egress_rid   : exact;
        }
        actions = { to_worker; to_ps; not_member; }
        const default_action = not_member();
        size = 33792;   /* 1024 jobs x (32 workers + PS) */
    }

    apply {
        if (hdr.bridge.out == ESA_OUT_L2) {
            /* A flood copy never goes back out of its ingress port. */
            if (eg_intr_md.egress_port == hdr.bridge.ingress_port) {
                eg_dprsr_md.drop_ctl = 1;
            }
        } else if (hdr.bridge.out != ESA_OUT_PS) {
            esa_mcast_member.apply();
            md.pulled = hdr.bridge.pull_bitmap & md.worker_bit;
            if (eg_intr_md.egress_rid == ESA_RID_PS &&
                hdr.bridge.out != ESA_OUT_COMPLETE) {
                eg_dprsr_md.drop_ctl = 1;   /* the PS sent this RESULT */
            } else if (hdr.bridge.out == ESA_OUT_PULL && md.pulled == 0) {
                eg_dprsr_md.drop_ctl = 1;   /* a pull for other workers */
            }
        } else if (!hdr.vals.isValid()) {
            /* Unparsed values (another value_count): is the frame whole? */
            md.want_len = hdr.udp.length + 14 + 20 + ESA_EG_LEN_EXTRA;
            if (eg_intr_md.pkt_length < md.want_len) {
                eg_dprsr_md.drop_ctl = 1;
                esa_truncated.count(hdr.bridge.job);
            }
        }

        if ((hdr.bridge.cnt_flags & ESA_BRIDGE_STRANDED) != 0 &&
            eg_dprsr_md.drop_ctl == 0) {
            stranded_add.execute(hdr.bridge.job);
        }
        if ((hdr.bridge.cnt_flags & ESA_BRIDGE_SUM) != 0 && hdr.vals.isValid()) {
            esa_saturated_0.apply();
            esa_saturated_1.apply();
            esa_saturated_2.apply();
            esa_saturated_3.apply();
            esa_saturated_4.apply();
            esa_saturated_5.apply();
            esa_saturated_6.apply();
            esa_saturated_7.apply();
            if (md.saturated == 1) {
                hdr.esa.flags = hdr.esa.flags | ESA_F_OVERFLOW;
                /* once per sum: the unicast, or the PS's multicast copy */
                if (hdr.bridge.out == ESA_OUT_PS ||
                    eg_intr_md.egress_rid == ESA_RID_PS) {
                    esa_overflows.count(hdr.bridge.job);
                }
            }
        }
        hdr.bridge.setInvalid();
    }
}

#endif /* _ESA_EGRESS_P4_ */
