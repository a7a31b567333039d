/* queue_probe.p4 -- the switch tests' own program: port-to-port forwarding plus
 * registers that make the traffic manager and link state visible.
 *   MyIngress.port_map      ingress_port -> egress port (exact)
 *   MyEgress.max_enq_qdepth highest enq_qdepth seen per egress port
 *   MyEgress.last_timedelta deq_timedelta of the last packet per egress port
 *   MyEgress.egress_count   packets that reached egress, per egress port
 *   port_down               written by the switch: 1 = link down (p4src/include/port_state.p4)
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers { ethernet_t ethernet; }
struct metadata { }

register<bit<1>>(512) port_down;

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action set_port(bit<9> port) { standard_metadata.egress_spec = port; }
    action drop() { mark_to_drop(standard_metadata); }
    table port_map {
        key = { standard_metadata.ingress_port: exact; }
        actions = { set_port; drop; }
        default_action = drop();
        size = 64;
    }
    apply { port_map.apply(); }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    register<bit<32>>(512) max_enq_qdepth;
    register<bit<32>>(512) last_timedelta;
    counter(512, CounterType.packets) egress_count;
    apply {
        bit<32> port = (bit<32>)standard_metadata.egress_port;
        bit<32> seen;
        max_enq_qdepth.read(seen, port);
        if ((bit<32>)standard_metadata.enq_qdepth > seen) {
            max_enq_qdepth.write(port, (bit<32>)standard_metadata.enq_qdepth);
        }
        last_timedelta.write(port, standard_metadata.deq_timedelta);
        egress_count.count(port);
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
