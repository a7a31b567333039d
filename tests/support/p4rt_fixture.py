"""A P4Info built from real protobuf messages, shaped like a small v1model router."""

from __future__ import annotations

from pathlib import Path

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

MF = p4info_pb2.MatchField

A_NOACTION = 0x01000001
A_SET_NHOP = 0x01000002
A_DROP = 0x01000003
A_SET_PORT = 0x01000004
A_DEFAULT_ONLY = 0x01000005
T_LPM = 0x02000001
T_ACL = 0x02000002
T_ECMP = 0x02000003
T_CONST = 0x02000004
T_HOSTS = 0x02000005
CPM_IN = 0x04000001
CPM_OUT = 0x04000002
AP_SEL = 0x11000001
C_PORT = 0x12000001
DC_LPM = 0x13000001
M_PORT = 0x14000001
DM_ACL = 0x15000001
R_REG = 0x16000001
D_LEARN = 0x17000001
VS_PORTS = 0x03000001


def _preamble(obj, oid: int, name: str) -> None:
    obj.preamble.id = oid
    obj.preamble.name = name
    obj.preamble.alias = name.split(".")[-1]


def build_p4info() -> p4info_pb2.P4Info:
    p = p4info_pb2.P4Info()
    p.pkg_info.arch = "v1model"
    for aid, name, params in (
        (A_NOACTION, "NoAction", []),
        (A_SET_NHOP, "MyIngress.set_nhop", [("dstAddr", 48), ("port", 9)]),
        (A_DROP, "MyIngress.drop", []),
        (A_SET_PORT, "MyIngress.set_port", [("port", 9)]),
        (A_DEFAULT_ONLY, "MyIngress.miss", []),
    ):
        a = p.actions.add()
        _preamble(a, aid, name)
        for i, (pname, width) in enumerate(params, 1):
            a.params.add(id=i, name=pname, bitwidth=width)

    t = p.tables.add()
    _preamble(t, T_LPM, "MyIngress.ipv4_lpm")
    t.match_fields.add(id=1, name="hdr.ipv4.dstAddr", bitwidth=32, match_type=MF.LPM)
    t.action_refs.add(id=A_SET_NHOP)
    t.action_refs.add(id=A_DROP)
    t.action_refs.add(id=A_NOACTION)
    t.action_refs.add(id=A_DEFAULT_ONLY, scope=p4info_pb2.ActionRef.DEFAULT_ONLY)
    t.initial_default_action.action_id = A_DROP
    t.direct_resource_ids.append(DC_LPM)
    t.size = 4

    t = p.tables.add()
    _preamble(t, T_ACL, "MyIngress.acl")
    t.match_fields.add(id=1, name="hdr.ipv4.srcAddr", bitwidth=32, match_type=MF.TERNARY)
    t.match_fields.add(id=2, name="hdr.tcp.dstPort", bitwidth=16, match_type=MF.RANGE)
    t.match_fields.add(id=3, name="standard_metadata.ingress_port", bitwidth=9,
                       match_type=MF.OPTIONAL)
    t.match_fields.add(id=4, name="hdr.ipv4.protocol", bitwidth=8, match_type=MF.EXACT)
    t.action_refs.add(id=A_SET_PORT)
    t.action_refs.add(id=A_DROP)
    t.action_refs.add(id=A_NOACTION)
    t.direct_resource_ids.append(DM_ACL)
    t.size = 64

    t = p.tables.add()
    _preamble(t, T_ECMP, "MyIngress.ecmp")
    t.match_fields.add(id=1, name="meta.nhop", bitwidth=16, match_type=MF.EXACT)
    t.action_refs.add(id=A_SET_NHOP)
    t.action_refs.add(id=A_NOACTION)
    t.implementation_id = AP_SEL
    t.size = 16

    t = p.tables.add()
    _preamble(t, T_CONST, "MyIngress.fixed")
    t.match_fields.add(id=1, name="meta.x", bitwidth=8, match_type=MF.EXACT)
    t.action_refs.add(id=A_NOACTION)
    t.const_default_action_id = A_NOACTION
    t.initial_default_action.action_id = A_NOACTION
    t.is_const_table = True

    t = p.tables.add()
    _preamble(t, T_HOSTS, "MyIngress.hosts")
    t.match_fields.add(id=1, name="hdr.ethernet.srcAddr", bitwidth=48, match_type=MF.EXACT)
    t.action_refs.add(id=A_NOACTION)
    t.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
    t.size = 8

    ap = p.action_profiles.add()
    _preamble(ap, AP_SEL, "MyIngress.ecmp_selector")
    ap.table_ids.append(T_ECMP)
    ap.with_selector = True
    ap.size = 32
    ap.max_group_size = 8

    c = p.counters.add()
    _preamble(c, C_PORT, "MyIngress.port_counter")
    c.spec.unit = p4info_pb2.CounterSpec.BOTH
    c.size = 8
    dc = p.direct_counters.add()
    _preamble(dc, DC_LPM, "MyIngress.lpm_counter")
    dc.spec.unit = p4info_pb2.CounterSpec.BOTH
    dc.direct_table_id = T_LPM
    m = p.meters.add()
    _preamble(m, M_PORT, "MyIngress.port_meter")
    m.spec.unit = p4info_pb2.MeterSpec.BYTES
    m.size = 4
    dm = p.direct_meters.add()
    _preamble(dm, DM_ACL, "MyIngress.acl_meter")
    dm.spec.unit = p4info_pb2.MeterSpec.PACKETS
    dm.direct_table_id = T_ACL
    r = p.registers.add()
    _preamble(r, R_REG, "MyIngress.reg")
    r.type_spec.bitstring.bit.bitwidth = 32
    r.size = 16

    d = p.digests.add()
    _preamble(d, D_LEARN, "learn_t")
    d.type_spec.struct.name = "learn_t"
    st = p.type_info.structs["learn_t"]
    for name, width in (("srcAddr", 48), ("port", 9)):
        member = st.members.add(name=name)
        member.type_spec.bitstring.bit.bitwidth = width

    vs = p.value_sets.add()
    _preamble(vs, VS_PORTS, "MyParser.tcp_ports")
    vs.match.add(id=1, name="port", bitwidth=16, match_type=MF.TERNARY)
    vs.size = 2

    cpm = p.controller_packet_metadata.add()
    _preamble(cpm, CPM_IN, "packet_in")
    cpm.metadata.add(id=1, name="ingress_port", bitwidth=9)
    cpm.metadata.add(id=2, name="_pad", bitwidth=7)
    cpm = p.controller_packet_metadata.add()
    _preamble(cpm, CPM_OUT, "packet_out")
    cpm.metadata.add(id=1, name="egress_port", bitwidth=9)
    cpm.metadata.add(id=2, name="_pad", bitwidth=7)
    return p


