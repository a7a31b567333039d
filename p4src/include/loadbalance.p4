/* loadbalance.p4 -- which port of the next-hop group carries the packet?
 *
 * The controller picks one mode per switch in lb_config (no recompilation):
 *   LB_ECMP     hash of the flow through an action selector: a flow stays on
 *               one path, flows spread over the group;
 *   LB_SPRAY    per-packet round robin over the group (register per group);
 *   LB_FLOWLET  a flow keeps its port while its packets are closer together
 *               than the configured gap; a new flowlet takes the least-loaded
 *               live candidate (queue depths learned in egress);
 *   LB_ADAPTIVE HULA-like: probes (sent by the controller or hosts, never
 *               made here) advertise the path congestion towards a
 *               destination; each switch remembers the best next hop per
 *               destination and sends data on it.
 * lb_tuning adds switch-local adaptivity to these modes (LBF_* flags in
 * headers.p4): load as depth + packets sent since the last departure, a
 * flowlet that ends once its last packet has left, random tie-breaks, and
 * a near-best rule for the probed hop; plus a bounded decision trace.
 * Fast failover: whatever a mode prefers, a port marked down in port_down is
 * never used; the packet falls back to the best live candidate instead.
 *
 * The candidates of a group come from nhop_group (one entry per group, up to
 * eight ports). ECMP additionally needs the group's ports as members of
 * ecmp_selector, because P4Runtime selects through action profiles.
 */
#ifndef ETHLAB_LOADBALANCE_P4
#define ETHLAB_LOADBALANCE_P4

