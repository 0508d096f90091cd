/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsers and deparsers. An aggregation frame is Ethernet / IPv4 without
 * options / UDP to ESA_UDP_PORT / esa_h, plus ESA_TOFINO_VALUES values when
 * value_count says so; any other value_count leaves the values unparsed
 * (they travel as payload and the frame is never aggregated). IPv4 with
 * options stays parsed up to IPv4 only: the ingress drops it as malformed
 * when its UDP port could be ESA's (it cannot tell without parsing the
 * options, so every such UDP frame counts as aggregation traffic: see
 * Documentation/tofino.rst, "Subset").
 */
#ifndef _ESA_PARSER_P4_
#define _ESA_PARSER_P4_

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_ARP  = 0x0806;
const bit<8>  IPPROTO_UDP    = 17;

parser EsaIngressParser(packet_in pkt,
                        out esa_headers_t hdr,
                        out esa_ig_meta_t md,
                        out ingress_intrinsic_metadata_t ig_intr_md)
{
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            default: parse_port_metadata;
        }
    }

    /* Second pass of a take: the first pass's verdict, then the frame again. */
    state parse_resubmit {
        pkt.extract(md.resub_in);
        transition parse_ethernet;
    }

    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_ARP: parse_arp;
            default: accept;
        }
    }

    state parse_arp {
        pkt.extract(hdr.arp);
        transition accept;
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        /* Non-first fragments and non-UDP are L2 traffic. */
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IPPROTO_UDP): parse_udp;
            default: accept;
        }
    }

    /*
     * IPv4 options: read word by word to find the UDP port. An ESA frame with options
     * is dropped as malformed (the wire protocol allows none); md.ip_options
     * tells the ingress, which then never looks at hdr.esa.
     */
    state parse_udp {
        transition select(hdr.ipv4.ihl) {
            5: parse_udp_header;
            6: skip_options_1;
            7: skip_options_2;
            8: skip_options_3;
            9: skip_options_4;
            10: skip_options_5;
            11: skip_options_6;
            12: skip_options_7;
            13: skip_options_8;
            14: skip_options_9;
            15: skip_options_10;
            default: accept;    /* ihl < 5: not IPv4 we can read */
        }
    }

    /* One state per option word: extracted (not skipped) so L2 forwards them. */
#define ESA_OPTION_WORD(n, then)                \
    state skip_options_##n {                    \
        pkt.extract(hdr.ipv4_opts.next);        \
        md.ip_options = 1;                      \
        transition then;                        \
    }
    ESA_OPTION_WORD(10, skip_options_9)
    ESA_OPTION_WORD(9, skip_options_8)
    ESA_OPTION_WORD(8, skip_options_7)
    ESA_OPTION_WORD(7, skip_options_6)
    ESA_OPTION_WORD(6, skip_options_5)
    ESA_OPTION_WORD(5, skip_options_4)
    ESA_OPTION_WORD(4, skip_options_3)
    ESA_OPTION_WORD(3, skip_options_2)
    ESA_OPTION_WORD(2, skip_options_1)
    ESA_OPTION_WORD(1, parse_udp_after_options)

    state parse_udp_after_options {
        pkt.extract(hdr.udp);
        transition accept;
    }

    state parse_udp_header {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            ESA_UDP_PORT: parse_esa;
            default: accept;
        }
    }

    state parse_esa {
        pkt.extract(hdr.esa);
        transition select(hdr.esa.value_count) {
            ESA_TOFINO_VALUES: parse_values;
            default: accept;
        }
    }

    /* A frame shorter than its values ends here with a parser error. */
    state parse_values {
        pkt.extract(hdr.vals);
        transition accept;
    }
}

control EsaIngressDeparser(packet_out pkt,
                           inout esa_headers_t hdr,
                           in esa_ig_meta_t md,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md)
{
    Resubmit(ESA_RESUBMIT_TAKE) resubmit;

    apply {
        if (ig_dprsr_md.resubmit_type == ESA_RESUBMIT_TAKE) {
            resubmit.emit(md.resub_out);
        }
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.arp);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_opts);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.esa);
        pkt.emit(hdr.vals);
    }
}

parser EsaEgressParser(packet_in pkt,
                       out esa_headers_t hdr,
                       out esa_eg_meta_t md,
                       out egress_intrinsic_metadata_t eg_intr_md)
{
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        transition select(hdr.bridge.out) {
            ESA_OUT_L2: accept;     /* L2 frames are not looked into */
            default: parse_ethernet;
        }
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        pkt.extract(hdr.udp);
        pkt.extract(hdr.esa);
        transition select(hdr.esa.value_count) {
            ESA_TOFINO_VALUES: parse_values;
            default: accept;
        }
    }

    state parse_values {
        pkt.extract(hdr.vals);
        transition accept;
    }
}

control EsaEgressDeparser(packet_out pkt,
                          inout esa_headers_t hdr,
                          in esa_eg_meta_t md,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md)
{
    Checksum() ipv4_csum;

    apply {
        /* Every ESA frame leaving was re-addressed: new IPv4 checksum. */
        if (hdr.esa.isValid()) {
            hdr.ipv4.hdr_checksum = ipv4_csum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
                hdr.ipv4.total_len, hdr.ipv4.identification,
                hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        }
        /* The bridge header is not emitted: egress invalidated it. */
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_opts);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.esa);
        pkt.emit(hdr.vals);
    }
}

#endif /* _ESA_PARSER_P4_ */
