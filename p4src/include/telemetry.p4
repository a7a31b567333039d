/* telemetry.p4 -- what leaves each port, and how congested it is.
 *
 * Runs in egress for every transmitted packet:
 *   tx_port_counter  packets/bytes per egress port;
 *   qdepth_max       the deepest queue ever seen per port (controller resets
 *                    it by writing 0), for utilisation/queue reports;
 *   port_qdepth      the latest depth per port, which ingress uses to find
 *                    the least-loaded candidate (see port_state.p4);
 *   port_pending,    under switch-local load balancing: zeroed / counted
 *   port_deq         up per departure (port_state.p4);
 *   ETH+ max_qdepth  the path maximum in the packet itself, so endpoints can
 *                    react HPCC-style without asking any switch.
 */
#ifndef ETHLAB_TELEMETRY_P4
#define ETHLAB_TELEMETRY_P4

control Telemetry(inout headers hdr,
                  inout metadata meta,
                  inout standard_metadata_t standard_metadata) {

    counter(NUM_PORTS, CounterType.packets_and_bytes) tx_port_counter;
    register<qdepth_t>(NUM_PORTS) qdepth_max;

    apply {
        bit<32> port = (bit<32>)standard_metadata.egress_port;
        qdepth_t depth = standard_metadata.deq_qdepth;

        tx_port_counter.count(port);
        port_qdepth.write(port, depth);
        if ((meta.lb_flags & LBF_LOCAL_LOAD) != 0) {
            port_pending.write(port, 0);
            bit<32> gone;
            port_deq.read(gone, port);
            port_deq.write(port, gone + 1);
        }

        qdepth_t seen;
        qdepth_max.read(seen, port);
        if (depth > seen) {
            qdepth_max.write(port, depth);
        }

        if (hdr.ethplus.isValid()) {
            bit<16> depth16 = 16w0xFFFF;     /* saturate, do not wrap */
            if (depth < 19w0xFFFF) {
                depth16 = depth[15:0];
            }
            if (depth16 > hdr.ethplus.max_qdepth) {
                hdr.ethplus.max_qdepth = depth16;
            }
        }
    }
}

#endif
