"""p4src/wire.py is the one copy of p4src/include/headers.p4's constants outside the P4 program: read the P4
source and compare every constant and header size the module carries with what the P4 file defines."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from p4src import wire

REPO = Path(__file__).resolve().parents[2]
HEADERS = REPO / "p4src" / "include" / "headers.p4"
CONST = re.compile(r"^\s*const\s+bit<(?P<width>\d+)>\s+(?P<name>[A-Z_][A-Z0-9_]*)\s*=\s*(?P<value>0[xX][0-9a-fA-F]+|\d+)\s*;",
                   re.M)
TYPEDEF = re.compile(r"^\s*typedef\s+bit<(?P<width>\d+)>\s+(?P<name>\w+)\s*;", re.M)
HEADER = re.compile(r"^\s*header\s+(?P<name>\w+)\s*\{(?P<body>[^}]*)\}", re.M)
FIELD = re.compile(r"^\s*(?:bit<(?P<width>\d+)>|(?P<type>\w+))\s+\w+\s*;", re.M)


def p4_text() -> str:
    return re.sub(r"/\*.*?\*/", "", HEADERS.read_text(), flags=re.S)


def p4_constants() -> dict[str, tuple[int, int]]:
    return {m["name"]: (int(m["value"], 0), int(m["width"])) for m in CONST.finditer(p4_text())}


def p4_header_bits() -> dict[str, int]:
    """Each `header X_t { ... }` of headers.p4 and the sum of its field widths (typedefs resolved)."""
    text = p4_text()
    typedefs = {m["name"]: int(m["width"]) for m in TYPEDEF.finditer(text)}
    out = {}
    for h in HEADER.finditer(text):
        out[h["name"]] = sum(int(f["width"]) if f["width"] else typedefs[f["type"]] for f in FIELD.finditer(h["body"]))
    return out


def module_constants() -> dict[str, int]:
    return {k: v for k, v in vars(wire).items() if k.isupper() and isinstance(v, int) and not k.endswith("_BYTES")}


def test_every_constant_matches_headers_p4() -> None:
    p4 = p4_constants()
    ours = module_constants()
    assert len(p4) > 20, "the P4 constants were found"
    missing = sorted(set(ours) - set(p4))
    assert not missing, f"not defined in {HEADERS.name}: {missing}"
    for name, value in ours.items():
        want, width = p4[name]
        assert value == want, f"{name}: {value} here, {want} in {HEADERS.name}"
        assert value < (1 << width)


def test_every_header_size_matches_headers_p4() -> None:
    bits = p4_header_bits()
    assert set(bits) == set(wire.HEADER_BYTES), "every header of headers.p4 has its size here, and no other"
    for name, nbits in bits.items():
        assert nbits % 8 == 0, f"{name} is not a whole number of bytes ({nbits} bits)"
        assert wire.HEADER_BYTES[name] == nbits // 8, f"{name}: {wire.HEADER_BYTES[name]} B here, {nbits // 8} in P4"
    assert (wire.ETHERNET_BYTES, wire.ETHPLUS_BYTES, wire.IPV4_BYTES, wire.UDP_BYTES, wire.BTH_BYTES) == (
        bits["ethernet_t"] // 8, bits["ethplus_t"] // 8, bits["ipv4_t"] // 8, bits["udp_t"] // 8, bits["bth_t"] // 8)


def test_the_values_the_controller_and_traffic_rely_on_are_there() -> None:
    needed = {"ETHERTYPE_ETHPLUS", "UDP_PORT_ROCE", "CPU_PORT", "ETHPLUS_VERSION", "PKT_DATA", "PKT_ACK", "PKT_PROBE",
              "PKT_CREDIT", "LB_ECMP", "LB_SPRAY", "LB_FLOWLET", "LB_ADAPTIVE", "PUNT_ARP", "BTH_RC_ACK", "BTH_CNP",
              "DSCP_TRIMMED"}
    assert needed <= set(module_constants())
    p4 = p4_constants()
    # every packet type and load-balancing mode of the P4 program is named here (a new one must be added)
    for prefix in ("PKT_", "LB_"):
        assert {n for n in p4 if n.startswith(prefix)} <= set(module_constants()), prefix
    assert set(wire.PKT_TYPES) == {v for n, (v, _w) in p4.items() if n.startswith("PKT_")}
    assert set(wire.LB_MODES) == {v for n, (v, _w) in p4.items() if n.startswith("LB_")}


def test_traffic_and_controller_take_the_same_objects() -> None:
    from controller import probes
    from traffic import frames, layers

    for name in ("ETHERTYPE_ETHPLUS", "PKT_PROBE", "LB_ADAPTIVE", "CPU_PORT", "UDP_PORT_ROCE"):
        assert getattr(layers, name) is getattr(wire, name)
    assert probes.ETHERTYPE_ETHPLUS is wire.ETHERTYPE_ETHPLUS
    assert frames.BTH_CNP is wire.BTH_CNP and frames.DSCP_TRIMMED is wire.DSCP_TRIMMED
    assert frames.ROCE_HEADERS == 14 + 20 + 8 + 12 and frames.ETHPLUS_HEADERS == 14 + 12


def test_vfabric_imports_without_mininet() -> None:
    """The virtual-time fabric needs no Mininet: importing it with `mininet` blocked works."""
    code = ("import sys; sys.modules['mininet'] = None; import vfabric, vfabric.fabric, vfabric.run, vfabric.control, "
            "ethlab.experiment.virtual_trial")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
