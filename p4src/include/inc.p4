/* inc.p4 -- in-network aggregation (all-reduce) in the switch, SwitchML-style.
 *
 * A job (controller: controller/inc.py) owns n_slots consecutive slots of this
 * switch's pool from slot_base on, a multicast group of its local members and,
 * below the top level, one port up to its parent switch. Every slot has two
 * copies; an endpoint sends chunk c into slot c % n_slots, copy
 * (c / n_slots) % 2, and reuses a slot only after it got the slot's previous
 * result, so the copy it overwrites is one every member has finished with.
 *
 * A contribution from contributor m (the table inc_member maps the ingress
 * port to m) of copy k:
 *   - m not yet counted in k: if k is complete (or unused) this is the first
 *     contribution of a new chunk: k := data, bitmap := {m}; else k += data.
 *     m's bit is cleared in the other copy (m has moved on, so that copy's
 *     next use starts clean). When the count reaches n_contrib the sum goes
 *     to every member (multicast group; top level) or up to the parent as one
 *     contribution (lower level) and the copy stays complete: it is the result.
 *   - m already counted: a retransmission. If k is complete the result is
 *     sent again to m alone (it lost the result), or, at a lower level that
 *     has no result from its parent yet, the partial sum goes up again. If k
 *     is not complete the duplicate is dropped: nothing is counted twice.
 * A result from the parent (lower levels): stored in k and multicast down.
 * The result stays in k until k is reused, which needs every member to have
 * received it: a lost result is always recoverable by a retransmission.
 * No free slot: slots are given to jobs by the controller, never taken per
 * packet; an endpoint with all its slots in flight waits (its window).
 */
#ifndef ETHLAB_INC_P4
#define ETHLAB_INC_P4

