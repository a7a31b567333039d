"""Small v1model program templates for p4exec's compiler tests (real programs, compiled by p4exec)."""
from __future__ import annotations

from p4exec.harness import Harness

HEAD = """
#include <core.p4>
#include <v1model.p4>
"""

# A header of four bytes a, b, c, d; ingress code is pasted in, egress_spec defaults to port 1.
TEMPLATE = HEAD + """
header h_t {{ bit<8> a; bit<8> b; bit<8> c; bit<8> d; }}
{decls}
struct headers_t {{ h_t h; {hdr_fields} }}
struct meta_t {{ bit<8> m; bit<16> w; {meta_fields} }}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    {parser_decls}
    state start {{
        pkt.extract(hdr.h);
        {parser}
        transition accept;
    }}
}}
control MyVerify(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    {ingress_decls}
    apply {{
        sm.egress_spec = 1;
        {ingress}
    }}
}}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    {egress_decls}
    apply {{ {egress} }}
}}
control MyCompute(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control MyDeparser(packet_out pkt, in headers_t hdr) {{ apply {{ pkt.emit(hdr); }} }}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
"""


def program(ingress: str = "", ingress_decls: str = "", decls: str = "", hdr_fields: str = "",
            meta_fields: str = "", parser: str = "", egress: str = "", egress_decls: str = "",
            parser_decls: str = "") -> str:
    return TEMPLATE.format(ingress=ingress, ingress_decls=ingress_decls, decls=decls, hdr_fields=hdr_fields,
                           meta_fields=meta_fields, parser=parser, egress=egress, egress_decls=egress_decls,
                           parser_decls=parser_decls)


def harness(**kw) -> Harness:
    return Harness.from_source(program(**kw), filename="test.p4", seed=1)


def run(ingress: str, data: bytes, **kw) -> list[tuple[int, bytes]]:
    return harness(ingress=ingress, **kw).send(0, data)
