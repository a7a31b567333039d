/* ecn.p4 -- DCQCN-style RED/ECN marking in egress.
 *
 * Marking happens in egress because only there the queue the packet just
 * left is known (deq_qdepth). Per egress port the controller sets
 *   Kmin, Kmax (packets) and Pmax (probability in units of 1/65536):
 *   depth <= Kmin         never mark
 *   Kmin < depth < Kmax   mark with probability Pmax * (depth-Kmin)/(Kmax-Kmin)
 *   depth >= Kmax         always mark
 * Only ECN-capable packets are marked: IPv4 with ECT(0)/ECT(1) (or already
 * CE) and ETH+ with the ect bit; a mark sets IPv4 ECN to CE (11) and/or the
 * ETH+ ce bit. Ports without an ecn_config entry never mark.
 */
#ifndef ETHLAB_ECN_P4
#define ETHLAB_ECN_P4

control EcnMarking(inout headers hdr,
                   inout metadata meta,
                   inout standard_metadata_t standard_metadata) {

    /* Packets this switch marked, per egress port. */
    counter(NUM_PORTS, CounterType.packets) ecn_marked;

    action set_ecn_thresholds(qdepth_t kmin, qdepth_t kmax, bit<16> pmax) {
        meta.ecn_on = 1;
        meta.ecn_kmin = kmin;
        meta.ecn_kmax = kmax;
        meta.ecn_pmax = pmax;
    }

    action no_ecn() {
        meta.ecn_on = 0;
    }

    table ecn_config {
        key = {
            standard_metadata.egress_port: exact;
        }
        actions = {
            set_ecn_thresholds;
            no_ecn;
        }
        size = NUM_PORTS;
        default_action = no_ecn();
    }

    apply {
        bool capable = (hdr.ipv4.isValid() && hdr.ipv4.ecn != 0) ||
                       (hdr.ethplus.isValid() && hdr.ethplus.ect == 1);
        if (!capable) {
            return;
        }
        ecn_config.apply();
        if (meta.ecn_on == 0) {
            return;
        }

        qdepth_t depth = standard_metadata.deq_qdepth;
        bool mark = false;
        if (depth >= meta.ecn_kmax) {
            mark = true;
        } else if (depth > meta.ecn_kmin) {
            /* Mark iff r/65536 < Pmax/65536 * (depth-Kmin)/(Kmax-Kmin),
             * cross-multiplied so no division is needed. */
            bit<16> r;
            random(r, 16w0, 16w0xFFFF);
            bit<64> lhs = (bit<64>)r * (bit<64>)(meta.ecn_kmax - meta.ecn_kmin);
            bit<64> rhs = (bit<64>)meta.ecn_pmax * (bit<64>)(depth - meta.ecn_kmin);
            if (lhs < rhs) {
                mark = true;
            }
        }

        if (mark) {
            if (hdr.ipv4.isValid()) {
                hdr.ipv4.ecn = 2w3;
            }
            if (hdr.ethplus.isValid()) {
                hdr.ethplus.ce = 1;
            }
            ecn_marked.count((bit<32>)standard_metadata.egress_port);
        }
    }
}

#endif
