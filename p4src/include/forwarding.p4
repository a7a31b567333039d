/* forwarding.p4 -- where does the packet want to go?
 *
 * Scale-up ETH+ frames are routed on their destination endpoint id (exact),
 * scale-out IPv4 on the destination address (longest prefix). Both resolve
 * to a next-hop GROUP (a set of candidate egress ports) plus a destination
 * index for adaptive-routing state; choosing the port within the group is
 * loadbalance.p4's job. This control also enforces hop limits and builds the
 * flow key every path-selection mode hashes.
 *
 * Problems are reported in meta.drop_reason; MyIngress drops and counts.
 */
#ifndef ETHLAB_FORWARDING_P4
#define ETHLAB_FORWARDING_P4

control Forwarding(inout headers hdr,
                   inout metadata meta,
                   inout standard_metadata_t standard_metadata) {

    action no_route() {
        meta.drop_reason = DROP_NO_ROUTE;
    }

    /* Scale-up: the controller maps each endpoint id to a group. */
    action eid_to_group(bit<16> group_id, bit<16> dst_index) {
        meta.group_id = group_id;
        meta.dst_index = dst_index;
        meta.has_group = 1;
    }

    table eid_table {
        key = {
            hdr.ethplus.dst_id: exact;
        }
        actions = {
            eid_to_group;
            no_route;
        }
        size = 1024;
        default_action = no_route();
    }

    /* Scale-out: a routed hop, so egress rewrites the MAC addresses. */
    action ipv4_to_group(bit<16> group_id, bit<16> dst_index) {
        meta.group_id = group_id;
        meta.dst_index = dst_index;
        meta.has_group = 1;
        meta.routed = 1;
    }

    table ipv4_lpm {
        key = {
            hdr.ipv4.dstAddr: lpm;
        }
        actions = {
            ipv4_to_group;
            no_route;
        }
        size = 4096;
        default_action = no_route();
    }

    apply {
        if (hdr.ethplus.isValid()) {
            if (hdr.ethplus.hop_limit <= 1) {
                /* It would arrive with 0 hops left: stop loops here. */
                meta.drop_reason = DROP_HOP_EXPIRED;
            } else {
                hdr.ethplus.hop_limit = hdr.ethplus.hop_limit - 1;
                /* The sender's entropy names the path; src/dst keep
                 * different endpoint pairs apart even with equal entropy. */
                meta.flow_src = (bit<32>)hdr.ethplus.src_id;
                meta.flow_dst = (bit<32>)hdr.ethplus.dst_id;
                meta.flow_proto = 0;
                meta.flow_sport = hdr.ethplus.entropy;
                meta.flow_dport = 0;
                /* Probes are not forwarded by destination: see LoadBalance. */
                if (!hdr.probe.isValid()) {
                    eid_table.apply();
                }
            }
        } else if (hdr.ipv4.isValid()) {
            if (standard_metadata.checksum_error == 1) {
                meta.drop_reason = DROP_BAD_CHECKSUM;
            } else if (hdr.ipv4.ttl <= 1) {
                meta.drop_reason = DROP_HOP_EXPIRED;
            } else {
                hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                meta.flow_src = hdr.ipv4.srcAddr;
                meta.flow_dst = hdr.ipv4.dstAddr;
                meta.flow_proto = hdr.ipv4.protocol;
                if (hdr.udp.isValid()) {
                    /* For RoCEv2 the UDP source port is the sender's entropy. */
                    meta.flow_sport = hdr.udp.srcPort;
                    meta.flow_dport = hdr.udp.dstPort;
                }
                ipv4_lpm.apply();
            }
        } else {
            meta.drop_reason = DROP_UNHANDLED;
        }

        /* One 16-bit flow hash serves flowlet slots and tie-breaking. */
        hash(meta.flow_hash, HashAlgorithm.crc16, 16w0,
             { meta.flow_src, meta.flow_dst, meta.flow_proto,
               meta.flow_sport, meta.flow_dport },
             32w65536);
    }
}

#endif
