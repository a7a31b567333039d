/* fuzz.p4 -- tests/p4runtime/test_fuzz_model.py's program: one of each thing a P4Runtime write can
 * touch (exact+lpm, ternary/range/optional priority table, an action selector table, an indexed
 * counter, a register, a meter), small sizes so tables fill up under random writes. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
struct headers { ethernet_t ethernet; }
struct metadata { bit<12> vrf; bit<16> nhop; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start { packet.extract(hdr.ethernet); transition accept; }
}
control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(8, CounterType.packets_and_bytes) port_hits;
    register<bit<32>>(8) last_seen;
    meter(4, MeterType.bytes) port_meter;
    action_selector(HashAlgorithm.crc16, 16, 16) ecmp_sel;
    action fwd(bit<9> port, bit<48> mac) { standard_metadata.egress_spec = port; hdr.ethernet.dstAddr = mac; }
    action drop() { mark_to_drop(standard_metadata); }
    action set_nhop(bit<16> nhop) { meta.nhop = nhop; }
    @defaultonly action miss() { standard_metadata.egress_spec = 7; }
    table routes {
        key = { meta.vrf: exact; hdr.ethernet.dstAddr: lpm; }
        actions = { set_nhop; drop; miss; }
        default_action = miss();
        size = 12;
    }
    table acl {
        key = { hdr.ethernet.srcAddr: ternary; hdr.ethernet.etherType: range; meta.vrf: optional; }
        actions = { fwd; drop; }
        size = 12;
    }
    table ecmp {
        key = { meta.nhop: exact; }
        actions = { fwd; drop; }
        implementation = ecmp_sel;
        size = 8;
    }
    apply {
        routes.apply();
        acl.apply();
        ecmp.apply();
        port_hits.count((bit<32>)standard_metadata.ingress_port);
        last_seen.write(0, 1);
    }
}
control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) { apply { packet.emit(hdr.ethernet); } }
V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
