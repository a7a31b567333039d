"""controller/ethplus.py is the one copy of p4src/include/headers.p4's constants outside the P4 program:
read the P4 source and compare every constant the module carries (and that the P4 file defines)."""

from __future__ import annotations

import re
from pathlib import Path

from controller import ethplus

HEADERS = Path(__file__).resolve().parents[2] / "p4src" / "include" / "headers.p4"
CONST = re.compile(r"^\s*const\s+bit<(?P<width>\d+)>\s+(?P<name>[A-Z_][A-Z0-9_]*)\s*=\s*(?P<value>0[xX][0-9a-fA-F]+|\d+)\s*;",
                   re.M)


def p4_constants() -> dict[str, tuple[int, int]]:
    text = re.sub(r"/\*.*?\*/", "", HEADERS.read_text(), flags=re.S)
    return {m["name"]: (int(m["value"], 0), int(m["width"])) for m in CONST.finditer(text)}


def module_constants() -> dict[str, int]:
    return {k: v for k, v in vars(ethplus).items() if k.isupper() and isinstance(v, int)}


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


def test_the_values_the_controller_and_traffic_rely_on_are_there() -> None:
    needed = {"ETHERTYPE_ETHPLUS", "UDP_PORT_ROCE", "CPU_PORT", "ETHPLUS_VERSION", "PKT_DATA", "PKT_ACK", "PKT_PROBE",
              "PKT_CREDIT", "LB_ECMP", "LB_SPRAY", "LB_FLOWLET", "LB_ADAPTIVE", "PUNT_ARP"}
    assert needed <= set(module_constants())
    p4 = p4_constants()
    # every packet type and load-balancing mode of the P4 program is named here (a new one must be added)
    for prefix in ("PKT_", "LB_"):
        assert {n for n in p4 if n.startswith(prefix)} <= set(module_constants()), prefix
    assert set(ethplus.PKT_TYPES) == {v for n, (v, _w) in p4.items() if n.startswith("PKT_")}
    assert set(ethplus.LB_MODES) == {v for n, (v, _w) in p4.items() if n.startswith("LB_")}


def test_traffic_layers_take_the_same_objects() -> None:
    from traffic import layers

    for name in ("ETHERTYPE_ETHPLUS", "PKT_PROBE", "LB_ADAPTIVE", "CPU_PORT", "UDP_PORT_ROCE"):
        assert getattr(layers, name) is getattr(ethplus, name)
