/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who holds an aggregator: the ownership stage and the slot's record.
 *
 * Ownership (one stage, two identical replicas): a 64-bit word per slot,
 * key = job[9:0] ++ seq[21:0] and the set of workers still missing. A slot
 * is free when nothing is missing, so the packet that completes a sum
 * frees the slot by clearing the last bit: no second pass, no ACK (esa,
 * static). Under atp a claim also sets ESA_HOLD, which no worker clears:
 * the complete slot stays held until the PS's RESULT clears it. Tofino's
 * stateful ALU has two comparisons and one 32-bit output (one register
 * action = one read-modify-write of one word), so the two replicas run the
 * same updates on the same inputs and differ only in what they return: the
 * old missing set (replica 1) and what happened (replica 2).
 *
 * The key holds 22 bits of the sequence. Two sequences of one job that
 * differ by a multiple of 2^22 and meet in one slot (the older one stranded
 * there) look the same to it; the slot record below keeps the full
 * sequence, and a packet whose sequence differs from it ("aliased") adds
 * nothing and goes to its PS unaggregated, so no sum is ever wrong
 * (Documentation/tofino.rst, "Ownership").
 *
 * Slot record (the next stage): full sequence and the workers really
 * summed (B), the claimer's job and priority (C), the full sequence again
 * (D: its claim returns the evicted sequence while B returns the evicted
 * bitmap) and the claim time (T: read to judge a resident and to measure
 * how long a stranded partial held its slot).
 */
#ifndef _ESA_OWNER_P4_
#define _ESA_OWNER_P4_

struct esa_pair_t {
    bit<32> lo;
    bit<32> hi;
}

/*
 * Both replicas' register actions from one text, so they cannot drift
 * apart: RV_OLD is replica 1's "return the old missing set", the S_*
 * statements are replica 2's "return what happened".
 */
#define ESA_OWNER_ACTIONS(REG, RTYPE, ID, RV_OLD, S_CLAIMED, S_MINE,         \
                          S_OTHER, S_TAKEN, S_FLUSHED, S_KEPT, S_RELEASED)  \
    /* A data packet: claim a free slot, or clear our bit in ours. */       \
    RegisterAction<esa_pair_t, esa_slot_t, RTYPE>(REG) ID##_data = {        \
        void apply(inout esa_pair_t o, out RTYPE rv) {                      \
            RV_OLD                                                          \
            if (o.hi == 0) {                                                \
                o.lo = md.key;                                              \
                o.hi = md.claim;                                            \
                S_CLAIMED                                                   \
            } else if (o.lo == md.key) {                                    \
                o.hi = o.hi & md.claim;                                     \
                S_MINE                                                      \
            } else {                                                        \
                S_OTHER                                                     \
            }                                                               \
        }                                                                   \
    };                                                                      \
    /* Second pass of a take: as data, but another resident is displaced. */\
    RegisterAction<esa_pair_t, esa_slot_t, RTYPE>(REG) ID##_take = {        \
        void apply(inout esa_pair_t o, out RTYPE rv) {                      \
            RV_OLD                                                          \
            if (o.hi == 0) {                                                \
                o.lo = md.key;                                              \
                o.hi = md.claim;                                            \
                S_CLAIMED                                                   \
            } else if (o.lo == md.key) {                                    \
                o.hi = o.hi & md.claim;                                     \
                S_MINE                                                      \
            } else {                                                        \
                o.lo = md.key;                                              \
                o.hi = md.claim;                                            \
                S_TAKEN                                                     \
            }                                                               \
        }                                                                   \
    };                                                                      \
    /* A resend: our partial (not an atp complete one) leaves, slot free. */\
    RegisterAction<esa_pair_t, esa_slot_t, RTYPE>(REG) ID##_resend = {      \
        void apply(inout esa_pair_t o, out RTYPE rv) {                      \
            RV_OLD                                                          \
            if (o.lo == md.key && o.hi > md.partial_floor) {                \
                o.hi = 0;                                                   \
                S_FLUSHED                                                   \
            } else {                                                        \
                S_KEPT                                                      \
            }                                                               \
        }                                                                   \
    };                                                                      \
    /* The PS's RESULT: an atp slot held complete for this sum is free. */  \
    RegisterAction<esa_pair_t, esa_slot_t, RTYPE>(REG) ID##_release = {     \
        void apply(inout esa_pair_t o, out RTYPE rv) {                      \
            RV_OLD                                                          \
            if (o.lo == md.key && o.hi == ESA_HOLD) {                       \
                o.hi = 0;                                                   \
                S_RELEASED                                                  \
            } else {                                                        \
                S_KEPT                                                      \
            }                                                               \
        }                                                                   \
    };

#define ESA_RET(tag) rv = esa_owner_class_t.tag;

