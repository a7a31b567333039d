"""The fast paths the speed work added keep their meaning (no timing is asserted here).

- Generated checksums compute csum16 on the field list's integer (`rt.csum16_int`) instead of building
  bytes: the same value as the byte-wise RFC 1071 checksum for every width and value.
- bench/virtual.py's ns-3 P4sim case (one vfabric switch on p4src/basic_l3.p4, two hosts, 1000-byte frames)
  delivers every frame with the IPv4 checksum the program recomputed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p4exec.runtime.hashes import csum16
from p4exec.v1model.rt import csum16_int

ROOT = Path(__file__).resolve().parents[2]


@given(st.binary(min_size=1, max_size=64))
def test_integer_checksum_equals_bytewise(data: bytes) -> None:
    v = int.from_bytes(data, "big")
    if len(data) % 2:
        v <<= 8  # csum16 pads an odd byte count with a zero byte
    assert csum16_int(v) == csum16(data)


def test_integer_checksum_edge_values() -> None:
    for data in (b"\x00\x00", b"\xff\xff", b"\xff\xff" * 9, b"\x00\x01\xff\xfe", bytes(18)):
        assert csum16_int(int.from_bytes(data, "big")) == csum16(data), data


def test_p4sim_case_forwards_every_frame(capsys) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import virtual  # bench/virtual.py
    finally:
        sys.path.remove(str(ROOT / "bench"))
    virtual.p4sim_case(300)  # asserts: complete, no loss, no switch drop, every frame 1000 B
    out = capsys.readouterr().out
    assert "300 packets of 1000 B" in out and "vs ns-3 P4sim" in out


@pytest.mark.parametrize("kind", ["python", "native"])
def test_pipeline_round_taps_the_arrivals_on_either_pipeline(kind: str) -> None:
    """bench/virtual.py's part 1 replays the frames the switch was sent; the native pipeline's switch takes
    same-instant arrivals as one batch (`receive_batch`), which the tap once missed (the bench then divided by
    zero), so both arrival paths are tapped."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import virtual  # bench/virtual.py
    finally:
        sys.path.remove(str(ROOT / "bench"))
    from p4exec.native.select import pipeline_choice

    with pipeline_choice(kind):
        executed, events, cpu, wall, rate_cpu, rate_wall, n, virtual_us = virtual.pipeline_round(64 << 10)
    assert executed > 0 and events > 0 and virtual_us > 0
    assert n == min(max(executed, 5000), 40000) and rate_cpu > 0 and rate_wall > 0
