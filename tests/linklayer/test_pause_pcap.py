"""PFC pause frames are real frames on the emulated wire: the leaf/spine 3->1 incast of test_both_clocks_pfc.py
with PFC, its switches capturing every port (`p4exec switch --pcap`), the captures read back with scapy's
802.1Qbb dissector. Every pause frame the switches counted is in their egress captures, and each is what
docs/flow-control.md says: to 01-80-C2-00-00-01, EtherType 0x8808, opcode 0x0101, one priority enabled with
the configured quanta (XOFF) or 0 (XON), the other pause times 0, padded to 60 bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether
from scapy.packet import Packet
from scapy.utils import rdpcap

from ethlab.experiment.emulated import run_emulated_trial
from linklayer import LinkLayerConfig
from linklayer.pfc import MAC_CONTROL_TYPE, PFC_DST, PFC_OPCODE
from tests.linklayer.test_both_clocks_pfc import _setup

pytestmark = [pytest.mark.netns, pytest.mark.timeout(400)]

QUANTA = 12345  # not the default (65535), so the capture shows the configured value: 632 ms at 10 Mbit/s
LINK = LinkLayerConfig.parse({"flow_control": "pfc", "pfc": {"xoff_bytes": 30_000, "xon_bytes": 15_000,
                                                             "headroom_bytes": 400_000, "quanta": QUANTA}})


def _pauses(pcap: Path) -> list[Packet]:
    return [p for p in rdpcap(str(pcap)) if Ether in p and p[Ether].type == MAC_CONTROL_TYPE]


def test_pause_frames_are_on_the_wire_as_configured(tmp_path: Path) -> None:
    setup = _setup()
    setup.link_layer = LINK
    pcaps = tmp_path / "pcap"
    res = run_emulated_trial(setup, tmp_path / "run", pcap_dir=pcaps)
    s, ll = res.summary, res.summary["link_layer"]
    assert s["complete"] and s["packets_lost"] == 0 and ll["buffer_drops"] == 0, (s, ll)
    counted = sum(r["pause_tx"] for r in res.links)  # per switch port, from the switches' own counters
    assert counted > 0

    out = sorted(pcaps.glob("*_out.pcap"))
    assert out, f"no captures in {pcaps}"
    frames = [p for f in out for p in _pauses(f)]
    assert len(frames) == counted  # every pause the switches sent is on the wire, and nothing else of 0x8808
    xoff = xon = 0
    for p in frames:
        raw = bytes(p)
        assert len(raw) == 60 and p[Ether].dst == ":".join(f"{b:02x}" for b in PFC_DST)
        pfc = p[MACControlClassBasedFlowControl]
        assert pfc._op_code == PFC_OPCODE
        enabled = [c for c in range(8) if getattr(pfc, f"c{c}_enabled")]
        assert len(enabled) == 1, enabled  # one priority per frame, the one whose buffer crossed
        prio = enabled[0]
        assert int.from_bytes(raw[16:18], "big") == 1 << prio  # the class enable vector as a whole
        times = [getattr(pfc, f"c{c}_pause_time") for c in range(8)]
        assert times[prio] in (QUANTA, 0) and sum(times) == times[prio], times
        xoff += times[prio] == QUANTA
        xon += times[prio] == 0
    assert xoff > 0 and xon > 0  # pauses and resumes both went out

    # what the switches' ports received (their in captures are the wire too): the hosts never pause (their
    # buffer is their memory), so exactly the pauses a switch sent towards another switch
    switches = {n.name for n in setup.topo.switches}
    to_switches = sum(r["pause_tx"] for r in res.links if r["peer"].split(":")[0] in switches)
    inbound = [p for f in sorted(pcaps.glob("*_in.pcap")) for p in _pauses(f)]
    assert len(inbound) == to_switches > 0
    print(f"pause frames: {counted} sent ({xoff} XOFF, {xon} XON), {len(inbound)} received by switches, "
          f"{len(out)} egress captures")
