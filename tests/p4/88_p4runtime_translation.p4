// @p4runtime_translation on `type`s the control plane uses: P4Info shows the SDN side (translated_type, the
// SDN width, 0 for a string) and p4exec's P4Runtime server maps SDN values to the device values used here
// (tests/p4exec/test_sdn_translation.py), also in packet-in/out metadata; the STF driver uses device values
#include <core.p4>
#include <v1model.p4>

@p4runtime_translation("ethlab.example/port", 32)
type bit<9> port_t;
@p4runtime_translation("ethlab.example/tenant", string)
type bit<8> tenant_t;

header h_t { bit<8> tenant; bit<8> mark; bit<16> tag; }
@controller_header("packet_in") header pin_t { port_t ingress_port; bit<7> pad; }
@controller_header("packet_out") header pout_t { port_t egress_port; bit<7> pad; }
struct headers_t { pin_t pin; pout_t pout; h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { transition select(sm.ingress_port) { 255: from_cpu; default: data; } }
    state from_cpu { pkt.extract(hdr.pout); transition data; }
    state data { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action to_port(port_t port, bit<8> mark) { sm.egress_spec = (bit<9>)port; hdr.h.mark = mark; }
    action drop() { mark_to_drop(sm); }
    action to_cpu() {
        sm.egress_spec = 255;
        hdr.pin.setValid();
        hdr.pin.ingress_port = (port_t)sm.ingress_port;
        hdr.pin.pad = 0;
    }
    table by_tenant {
        key = { (tenant_t)hdr.h.tenant : exact @name("tenant"); }
        actions = { to_port; drop; to_cpu; }
        default_action = drop();
    }
    apply {
        if (hdr.pout.isValid()) {
            sm.egress_spec = (bit<9>)hdr.pout.egress_port;
            hdr.pout.setInvalid();
        } else {
            by_tenant.apply();
        }
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.pin); pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
