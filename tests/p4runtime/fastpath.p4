/* fastpath.p4 -- tables for the fast/general write path comparison: exact+lpm keys, a priority
 * table with ternary/range/optional keys, an idle-timeout table, a @defaultonly action. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
struct headers { ethernet_t ethernet; }
struct metadata { bit<12> vrf; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start { packet.extract(hdr.ethernet); transition accept; }
}
control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action fwd(bit<9> port, bit<48> mac) { standard_metadata.egress_spec = port; hdr.ethernet.dstAddr = mac; }
    action drop() { mark_to_drop(standard_metadata); }
    @defaultonly action miss() { standard_metadata.egress_spec = 7; }
    table routes {
        key = { meta.vrf: exact; hdr.ethernet.dstAddr: lpm; }
        actions = { fwd; drop; miss; }
        default_action = miss();
        size = 64;
    }
    table acl {
        key = { hdr.ethernet.srcAddr: ternary; hdr.ethernet.etherType: range; meta.vrf: optional; }
        actions = { fwd; drop; }
        size = 64;
    }
    table hosts {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { fwd; NoAction; }
        support_timeout = true;
        size = 16;
    }
    apply { routes.apply(); acl.apply(); hosts.apply(); }
}
control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) { apply { packet.emit(hdr.ethernet); } }
V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
