/* trim.p4 -- packet trimming and the priority of transport feedback.
 *
 * ethlab's model of the trimming that NDP introduced and Ultra Ethernet
 * adopted: instead of tail-dropping a data packet at a full queue, the switch
 * cuts it down to its headers, marks it trimmed and sends it on at high
 * priority, so the receiver learns of the loss one queueing delay later
 * (and NAKs at once) instead of after a retransmission timeout.
 *
 * v1model has no "on drop" hook in the traffic manager, so "full" is judged
 * in ingress from the egress port's last dequeue depth (port_qdepth) against
 * a threshold the controller sets a little below the queue capacity.
 * truncate() keeps the first keep_bytes bytes of the frame: every header the
 * parser knows plus ethlab's probe record (flow id, PSN, packet count) with
 * the default 128. A trimmed frame keeps the IPv4/UDP length fields of the
 * whole packet (receivers recognise it by the mark, not by the lengths).
 *
 * Off by default: the controller turns it on with the default action of the
 * keyless trim_config table. ACK/NAK/CNP frames (ETH+ pkt_type ack, RoCEv2
 * RC ACK and CNP opcodes) always get PRIO_CONTROL. ethlab's fabric switches
 * have 8 strict-priority queues per port, so these overtake queued data; a
 * switch with one queue per port serves them in FIFO order (p4exec) or, on
 * BMv2, drops them.
 */
#ifndef ETHLAB_TRIM_P4
#define ETHLAB_TRIM_P4

control Trimming(inout headers hdr,
                 inout metadata meta,
                 inout standard_metadata_t standard_metadata) {

    /* Packets this switch trimmed, per egress port. */
    counter(NUM_PORTS, CounterType.packets) trimmed_counter;

    action set_trim(bit<1> enable, qdepth_t threshold, bit<32> keep_bytes) {
        meta.trim_on = enable;
        meta.trim_threshold = threshold;
        meta.trim_keep_bytes = keep_bytes;
    }

    table trim_config {
        actions = {
            set_trim;
        }
        default_action = set_trim(0, 19w0, 32w128);
    }

    apply {
        bool feedback = (hdr.ethplus.isValid() && hdr.ethplus.pkt_type == PKT_ACK) ||
                        (hdr.bth.isValid() && (hdr.bth.opcode == BTH_RC_ACK || hdr.bth.opcode == BTH_CNP));
        if (feedback) {
            standard_metadata.priority = PRIO_CONTROL;
            return;
        }
        bool data = (hdr.ethplus.isValid() && hdr.ethplus.pkt_type == PKT_DATA && hdr.ethplus.trimmed == 0) ||
                    (hdr.bth.isValid() && hdr.ipv4.dscp != DSCP_TRIMMED);
        if (!data) {
            return;
        }
        trim_config.apply();
        if (meta.trim_on == 0) {
            return;
        }
        qdepth_t depth;
        port_qdepth.read(depth, (bit<32>)standard_metadata.egress_spec);
        if (depth >= meta.trim_threshold) {
            truncate(meta.trim_keep_bytes);
            if (hdr.ethplus.isValid()) {
                hdr.ethplus.trimmed = 1;
            }
            if (hdr.ipv4.isValid()) {
                hdr.ipv4.dscp = DSCP_TRIMMED;
            }
            standard_metadata.priority = PRIO_CONTROL;
            trimmed_counter.count((bit<32>)standard_metadata.egress_spec);
        }
    }
}

#endif
