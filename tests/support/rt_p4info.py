"""A hand-written P4Info (text format) covering every runtime object, shared by the runtime tests.

A module of its own (not conftest) so its name cannot clash with other test folders' helpers."""
from __future__ import annotations

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

P4INFO_TXT = """
tables {
  preamble { id: 33554433 name: "MyIngress.ipv4_lpm" }
  match_fields { id: 1 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 }
  action_refs { id: 16777219 scope: DEFAULT_ONLY }
  direct_resource_ids: 318767105
  size: 4
}
tables {
  preamble { id: 33554434 name: "MyIngress.acl" }
  match_fields { id: 1 name: "hdr.ethernet.etherType" bitwidth: 16 match_type: TERNARY }
  match_fields { id: 2 name: "meta.port" bitwidth: 9 match_type: RANGE }
  match_fields { id: 3 name: "meta.flag" bitwidth: 1 match_type: OPTIONAL }
  action_refs { id: 16777218 }
  action_refs { id: 16777220 scope: TABLE_ONLY }
  size: 1024
}
tables {
  preamble { id: 33554435 name: "MyIngress.mac" }
  match_fields { id: 1 name: "hdr.ethernet.dstAddr" bitwidth: 48 match_type: EXACT }
  match_fields { id: 2 name: "meta.vrf" bitwidth: 8 match_type: EXACT }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 }
  const_default_action_id: 16777218
  size: 1024
}
tables {
  preamble { id: 33554436 name: "MyIngress.ecmp" }
  match_fields { id: 1 name: "meta.nhop_group" bitwidth: 16 match_type: EXACT }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 }
  implementation_id: 285212673
  size: 1024
}
tables {
  preamble { id: 33554437 name: "MyIngress.consts" }
  match_fields { id: 1 name: "hdr.x" bitwidth: 8 match_type: EXACT }
  action_refs { id: 16777218 }
  is_const_table: true
  size: 16
}
tables {
  preamble { id: 33554438 name: "MyIngress.vrf_lpm" }
  match_fields { id: 1 name: "meta.vrf" bitwidth: 8 match_type: EXACT }
  match_fields { id: 2 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 }
  size: 1024
}
actions {
  preamble { id: 16777217 name: "MyIngress.ipv4_forward" }
  params { id: 1 name: "dstAddr" bitwidth: 48 }
  params { id: 2 name: "port" bitwidth: 9 }
}
actions { preamble { id: 16777218 name: "MyIngress.drop" } }
actions { preamble { id: 16777219 name: "NoAction" } }
actions {
  preamble { id: 16777220 name: "MyIngress.set_port" }
  params { id: 1 name: "port" bitwidth: 9 }
}
action_profiles {
  preamble { id: 285212673 name: "MyIngress.ecmp_selector" }
  table_ids: 33554436
  with_selector: true
  size: 64
  max_group_size: 8
}
counters {
  preamble { id: 302000001 name: "MyIngress.port_counter" }
  spec { unit: BOTH }
  size: 8
}
direct_counters {
  preamble { id: 318767105 name: "MyIngress.lpm_hits" }
  spec { unit: PACKETS }
  direct_table_id: 33554433
}
meters {
  preamble { id: 335544321 name: "MyIngress.port_meter" }
  spec { unit: PACKETS }
  size: 4
}
registers {
  preamble { id: 369098753 name: "MyIngress.reg" }
  type_spec { bitstring { bit { bitwidth: 16 } } }
  size: 8
}
digests {
  preamble { id: 385875969 name: "learn_t" }
  type_spec { struct { name: "learn_t" } }
}
"""


def make_p4info() -> p4info_pb2.P4Info:
    return text_format.Parse(P4INFO_TXT, p4info_pb2.P4Info())