control Aggregation(inout headers hdr,
                    inout metadata meta,
                    inout standard_metadata_t standard_metadata) {

    /* Per copy (index 2 * slot + version). */
    register<bit<64>>(2 * INC_SLOTS) inc_seen;      /* contributors counted   */
    register<bit<8>>(2 * INC_SLOTS) inc_count;      /* how many of them       */
    register<bit<16>>(2 * INC_SLOTS) inc_ranks;     /* endpoints summed       */
    register<bit<32>>(2 * INC_SLOTS) inc_chunk;     /* chunk the copy holds   */
    register<bit<1>>(2 * INC_SLOTS) inc_has_result; /* parent's result stored */
    /* Element e of copy k at k * INC_ELEMS + e. */
    register<bit<32>>(2 * INC_SLOTS * INC_ELEMS) inc_values;
    counter(INC_EVENTS, CounterType.packets) inc_events;

    bit<16> slot_base = 0;
    bit<16> n_slots = 0;
    bit<8>  n_contrib = 0;
    bit<16> mgrp = 0;
    bit<8>  level = 0;
    bit<1>  is_top = 1;
    bit<9>  up_port = 0;
    bit<6>  member = 0;

    action inc_set_job(bit<16> slot_base_, bit<16> n_slots_, bit<8> n_contrib_,
                       bit<16> mgrp_, bit<8> level_, bit<1> is_top_, bit<9> up_port_) {
        slot_base = slot_base_;
        n_slots = n_slots_;
        n_contrib = n_contrib_;
        mgrp = mgrp_;
        level = level_;
        is_top = is_top_;
        up_port = up_port_;
    }

    /* v := (v & keep) + (data & take) for every element of the copy at
     * base, and the frame carries v: first contribution (keep 0), sum
     * (keep and take all), replay (take 0), parent's result (keep 0). */
    action inc_elements(bit<32> base, bit<32> keep, bit<32> take) {
        bit<32> v;
#define INC_ELEM(h, l) \
        inc_values.read(v, base + 0x##h##l); \
        v = (v & keep) + (hdr.inc_data.e##h##l & take); \
        inc_values.write(base + 0x##h##l, v); \
        hdr.inc_data.e##h##l = v;
        INC_FOR_ELEMS(INC_ELEM)
#undef INC_ELEM
    }

    action inc_no_job() {
        n_slots = 0;
    }

    /* Jobs this switch aggregates for. */
    table inc_job {
        key = {
            hdr.inc.job_id: exact;
        }
        actions = {
            inc_set_job;
            inc_no_job;
        }
        size = 64;
        default_action = inc_no_job();
    }

    action inc_set_member(bit<6> index) {
        member = index;
    }

    action inc_not_member() {
        n_slots = 0;
    }

    /* Contributors of a job at this switch: its ports to the job's endpoints
     * (or to the lower-level switches), numbered 0 .. n_contrib - 1. */
    table inc_member {
        key = {
            hdr.inc.job_id: exact;
            standard_metadata.ingress_port: exact;
        }
        actions = {
            inc_set_member;
            inc_not_member;
        }
        size = 4096;
        default_action = inc_not_member();
    }

    apply {
        mark_to_drop(standard_metadata);
        if (!hdr.inc_data.isValid()) {
            inc_events.count(INC_BAD_SLOT);
            return;
        }
        inc_job.apply();
        if (n_slots == 0) {
            inc_events.count(INC_UNKNOWN_JOB);
            return;
        }
        if (hdr.inc.slot >= n_slots) {
            inc_events.count(INC_BAD_SLOT);
            return;
        }
        bit<32> copy = ((bit<32>)(slot_base + hdr.inc.slot) << 1) | (bit<32>)hdr.inc.version;
        if (copy >= 2 * INC_SLOTS) {
            inc_events.count(INC_BAD_SLOT);
            return;
        }

        bit<64> seen;
        bit<8>  count;
        bit<16> ranks;
        bit<32> chunk;
        bit<1>  has_result;
        inc_seen.read(seen, copy);
        inc_count.read(count, copy);
        inc_ranks.read(ranks, copy);
        inc_chunk.read(chunk, copy);
        inc_has_result.read(has_result, copy);

        /* What to do with the elements (inc_elements). */
        bit<32> keep = 0;
        bit<32> take = 0;
        bool touch = false;     /* run the element loop at all */
        bool to_members = false;
        bool to_sender = false;
        bool to_parent = false;

        if (hdr.inc.is_result == 1) {
            if (is_top == 1 || standard_metadata.ingress_port != up_port ||
                chunk != hdr.inc.chunk || count != n_contrib) {
                inc_events.count(INC_STALE);
                return;
            }
            /* The parent's sum replaces the partial; members get it. */
            keep = 0;
            take = 0xFFFFFFFF;
            touch = true;
            to_members = true;
            inc_has_result.write(copy, 1);
            ranks = hdr.inc.ranks;
            inc_ranks.write(copy, ranks);
            inc_events.count(INC_RESULT_DOWN);
        } else {
            inc_member.apply();
            if (n_slots == 0) {
                inc_events.count(INC_NOT_MEMBER);
                return;
            }
            bit<64> bit_m = (bit<64>)1 << member;
            if ((seen & bit_m) == 0) {
                bool first = count == 0 || count == n_contrib;
                if (first) {
                    seen = bit_m;
                    count = 1;
                    ranks = hdr.inc.ranks;
                    chunk = hdr.inc.chunk;
                    keep = 0;
                    inc_has_result.write(copy, 0);
                    has_result = 0;
                } else if (chunk != hdr.inc.chunk) {
                    inc_events.count(INC_STALE);
                    return;
                } else {
                    seen = seen | bit_m;
                    count = count + 1;
                    ranks = ranks + hdr.inc.ranks;
                    keep = 0xFFFFFFFF;
                }
                take = 0xFFFFFFFF;
                touch = true;
                inc_seen.write(copy, seen);
                inc_count.write(copy, count);
                inc_ranks.write(copy, ranks);
                inc_chunk.write(copy, chunk);
                /* m has moved on from the other copy's chunk. */
                bit<64> other;
                inc_seen.read(other, copy ^ 1);
                inc_seen.write(copy ^ 1, other & ~bit_m);
                if (count == n_contrib) {
                    inc_events.count(INC_COMPLETED);
                    if (is_top == 1) {
                        to_members = true;
                    } else {
                        to_parent = true;
                    }
                } else {
                    inc_events.count(INC_ABSORBED);
                }
            } else if (count == n_contrib && chunk == hdr.inc.chunk) {
                keep = 0xFFFFFFFF;
                take = 0;
                touch = true;
                if (is_top == 1 || has_result == 1) {
                    to_sender = true;
                    inc_events.count(INC_REPLAYED);
                } else {
                    to_parent = true;
                    inc_events.count(INC_RESENT_UP);
                }
            } else {
                inc_events.count(INC_DUPLICATE);
                return;
            }
        }

        if (touch) {
            inc_elements(copy * INC_ELEMS, keep, take);
        }

        hdr.inc.ranks = ranks;
        hdr.inc.bitmap = seen;
        hdr.inc.level = level;
        if (to_members) {
            hdr.inc.is_result = 1;
            standard_metadata.mcast_grp = mgrp;
        } else if (to_sender) {
            hdr.inc.is_result = 1;
            standard_metadata.egress_spec = standard_metadata.ingress_port;
        } else if (to_parent) {
            hdr.inc.is_result = 0;
            standard_metadata.egress_spec = up_port;
        }
    }
}

#endif