control EsaOwner(inout esa_ig_meta_t md)
{
    Register<esa_pair_t, esa_slot_t>(ESA_TOFINO_SLOTS, {0, 0}) owner_missing;
    Register<esa_pair_t, esa_slot_t>(ESA_TOFINO_SLOTS, {0, 0}) owner_class;

    /* Replica 1 returns the old missing set whatever happened. */
    ESA_OWNER_ACTIONS(owner_missing, bit<32>, om, rv = o.hi;,
                      ;, ;, ;, ;, ;, ;, ;)
    /* Replica 2 returns what happened. */
    ESA_OWNER_ACTIONS(owner_class, esa_owner_class_t, oc, ;,
                      ESA_RET(CLAIMED), ESA_RET(MINE), ESA_RET(OTHER),
                      ESA_RET(TAKEN), ESA_RET(FLUSHED), ESA_RET(KEPT),
                      ESA_RET(RELEASED))

    action data() {
        md.a_missing = om_data.execute((esa_slot_t)md.slot);
        md.a_class = oc_data.execute((esa_slot_t)md.slot);
    }
    action take() {
        md.a_missing = om_take.execute((esa_slot_t)md.slot);
        md.a_class = oc_take.execute((esa_slot_t)md.slot);
    }
    action resend() {
        md.a_missing = om_resend.execute((esa_slot_t)md.slot);
        md.a_class = oc_resend.execute((esa_slot_t)md.slot);
    }
    action release() {
        md.a_missing = om_release.execute((esa_slot_t)md.slot);
        md.a_class = oc_release.execute((esa_slot_t)md.slot);
    }

    table own {
        key = { md.own_op : exact; }
        actions = { data; take; resend; release; }
        const entries = {
            ESA_OWN_DATA    : data();
            ESA_OWN_TAKE    : take();
            ESA_OWN_RESEND  : resend();
            ESA_OWN_RELEASE : release();
        }
        size = 4;
    }

    apply {
        own.apply();
    }
}

/* The slot record, run after the ownership stage by what it did. */
control EsaSlotRecord(inout esa_ig_meta_t md, in esa_h esa)
{
    Register<esa_pair_t, esa_slot_t>(ESA_TOFINO_SLOTS, {0, 0}) rec_bitmap;
    Register<bit<32>, esa_slot_t>(ESA_TOFINO_SLOTS, 0) rec_owner;
    Register<bit<32>, esa_slot_t>(ESA_TOFINO_SLOTS, 0) rec_seq;
    Register<bit<32>, esa_slot_t>(ESA_TOFINO_SLOTS, 0) rec_time;

    /* B: lo = full sequence, hi = workers summed. Returns the old bitmap. */
    RegisterAction<esa_pair_t, esa_slot_t, bit<32>>(rec_bitmap) bitmap_claim = {
        void apply(inout esa_pair_t b, out bit<32> rv) {
            rv = b.hi;
            b.lo = esa.seq;
            b.hi = esa.worker_bitmap;
        }
    };
    RegisterAction<esa_pair_t, esa_slot_t, bit<32>>(rec_bitmap) bitmap_add = {
        void apply(inout esa_pair_t b, out bit<32> rv) {
            rv = b.hi;
            if (b.lo == esa.seq) {
                b.hi = b.hi | esa.worker_bitmap;
            }
        }
    };

    /* C: job ++ priority of the claimer. */
    RegisterAction<bit<32>, esa_slot_t, bit<32>>(rec_owner) owner_claim = {
        void apply(inout bit<32> c, out bit<32> rv) {
            rv = c;
            c = md.owner_word;
        }
    };
    RegisterAction<bit<32>, esa_slot_t, bit<32>>(rec_owner) owner_read = {
        void apply(inout bit<32> c, out bit<32> rv) {
            rv = c;
        }
    };

    /* D: full sequence; a claim returns the evicted one, a check the xor. */
    RegisterAction<bit<32>, esa_slot_t, bit<32>>(rec_seq) seq_claim = {
        void apply(inout bit<32> d, out bit<32> rv) {
            rv = d;
            d = esa.seq;
        }
    };
    RegisterAction<bit<32>, esa_slot_t, bit<32>>(rec_seq) seq_check = {
        void apply(inout bit<32> d, out bit<32> rv) {
            rv = d ^ esa.seq;
        }
    };

    /* T: claim time, ESA_TIME_SHIFT units; a claim returns the old one. */
    RegisterAction<bit<32>, esa_slot_t, bit<32>>(rec_time) time_claim = {
        void apply(inout bit<32> t, out bit<32> rv) {
            rv = t;
            t = md.now;
        }
    };
    RegisterAction<bit<32>, esa_slot_t, bit<32>>(rec_time) time_read = {
        void apply(inout bit<32> t, out bit<32> rv) {
            rv = t;
        }
    };

    /* One call site per register action (each is one table's). */
    apply {
        if (md.a_class == esa_owner_class_t.CLAIMED ||
            md.a_class == esa_owner_class_t.TAKEN) {
            md.b_old = bitmap_claim.execute((esa_slot_t)md.slot);
            md.c_old = owner_claim.execute((esa_slot_t)md.slot);
            md.d_seq = seq_claim.execute((esa_slot_t)md.slot);
            md.d_time = time_claim.execute((esa_slot_t)md.slot);
        } else if (md.a_class == esa_owner_class_t.MINE ||
                   md.a_class == esa_owner_class_t.FLUSHED) {
            md.b_old = bitmap_add.execute((esa_slot_t)md.slot);
            md.d_seq = seq_check.execute((esa_slot_t)md.slot);
        } else if (md.a_class == esa_owner_class_t.OTHER) {
            md.c_old = owner_read.execute((esa_slot_t)md.slot);
        }
        if (md.a_class == esa_owner_class_t.FLUSHED ||
            md.a_class == esa_owner_class_t.OTHER) {
            md.d_time = time_read.execute((esa_slot_t)md.slot);
        }
    }
}

#endif /* _ESA_OWNER_P4_ */
