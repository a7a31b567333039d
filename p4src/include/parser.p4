/* parser.p4 -- the one parser of ethplus.p4.
 *
 * Frames from the controller start with packet_out; everything else starts
 * with Ethernet. Three kinds of traffic follow Ethernet:
 *   ETH+ (scale-up, EtherType 0x88B5)  [+ probe body when pkt_type == probe]
 *   IPv4 [+ UDP [+ RoCEv2 BTH on UDP 4791]]  (scale-out)
 *   ARP (handed to the controller)
 * Anything else is accepted with only Ethernet valid; ingress drops it.
 */
#ifndef ETHLAB_PARSER_P4
#define ETHLAB_PARSER_P4

parser EthPlusParser(packet_in packet,
                     out headers hdr,
                     inout metadata meta,
                     inout standard_metadata_t standard_metadata) {

    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_ETHPLUS: parse_ethplus;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_ARP: parse_arp;
#ifdef ETHLAB_INC
            ETHERTYPE_INC: parse_inc;
#endif
            default: accept;
        }
    }

    state parse_ethplus {
        packet.extract(hdr.ethplus);
        transition select(hdr.ethplus.pkt_type) {
            PKT_PROBE: parse_probe;
            default: accept;
        }
    }

    state parse_probe {
        packet.extract(hdr.probe);
        transition accept;
    }

#ifdef ETHLAB_INC
    /* In-network aggregation: ETH+ header, aggregation header, elements. */
    state parse_inc {
        packet.extract(hdr.ethplus);
        packet.extract(hdr.inc);
        packet.extract(hdr.inc_data);
        transition accept;
    }

#endif
    state parse_arp {
        packet.extract(hdr.arp);
        transition accept;
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        /* Only option-less headers have UDP right after 20 bytes. */
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (4w5, IPPROTO_UDP): parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            UDP_PORT_ROCE: parse_bth;
            default: accept;
        }
    }

    state parse_bth {
        packet.extract(hdr.bth);
        transition accept;
    }
}

#endif
