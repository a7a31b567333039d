"""The switch as a process: bounded shutdown, ports whose interface goes away, link state for program and controller."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest
from scapy.all import Ether, Raw

from p4exec.switch.lab import sh
from p4exec.switch.nsio import write_frames
from tests.support.switch import QUEUE_PROBE, Capture, Switch, compiled, queue_cmd, send_frames, table_entry

pytestmark = pytest.mark.netns

FRAME = bytes(Ether(dst="00:00:00:00:02:02", src="00:00:00:00:01:01", type=0x88B5) / Raw(b"p" * 50))


def wait_for(pred, timeout: float = 3.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def test_sigterm_under_load_exits_fast(lab, start_switch) -> None:
    sw = start_switch(str(QUEUE_PROBE), "--queue-rate", "200", grpc=True)
    p4info, _ = compiled(QUEUE_PROBE)
    conn = sw.connect(p4info)
    conn.insert(table_entry(conn, "MyIngress.port_map", {"standard_metadata.ingress_port": 1},
                                 "MyIngress.set_port", {"port": 2}))
    conn.close()
    path = sw.stats_path.with_name("load.bin")
    write_frames(str(path), [FRAME])
    sender = subprocess.Popen(lab.nsio(1, "send", lab.host_if(1), str(path), "--rate", "5000", "--repeat", "20000"),
                              stdout=subprocess.DEVNULL)
    try:
        time.sleep(1.0)  # queues full, packets arriving
        assert sw.stop()  # left by itself, status 0, with queues full and packets arriving
    finally:
        sender.kill()
        sender.wait()
    st = sw.stats()  # written on the way out, everything accounted (queued ones as port_down)
    p1 = st["ports"]["1"]
    assert p1["received"] > 1000
    assert p1["forwarded"] + p1["dropped"] + p1["to_cpu"] == p1["received"]
    assert st["in_flight"] == 0


def test_sigint_without_program(lab, start_switch, send) -> None:
    sw = start_switch("--no-p4", grpc=False)
    send(1, [FRAME] * 5)
    time.sleep(0.3)
    sw.proc.signal(signal.SIGINT)
    sw.proc.proc.wait(2.0)
    p1 = sw.stats()["ports"]["1"]
    assert p1["received"] == 5 and p1["dropped_by_reason"]["pipeline"] == 5


def test_port_that_disappears_is_dropped_not_fatal(lab3, tmp_path) -> None:
    lab = lab3
    sw = Switch(lab, tmp_path, str(QUEUE_PROBE))
    p4info, _ = compiled(QUEUE_PROBE)
    conn = sw.connect(p4info)
    try:
        conn.insert(table_entry(conn, "MyIngress.port_map", {"standard_metadata.ingress_port": 1},
                                     "MyIngress.set_port", {"port": 2}),
                    table_entry(conn, "MyIngress.port_map", {"standard_metadata.ingress_port": 3},
                                     "MyIngress.set_port", {"port": 1}))
        assert conn.read_register("port_down", 2)[2] == 0
        assert '"up": true' in queue_cmd(sw, "2")

        # carrier off (the peer end goes down): port 2 is down for the program and the controller
        sh("ip", "netns", "exec", lab.ns(2), "ip", "link", "set", lab.host_if(2), "down")
        assert wait_for(lambda: conn.read_register("port_down", 2)[2] == 1)
        assert '"up": false' in queue_cmd(sw, "2")
        send_frames(lab, tmp_path, 1, [FRAME] * 10)

        # the interface goes away altogether: reported, and the switch carries on with the other ports
        sh("ip", "link", "del", lab.sw_if(2))
        lab.created_links.remove(lab.sw_if(2))
        time.sleep(0.5)
        send_frames(lab, tmp_path, 1, [FRAME] * 10)  # to the vanished port
        cap = Capture(lab, 1, tmp_path, count=5, max_seconds=5, idle=1.0)
        send_frames(lab, tmp_path, 3, [FRAME] * 5)  # port 3 -> port 1 still works
        got, _ = cap.result()
        assert got == [FRAME] * 5
        assert sw.proc.alive()
        assert conn.read_register("port_down", 2)[2] == 1
    finally:
        conn.close()
        clean = sw.stop()
        log = sw.proc.output()
        sw.proc.close()
    assert clean
    assert "port 2" in log and "dropping the port" in log
    st = sw.stats()
    assert st["ports"]["1"]["received"] == 20
    assert st["ports"]["1"]["dropped_by_reason"]["port_down"] == 20
    assert st["ports"]["3"]["forwarded"] == 5
