/* ethplus.p4 -- ethlab's ETH+ fabric switch (v1model).
 *
 * One program for every switch of an AI-cluster fabric:
 *   scale-up   ETH+ compact header, routed on the destination endpoint id;
 *   scale-out  IPv4 (RoCEv2 on UDP 4791), routed by longest prefix;
 *   control    ARP goes to the controller; the controller sends frames
 *              (probes, ARP replies) out of any port with packet-out.
 * Path selection (ECMP / spray / flowlet / adaptive), fast failover, ECN
 * marking and telemetry are chosen and tuned by the controller at run time.
 *
 * The pieces, in pipeline order:
 *   include/headers.p4     headers, constants, metadata
 *   include/port_state.p4  per-port liveness and queue depth (shared state)
 *   include/parser.p4      the parser
 *   include/forwarding.p4  endpoint-id / LPM lookup -> next-hop group
 *   include/loadbalance.p4 group -> egress port, probes, failover
 *   include/trim.p4        packet trimming (off by default), feedback priority
 *   include/ecn.p4         RED/ECN marking in egress
 *   include/telemetry.p4   per-port counters and queue depths
 *   include/deparser.p4    checksums and the deparser
 * Table, register and counter names are listed in docs/ethplus-header.md.
 */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/port_state.p4"
#include "include/parser.p4"
#include "include/forwarding.p4"
#include "include/loadbalance.p4"
#include "include/trim.p4"
#include "include/ecn.p4"
#include "include/telemetry.p4"
#include "include/deparser.p4"
#ifdef ETHLAB_INC
#include "include/inc.p4"       /* in-network aggregation: ethplus_inc.p4 */
#endif

control MyIngress(inout headers hdr,
                  inout metadata meta,
                  inout standard_metadata_t standard_metadata) {

    /* Offered load per port: every arriving frame, dropped or not. */
    counter(NUM_PORTS, CounterType.packets_and_bytes) rx_port_counter;
    /* Drops, by DROP_* reason and by the port the frame arrived on. */
    counter(DROP_REASONS, CounterType.packets) drop_reason_counter;
    counter(NUM_PORTS, CounterType.packets) drop_port_counter;

    Forwarding() fwd;
    LoadBalance() lb;
    Trimming() trim;
#ifdef ETHLAB_INC
    Aggregation() agg;
#endif

    action punt_to_cpu(bit<8> reason) {
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        hdr.packet_in.reason = reason;
        hdr.packet_in._pad = 0;
        standard_metadata.egress_spec = CPU_PORT;
    }

    apply {
        rx_port_counter.count((bit<32>)standard_metadata.ingress_port);

        if (hdr.packet_out.isValid()) {
            /* The controller already decided where this frame goes. */
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else if (hdr.arp.isValid()) {
            /* Address resolution is the controller's business. */
            punt_to_cpu(PUNT_ARP);
#ifdef ETHLAB_INC
        } else if (hdr.inc.isValid()) {
            agg.apply(hdr, meta, standard_metadata);
#endif
        } else {
            fwd.apply(hdr, meta, standard_metadata);
            if (meta.drop_reason == DROP_NONE) {
                lb.apply(hdr, meta, standard_metadata);
            }
            if (meta.drop_reason == DROP_NONE && !hdr.probe.isValid()) {
                trim.apply(hdr, meta, standard_metadata);
            }
        }

        if (meta.drop_reason != DROP_NONE) {
            mark_to_drop(standard_metadata);
            drop_reason_counter.count((bit<32>)meta.drop_reason);
            drop_port_counter.count((bit<32>)standard_metadata.ingress_port);
        }
    }
}

control MyEgress(inout headers hdr,
                 inout metadata meta,
                 inout standard_metadata_t standard_metadata) {

    EcnMarking() ecn;
    Telemetry() telemetry;

    /* Routed IPv4 leaves with this switch's MAC as source and the
     * neighbour's MAC as destination, per egress port. */
    action set_macs(macAddr_t src_mac, macAddr_t dst_mac) {
        hdr.ethernet.srcAddr = src_mac;
        hdr.ethernet.dstAddr = dst_mac;
    }

    table neighbor_mac {
        key = {
            standard_metadata.egress_port: exact;
        }
        actions = {
            set_macs;
            NoAction;
        }
        size = NUM_PORTS;
        default_action = NoAction();
    }

    apply {
        /* A flooded probe never goes back where it came from. */
        if (hdr.probe.isValid() &&
            standard_metadata.egress_port == standard_metadata.ingress_port) {
            mark_to_drop(standard_metadata);
            return;
        }

        telemetry.apply(hdr, meta, standard_metadata);
        if (standard_metadata.egress_port != CPU_PORT) {
            ecn.apply(hdr, meta, standard_metadata);
            if (meta.routed == 1) {
                neighbor_mac.apply();
            }
        }
    }
}

V1Switch(
    EthPlusParser(),
    EthPlusVerifyChecksum(),
    MyIngress(),
    MyEgress(),
    EthPlusComputeChecksum(),
    EthPlusDeparser()
) main;