control LoadBalance(inout headers hdr,
                    inout metadata meta,
                    inout standard_metadata_t standard_metadata) {

    /* spray: index of the next candidate, per group */
    register<bit<8>>(NUM_GROUPS) spray_next;

    /* flowlet: port and time of the last packet, per flow-hash slot */
    register<port_t>(FLOWLET_SLOTS) flowlet_port;
    register<bit<48>>(FLOWLET_SLOTS) flowlet_last_seen;
    register<bit<1>>(FLOWLET_SLOTS) flowlet_valid;
    /* LBF_DRAIN_GAP: port_deq count at which the slot's last packet leaves */
    register<bit<32>>(FLOWLET_SLOTS) flowlet_ticket;

    /* LBF_TRACE: the first TRACE_SLOTS decisions among two or more
     * candidates (where herding happens), later ones only counted. One
     * entry, high to low bits: time (us, 24) | dst_index (10) | chosen port
     * (9) | load believed for it (13, saturated) | kind (2: 0 least loaded,
     * 1 kept flowlet, 2 probed hop, 3 ECMP) | spare (6). lb_trace_next[0]
     * counts such decisions. */
    register<bit<64>>(TRACE_SLOTS) lb_trace;
    register<bit<32>>(1) lb_trace_next;

    /* adaptive: best next hop per destination, as learned from probes */
    register<port_t>(NUM_DESTINATIONS) best_port;
    register<bit<16>>(NUM_DESTINATIONS) best_qdepth;
    register<bit<48>>(NUM_DESTINATIONS) best_updated;
    register<bit<1>>(NUM_DESTINATIONS) best_valid;

    /* ---------------------------------------------------- configuration */

    action set_lb_config(bit<2> mode, bit<48> flowlet_gap_us,
                         bit<48> best_hop_timeout_us, bit<16> probe_mgrp) {
        meta.lb_mode = mode;
        meta.flowlet_gap_us = flowlet_gap_us;
        meta.best_hop_timeout_us = best_hop_timeout_us;
        meta.probe_mgrp = probe_mgrp;
    }

    /* Keyless: the controller changes the default action. Out of the box:
     * ECMP, 100 us flowlet gap, 1 ms best-hop lifetime, probes consumed. */
    table lb_config {
        actions = {
            set_lb_config;
        }
        default_action = set_lb_config(LB_ECMP, 48w100, 48w1000, 16w0);
    }

    action set_lb_tuning(bit<8> flags, bit<16> near_slack, bit<16> drain_margin) {
        meta.lb_flags = flags;
        meta.near_slack = near_slack;
        meta.drain_margin = drain_margin;
    }

    /* Keyless, off by default: the modes behave as described above. */
    table lb_tuning {
        actions = {
            set_lb_tuning;
        }
        default_action = set_lb_tuning(8w0, 16w0, 16w0);
    }

    /* ------------------------------------------------- next-hop groups */

    action set_candidates(bit<4> n_ports,
                          port_t port0, port_t port1, port_t port2, port_t port3,
                          port_t port4, port_t port5, port_t port6, port_t port7) {
        meta.n_cand = n_ports;
        meta.cand0 = port0;
        meta.cand1 = port1;
        meta.cand2 = port2;
        meta.cand3 = port3;
        meta.cand4 = port4;
        meta.cand5 = port5;
        meta.cand6 = port6;
        meta.cand7 = port7;
    }

    action no_candidates() {
        meta.n_cand = 0;
    }

    table nhop_group {
        key = {
            meta.group_id: exact;
        }
        actions = {
            set_candidates;
            no_candidates;
        }
        size = NUM_GROUPS;
        default_action = no_candidates();
    }

    action ecmp_set_port(port_t port) {
        meta.ecmp_port = port;
        meta.ecmp_hit = 1;
    }

    action_selector(HashAlgorithm.crc16, 32w1024, 32w14) ecmp_selector;

    table ecmp_group {
        key = {
            meta.group_id: exact;
            meta.flow_src: selector;
            meta.flow_dst: selector;
            meta.flow_proto: selector;
            meta.flow_sport: selector;
            meta.flow_dport: selector;
        }
        actions = {
            ecmp_set_port;
            NoAction;
        }
        implementation = ecmp_selector;
        size = NUM_GROUPS;
    }

    apply {
        lb_config.apply();
        lb_tuning.apply();
        bit<48> now = standard_metadata.ingress_global_timestamp;

        /* ------------------------------------------- probes: learn only */
        if (hdr.probe.isValid()) {
            bit<32> dst = (bit<32>)hdr.probe.dst_index;
            port_t in_port = standard_metadata.ingress_port;

            /* Data for dst would leave through the port the probe came in
             * on, so that port's queue joins the path's congestion. */
            qdepth_t local_q;
            port_qdepth.read(local_q, (bit<32>)in_port);
            bit<16> local_q16 = 16w0xFFFF;
            if (local_q < 19w0xFFFF) {
                local_q16 = local_q[15:0];
            }
            if (local_q16 > hdr.probe.path_qdepth) {
                hdr.probe.path_qdepth = local_q16;
            }

            /* dst_index comes off the wire. BMv2 does not bounds-check a
             * register index in release builds, so an index past the
             * arrays is never used: such a probe learns nothing. */
            bool dst_ok = dst < NUM_DESTINATIONS;
            port_t cur_port = 0;
            bit<16> cur_q = 0;
            bit<48> cur_time = 0;
            bit<1> cur_valid = 0;
            if (dst_ok) {
                best_port.read(cur_port, dst);
                best_qdepth.read(cur_q, dst);
                best_updated.read(cur_time, dst);
                best_valid.read(cur_valid, dst);
            }

            /* HULA's rule: take a better path; always refresh the current
             * best (its congestion may have grown); forget stale entries. */
            bool stale = cur_valid == 0 || now - cur_time > meta.best_hop_timeout_us;
            if (dst_ok && (stale || hdr.probe.path_qdepth < cur_q || in_port == cur_port)) {
                best_port.write(dst, in_port);
                best_qdepth.write(dst, hdr.probe.path_qdepth);
                best_updated.write(dst, now);
                best_valid.write(dst, 1);
            }

            /* Pass the probe on to the controller-chosen group (egress
             * drops the copy that would go back), or stop it here. */
            if (meta.probe_mgrp != 0) {
                standard_metadata.mcast_grp = meta.probe_mgrp;
            } else {
                meta.drop_reason = DROP_PROBE_DONE;
            }
            return;
        }

        if (meta.has_group == 0) {
            return;
        }
        nhop_group.apply();

        /* ---------------------------------------- live candidates */
        bit<1> down0;
        bit<1> down1;
        bit<1> down2;
        bit<1> down3;
        bit<1> down4;
        bit<1> down5;
        bit<1> down6;
        bit<1> down7;
        port_down.read(down0, (bit<32>)meta.cand0);
        port_down.read(down1, (bit<32>)meta.cand1);
        port_down.read(down2, (bit<32>)meta.cand2);
        port_down.read(down3, (bit<32>)meta.cand3);
        port_down.read(down4, (bit<32>)meta.cand4);
        port_down.read(down5, (bit<32>)meta.cand5);
        port_down.read(down6, (bit<32>)meta.cand6);
        port_down.read(down7, (bit<32>)meta.cand7);
        bool live0 = meta.n_cand > 0 && down0 == 0;
        bool live1 = meta.n_cand > 1 && down1 == 0;
        bool live2 = meta.n_cand > 2 && down2 == 0;
        bool live3 = meta.n_cand > 3 && down3 == 0;
        bool live4 = meta.n_cand > 4 && down4 == 0;
        bool live5 = meta.n_cand > 5 && down5 == 0;
        bool live6 = meta.n_cand > 6 && down6 == 0;
        bool live7 = meta.n_cand > 7 && down7 == 0;

        /* ------------------------------- the best live candidate
         * score = (queue depth, if load matters) ++ (distance from a start
         * position). The smallest score wins, so with equal load the first
         * live candidate at or after the start wins: spray rotates the start
         * per packet, the other modes derive it from the flow hash so that
         * equally loaded choices still spread over the group. */
        bit<3> rot_start = meta.flow_hash[2:0];
        if ((meta.lb_flags & LBF_RANDOM_TIE) != 0) {
            /* uniform over the n candidates (n * r / 256): a start in
             * 0..7 would favour the first of fewer than 8 candidates */
            bit<8> r;
            random(r, 8w0, 8w255);
            bit<16> scaled = ((bit<16>)r * (bit<16>)meta.n_cand) >> 8;
            rot_start = scaled[2:0];
        }
        bool by_load = meta.lb_mode == LB_FLOWLET || meta.lb_mode == LB_ADAPTIVE;
        bool local_load = (meta.lb_flags & LBF_LOCAL_LOAD) != 0;
        /* Flowlets: the flowlet mode, and the adaptive mode with
         * LBF_DRAIN_GAP (a flowlet keeps its hop, a new one re-chooses). */
        bool flowlets = meta.lb_mode == LB_FLOWLET ||
                        (meta.lb_mode == LB_ADAPTIVE && (meta.lb_flags & LBF_DRAIN_GAP) != 0);

        /* Group ids and dst_index values come from the controller and must
         * be below 1024 (docs/ethplus-header.md); the guards keep a wrong
         * entry from indexing past a register array on BMv2. */
        bool group_ok = (bit<32>)meta.group_id < NUM_GROUPS;

        if (meta.lb_mode == LB_SPRAY) {
            bit<8> next_idx = 0;
            if (group_ok) {
                spray_next.read(next_idx, (bit<32>)meta.group_id);
            }
            if (next_idx >= (bit<8>)meta.n_cand) {
                next_idx = 0;    /* the group shrank since the last packet */
            }
            rot_start = next_idx[2:0];
            bit<8> after = next_idx + 1;
            if (after >= (bit<8>)meta.n_cand) {
                after = 0;
            }
            if (group_ok) {
                spray_next.write((bit<32>)meta.group_id, after);
            }
        }

        qdepth_t q0 = 0;
        qdepth_t q1 = 0;
        qdepth_t q2 = 0;
        qdepth_t q3 = 0;
        qdepth_t q4 = 0;
        qdepth_t q5 = 0;
        qdepth_t q6 = 0;
        qdepth_t q7 = 0;
        if (by_load) {
            port_qdepth.read(q0, (bit<32>)meta.cand0);
            port_qdepth.read(q1, (bit<32>)meta.cand1);
            port_qdepth.read(q2, (bit<32>)meta.cand2);
            port_qdepth.read(q3, (bit<32>)meta.cand3);
            port_qdepth.read(q4, (bit<32>)meta.cand4);
            port_qdepth.read(q5, (bit<32>)meta.cand5);
            port_qdepth.read(q6, (bit<32>)meta.cand6);
            port_qdepth.read(q7, (bit<32>)meta.cand7);
        }
        if (by_load && local_load) {
            qdepth_t p0;
            qdepth_t p1;
            qdepth_t p2;
            qdepth_t p3;
            qdepth_t p4;
            qdepth_t p5;
            qdepth_t p6;
            qdepth_t p7;
            port_pending.read(p0, (bit<32>)meta.cand0);
            port_pending.read(p1, (bit<32>)meta.cand1);
            port_pending.read(p2, (bit<32>)meta.cand2);
            port_pending.read(p3, (bit<32>)meta.cand3);
            port_pending.read(p4, (bit<32>)meta.cand4);
            port_pending.read(p5, (bit<32>)meta.cand5);
            port_pending.read(p6, (bit<32>)meta.cand6);
            port_pending.read(p7, (bit<32>)meta.cand7);
            q0 = q0 |+| p0;
            q1 = q1 |+| p1;
            q2 = q2 |+| p2;
            q3 = q3 |+| p3;
            q4 = q4 |+| p4;
            q5 = q5 |+| p5;
            q6 = q6 |+| p6;
            q7 = q7 |+| p7;
        }

        /* LBF_NEAR_BEST: every port but the probed best hop looks
         * near_slack packets busier, so the best hop keeps the traffic only
         * while nothing here is clearly less loaded. */
        port_t probed = 0;
        bit<16> probed_q = 0;
        bool probed_ok = false;
        if (meta.lb_mode == LB_ADAPTIVE) {
            bit<32> pdst = (bit<32>)meta.dst_index;
            bit<48> pupdated = 0;
            bit<1> pvalid = 0;
            if (pdst < NUM_DESTINATIONS) {
                best_port.read(probed, pdst);
                best_qdepth.read(probed_q, pdst);
                best_updated.read(pupdated, pdst);
                best_valid.read(pvalid, pdst);
            }
            probed_ok = pvalid == 1 && now - pupdated <= meta.best_hop_timeout_us;
        }
        if (probed_ok && (meta.lb_flags & LBF_NEAR_BEST) != 0) {
            qdepth_t slack = (qdepth_t)meta.near_slack;
            if (meta.cand0 != probed) { q0 = q0 |+| slack; }
            if (meta.cand1 != probed) { q1 = q1 |+| slack; }
            if (meta.cand2 != probed) { q2 = q2 |+| slack; }
            if (meta.cand3 != probed) { q3 = q3 |+| slack; }
            if (meta.cand4 != probed) { q4 = q4 |+| slack; }
            if (meta.cand5 != probed) { q5 = q5 |+| slack; }
            if (meta.cand6 != probed) { q6 = q6 |+| slack; }
            if (meta.cand7 != probed) { q7 = q7 |+| slack; }
        }
        bit<32> s0 = (bit<32>)(q0 ++ (3w0 - rot_start));
        bit<32> s1 = (bit<32>)(q1 ++ (3w1 - rot_start));
        bit<32> s2 = (bit<32>)(q2 ++ (3w2 - rot_start));
        bit<32> s3 = (bit<32>)(q3 ++ (3w3 - rot_start));
        bit<32> s4 = (bit<32>)(q4 ++ (3w4 - rot_start));
        bit<32> s5 = (bit<32>)(q5 ++ (3w5 - rot_start));
        bit<32> s6 = (bit<32>)(q6 ++ (3w6 - rot_start));
        bit<32> s7 = (bit<32>)(q7 ++ (3w7 - rot_start));

        bool any_live = false;
        bit<32> best_score = 32w0xFFFFFFFF;
        port_t fallback = 0;
        qdepth_t fallback_q = 0;
        if (live0 && s0 < best_score) { best_score = s0; fallback = meta.cand0; fallback_q = q0; any_live = true; }
        if (live1 && s1 < best_score) { best_score = s1; fallback = meta.cand1; fallback_q = q1; any_live = true; }
        if (live2 && s2 < best_score) { best_score = s2; fallback = meta.cand2; fallback_q = q2; any_live = true; }
        if (live3 && s3 < best_score) { best_score = s3; fallback = meta.cand3; fallback_q = q3; any_live = true; }
        if (live4 && s4 < best_score) { best_score = s4; fallback = meta.cand4; fallback_q = q4; any_live = true; }
        if (live5 && s5 < best_score) { best_score = s5; fallback = meta.cand5; fallback_q = q5; any_live = true; }
        if (live6 && s6 < best_score) { best_score = s6; fallback = meta.cand6; fallback_q = q6; any_live = true; }
        if (live7 && s7 < best_score) { best_score = s7; fallback = meta.cand7; fallback_q = q7; any_live = true; }

        if (!any_live) {
            meta.drop_reason = DROP_NO_LIVE_PORT;
            return;
        }

        /* ------------------------------- what the mode would prefer */
        port_t chosen = fallback;
        port_t preferred = 0;
        bool have_preferred = false;
        bit<2> kind = 0;
        bit<16> pref_belief = 0;

        if (meta.lb_mode == LB_ECMP) {
            meta.ecmp_hit = 0;
            ecmp_group.apply();
            if (meta.ecmp_hit == 1) {
                preferred = meta.ecmp_port;
                have_preferred = true;
                kind = 3;
            }
        } else if (flowlets) {
            bit<32> slot = (bit<32>)meta.flow_hash[9:0];
            port_t last_port;
            bit<48> last_seen;
            bit<1> slot_valid;
            flowlet_port.read(last_port, slot);
            flowlet_last_seen.read(last_seen, slot);
            flowlet_valid.read(slot_valid, slot);
            /* Within the gap: same flowlet, same port (no reordering). */
            bool in_gap = slot_valid == 1 && now - last_seen <= meta.flowlet_gap_us;
            /* LBF_DRAIN_GAP: once the last packet has left (and
             * drain_margin more packets after it, a head start on the
             * hops further on), nothing of the flow is queued here and it
             * may move without overtaking. */
            if (in_gap && (meta.lb_flags & LBF_DRAIN_GAP) != 0) {
                bit<32> ticket;
                bit<32> gone;
                flowlet_ticket.read(ticket, slot);
                port_deq.read(gone, (bit<32>)last_port);
                if (gone - ticket - (bit<32>)meta.drain_margin < 32w0x80000000) {
                    in_gap = false;
                }
            }
            if (in_gap) {
                preferred = last_port;
                have_preferred = true;
                kind = 1;
            }
        }
        if (!have_preferred && meta.lb_mode == LB_ADAPTIVE) {
            /* Under LBF_NEAR_BEST the scores above already favour the
             * probed hop by near_slack: the least-loaded pick is the
             * answer. */
            if (probed_ok && (meta.lb_flags & LBF_NEAR_BEST) == 0) {
                preferred = probed;
                have_preferred = true;
                kind = 2;
                pref_belief = probed_q;
            }
        }

        /* Failover: a preferred port is used only if it is a live member
         * of this packet's group; otherwise the best live candidate. */
        if (have_preferred &&
            ((live0 && preferred == meta.cand0) || (live1 && preferred == meta.cand1) ||
             (live2 && preferred == meta.cand2) || (live3 && preferred == meta.cand3) ||
             (live4 && preferred == meta.cand4) || (live5 && preferred == meta.cand5) ||
             (live6 && preferred == meta.cand6) || (live7 && preferred == meta.cand7))) {
            chosen = preferred;
        }

        /* What this switch now believes about the chosen port's queue
         * (for the trace and the ticket). */
        qdepth_t chosen_q = fallback_q;
        if (chosen != fallback) {
            if (chosen == meta.cand0) { chosen_q = q0; }
            if (chosen == meta.cand1) { chosen_q = q1; }
            if (chosen == meta.cand2) { chosen_q = q2; }
            if (chosen == meta.cand3) { chosen_q = q3; }
            if (chosen == meta.cand4) { chosen_q = q4; }
            if (chosen == meta.cand5) { chosen_q = q5; }
            if (chosen == meta.cand6) { chosen_q = q6; }
            if (chosen == meta.cand7) { chosen_q = q7; }
        }
        if (!have_preferred || chosen != preferred) {
            kind = 0;
            if (probed_ok && chosen == probed) {
                kind = 2;
                pref_belief = probed_q;
            }
        }

        if (local_load) {
            qdepth_t pending;
            port_pending.read(pending, (bit<32>)chosen);
            port_pending.write((bit<32>)chosen, pending |+| 1);
        }

        if (flowlets) {
            bit<32> slot = (bit<32>)meta.flow_hash[9:0];
            flowlet_port.write(slot, chosen);
            flowlet_last_seen.write(slot, now);
            flowlet_valid.write(slot, 1);
            if ((meta.lb_flags & LBF_DRAIN_GAP) != 0) {
                /* It leaves after the packets ahead of it and itself.
                 * chosen_q may include near_slack (adaptive mode, a port
                 * other than the probed one): the ticket then waits a few
                 * departures too many, which only keeps the flow on its port
                 * a little longer, never lets it overtake itself. */
                bit<32> gone;
                port_deq.read(gone, (bit<32>)chosen);
                flowlet_ticket.write(slot, gone + (bit<32>)chosen_q + 1);
            }
        }

        if ((meta.lb_flags & LBF_TRACE) != 0 && meta.n_cand > 1) {
            bit<32> n;
            lb_trace_next.read(n, 0);
            bit<13> belief = 13w0x1FFF;
            if (kind == 2) {
                if (pref_belief < 16w0x1FFF) { belief = pref_belief[12:0]; }
            } else if (chosen_q < 19w0x1FFF) {
                belief = chosen_q[12:0];
            }
            if (n < TRACE_SLOTS) {
                lb_trace.write(n, now[23:0] ++ meta.dst_index[9:0] ++ chosen ++ belief ++ kind ++ 6w0);
            }
            lb_trace_next.write(0, n + 1);
        }

        standard_metadata.egress_spec = chosen;
    }
}

#endif
