/* client_lab.p4 -- a small program that exercises every part of the controller's client:
 * an exact table with a direct counter, an indexed counter, a register, packet-in/out via the
 * CPU port, multicast, an ingress-to-egress clone and a digest. Test program only. */
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}

struct seen_t {
    bit<48> src;
    bit<9>  port;
}

struct metadata {
    seen_t seen;
}

parser LabParser(packet_in packet, out headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_out;
            default: parse_ethernet;
        }
    }
    state parse_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control LabVerify(inout headers hdr, inout metadata meta) { apply { } }

control LabIngress(inout headers hdr, inout metadata meta,
                   inout standard_metadata_t standard_metadata) {
    counter(16, CounterType.packets_and_bytes) rx_count;
    register<bit<32>>(16) last_len;
    direct_counter(CounterType.packets_and_bytes) hits;

    action drop() { mark_to_drop(standard_metadata); }
    action forward(bit<9> port) { standard_metadata.egress_spec = port; }
    action flood(bit<16> grp) { standard_metadata.mcast_grp = grp; }
    action punt() {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        hdr.packet_in._pad = 0;
    }
    action report(bit<9> port) {
        meta.seen.src = hdr.ethernet.src;
        meta.seen.port = standard_metadata.ingress_port;
        digest<seen_t>(1, meta.seen);
        standard_metadata.egress_spec = port;
    }
    action mirror(bit<9> port, bit<32> session) {
        standard_metadata.egress_spec = port;
        clone(CloneType.I2E, session);
    }

    table l2 {
        key = { hdr.ethernet.dst: exact; }
        actions = { forward; flood; punt; report; mirror; drop; }
        default_action = drop();
        counters = hits;
        size = 64;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            rx_count.count((bit<32>) standard_metadata.ingress_port);
            last_len.write((bit<32>) standard_metadata.ingress_port, standard_metadata.packet_length);
            l2.apply();
        }
    }
}

control LabEgress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control LabCompute(inout headers hdr, inout metadata meta) { apply { } }

control LabDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(LabParser(), LabVerify(), LabIngress(), LabEgress(), LabCompute(), LabDeparser()) main;
