/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One aggregated value: a 32-bit register per slot and the four things a
 * packet may do to it, chosen by md.vop, whether the slot's summed bitmap
 * (md.b_old, the slot record's truth) already has the packet's worker, and
 * whether the slot's full sequence is the packet's (md.d_seq == 0; not so
 * only for a sequence that aliases the 22-bit ownership key, see
 * esa_owner.p4).
 *
 * Saturation is sticky: a sum that reached INT32_MIN or INT32_MAX stays
 * there, so a sum that saturated on the way is still at a bound when it
 * leaves and the egress flags it OVERFLOW (the XDP switch keeps an
 * overflow bit per slot instead; Documentation/tofino.rst, "Subset").
 */
#ifndef _ESA_VALUES_P4_
#define _ESA_VALUES_P4_

const int<32> ESA_INT32_MAX = 0x7fffffff;
const int<32> ESA_INT32_MIN = -0x80000000;

control EsaValue(inout bit<32> v, in bit<32> worker_bitmap, in esa_ig_meta_t md)
{
    Register<int<32>, esa_slot_t>(ESA_TOFINO_SLOTS, 0) sums;

    /* A claim: the packet's value is the sum so far. */
    RegisterAction<int<32>, esa_slot_t, int<32>>(sums) sum_write = {
        void apply(inout int<32> s) {
            s = (int<32>)v;
        }
    };

    /* Saturating add, sticky at the bounds; the new sum goes out. */
    RegisterAction<int<32>, esa_slot_t, int<32>>(sums) sum_add = {
        void apply(inout int<32> s, out int<32> rv) {
            if (s != ESA_INT32_MAX && s != ESA_INT32_MIN) {
                s = s |+| (int<32>)v;
            }
            rv = s;
        }
    };

    /* A take: the packet's value in, the evicted partial's value out. */
    RegisterAction<int<32>, esa_slot_t, int<32>>(sums) sum_swap = {
        void apply(inout int<32> s, out int<32> rv) {
            rv = s;
            s = (int<32>)v;
        }
    };

    /* A flush by a counted resender (or of an aliased resident): read. */
    RegisterAction<int<32>, esa_slot_t, int<32>>(sums) sum_read = {
        void apply(inout int<32> s, out int<32> rv) {
            rv = s;
        }
    };

    action write() { sum_write.execute((esa_slot_t)md.slot); }
    action add()   { v = (bit<32>)sum_add.execute((esa_slot_t)md.slot); }
    action swap()  { v = (bit<32>)sum_swap.execute((esa_slot_t)md.slot); }
    action read()  { v = (bit<32>)sum_read.execute((esa_slot_t)md.slot); }

    /* The worker's bit is in the summed bitmap: counted already. */
#define ESA_COUNTED(OP, ACTION, i) \
            (OP, 32w1 << i, (32w1 << i) &&& (32w1 << i), 0) : ACTION();
#define ESA_ADD_COUNTED(i) ESA_COUNTED(ESA_VOP_ADD, NoAction, i)
#define ESA_FLUSH_COUNTED(i) ESA_COUNTED(ESA_VOP_FLUSH, read, i)

    table op {
        key = {
            md.vop        : exact;
            worker_bitmap : ternary;
            md.b_old      : ternary;
            md.d_seq      : ternary;
        }
        actions = { write; add; swap; read; NoAction; }
        const entries = {
            (ESA_VOP_WRITE, _, _, _)      : write();
            (ESA_VOP_SWAP, _, _, _)       : swap();
            /* counted already: untouched */
            ESA_VALUE_LIST(ESA_ADD_COUNTED)
            (ESA_VOP_ADD, _, _, 0)        : add();
            /* an aliased sequence (d_seq != 0) falls through: untouched */
            /* resend: add an uncounted worker of this very sum, then out */
            ESA_VALUE_LIST(ESA_FLUSH_COUNTED)
            (ESA_VOP_FLUSH, _, _, 0)      : add();
            (ESA_VOP_FLUSH, _, _, _)      : read();
        }
        const default_action = NoAction();
        size = 72;
    }

    apply {
        op.apply();
    }
}

#endif /* _ESA_VALUES_P4_ */
