/* deparser.p4 -- checksum controls and the deparser of ethplus.p4. */
#ifndef ETHLAB_DEPARSER_P4
#define ETHLAB_DEPARSER_P4

control EthPlusVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply {
        /* A mismatch sets standard_metadata.checksum_error; ingress drops. */
        verify_checksum(
            hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control EthPlusComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        /* TTL and ECN change per hop, so the checksum is recomputed.
         * RoCEv2's ICRC masks both fields and its UDP checksum is 0,
         * so neither needs touching. */
        update_checksum(
            hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

control EthPlusDeparser(packet_out packet, in headers hdr) {
    apply {
        /* Invalid headers are skipped, so one order serves every kind. */
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.arp);
        packet.emit(hdr.ethplus);
        packet.emit(hdr.probe);
#ifdef ETHLAB_INC
        packet.emit(hdr.inc);
        packet.emit(hdr.inc_data);
#endif
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.bth);
    }
}

#endif
