"""The pcap writer's files are read by tcpdump (the format users open them with)."""

from __future__ import annotations

import subprocess

from scapy.all import IP, UDP, Ether

from p4exec.switch.pcap import PcapWriter, read_pcap


def test_tcpdump_reads_our_pcap(tmp_path) -> None:
    frames = [bytes(Ether(src="00:00:00:00:00:01") / IP(dst=f"10.0.0.{i}") / UDP(dport=1000 + i)) for i in range(5)]
    path = tmp_path / "p_in.pcap"
    w = PcapWriter(path)
    for i, fr in enumerate(frames):
        w.write(fr, ts=1_700_000_000 + i * 0.25)
    w.close()
    assert read_pcap(path) == frames
    out = subprocess.run(["tcpdump", "-nn", "-r", str(path)], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert len(lines) == 5
    assert "10.0.0.3" in lines[3] and ".1003:" in lines[3]


def test_a_full_disk_stops_the_capture_not_the_writer_s_caller() -> None:
    """/dev/full answers every write with ENOSPC: the writer records why and ignores further frames."""
    w = PcapWriter("/dev/full")
    for _ in range(2000):  # more than the 64 KiB buffer, so a write reaches the device
        w.write(b"\x00" * 60)
    w.flush()
    w.close()
    assert w.failed is not None and "No space left" in w.failed
    assert w.count < 2000