# The learning-switch program of tests/p4runtime (compiled by the server under test).
SOURCE = (Path(__file__).resolve().parents[1] / "p4runtime" / "cpu_l2.p4").read_bytes()


def frame(dst: int, src: int = 0x02_00_00_00_00_01, payload: bytes = b"payload!") -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + b"\x88\xb5" + payload


def lpm_entry(prefix: int = 0x0A000100, plen: int = 24, port: int = 1):
    e = p4runtime_pb2.TableEntry(table_id=T_LPM)
    m = e.match.add(field_id=1)
    m.lpm.value = prefix.to_bytes(4, "big")
    m.lpm.prefix_len = plen
    a = e.action.action
    a.action_id = A_SET_NHOP
    a.params.add(param_id=1, value=b"\x0a")
    a.params.add(param_id=2, value=bytes([port]))
    return e


def acl_entry(priority=10, src=(0x0A000000, 0xFF000000), ports=(80, 90), inport=None, proto=6,
              action=A_SET_PORT):
    e = p4runtime_pb2.TableEntry(table_id=T_ACL, priority=priority)
    if src is not None:
        m = e.match.add(field_id=1)
        m.ternary.value = src[0].to_bytes(4, "big")
        m.ternary.mask = src[1].to_bytes(4, "big")
    if ports is not None:
        m = e.match.add(field_id=2)
        m.range.low = ports[0].to_bytes(2, "big")
        m.range.high = ports[1].to_bytes(2, "big")
    if inport is not None:
        e.match.add(field_id=3).optional.value = inport.to_bytes(2, "big")
    e.match.add(field_id=4).exact.value = bytes([proto])
    e.action.action.action_id = action
    if action == A_SET_PORT:
        e.action.action.params.add(param_id=1, value=b"\x03")
    return e
