"""Getting a BMv2 switch to receive again after one of its port's interfaces was down.

simple_switch reads all its interfaces in one thread (bmv2's BMI port manager): it waits in select() for a
port with a frame, then takes that frame with libpcap's pcap_next_ex(). When a port's interface is set
administratively down, libpcap's packet socket reports ENETDOWN and select() calls that port ready; the
following pcap_next_ex() does not return until a frame arrives on that port (seen with gdb on BMv2 1.15.0 and
libpcap 1.10.3: the thread sits in libpcap's 1 ms poll() loop under pcap_next_ex for the flapped port). So
from the moment one port goes down the switch takes no frame on ANY port, and after the port is up again it
stays that way until something arrives on exactly that port (tests/controller/test_bmv2_port_flap.py).
BMv2 itself still lists the port as up (`bm_dev_mgr_show_ports`); nothing on its side notices.

ethlab's side of the fix: when a link of a BMv2 switch comes back up, one frame is sent into the link, so the
receive thread gets its frame and returns. The frame is an Ethernet frame of IEEE 802 local experimental
EtherType 2 (0x88B6; ETH+ uses EtherType 1) from a locally administered address; the P4 programs count it
as an unhandled EtherType (ethplus.p4: `unhandled_ethertype`, one per restored link end) and drop it.

And a fabric fault never sets a BMv2 interface down (`set_link_state`, the BMv2 Target's way to fail a link):
a switch's end of the failed link keeps its interface up and drops everything it sends (an nftables netdev
egress chain with policy drop), a host's end goes administratively down as on p4exec. So no frame crosses
the link either way, BMv2's other ports keep working through the outage, and nothing needs waking after it
(BMv2 sees no carrier either way; the controller is told by the fault injector). Restoring the link wakes a
switch end that someone else set down meanwhile."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

WAKE_ETHERTYPE = 0x88B6  # IEEE 802 local experimental EtherType 2: no p4src/ program handles it
WAKE_SRC = bytes.fromhex("020000e7a4e0")  # locally administered
WAKE_DST = bytes.fromhex("020000e7a4e1")
WAKE_FRAME = WAKE_DST + WAKE_SRC + WAKE_ETHERTYPE.to_bytes(2, "big") + b"ethlab: port up".ljust(46, b"\0")

_SEND = ("import socket, sys\n"
         "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
         "s.bind((sys.argv[1], 0))\n"
         "s.send(bytes.fromhex(sys.argv[2]))\n")

# (network namespace, interface name); a switch's end has None: switch-side veths live in this namespace
LinkEnd = tuple[str | None, str]


class WakeError(RuntimeError):
    """The wake frame could not be sent (interface gone, still down, namespace missing)."""


def send_wake_frame(ifname: str, netns: str | None = None, timeout: float = 10.0) -> None:
    """Send WAKE_FRAME out of `ifname` (in `netns`, or in this namespace)."""
    if netns is None:
        try:
            with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as sock:
                sock.bind((ifname, 0))
                sock.send(WAKE_FRAME)
        except OSError as err:
            raise WakeError(f"wake frame out of {ifname}: {err.strerror or err}") from None
        return
    try:
        res = subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c", _SEND, ifname, WAKE_FRAME.hex()],
                             capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as err:
        raise WakeError(f"wake frame out of {netns}:{ifname}: {err}") from None
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["exit status " + str(res.returncode)])[-1]
        raise WakeError(f"wake frame out of {netns}:{ifname}: {last}")


def wake_link(ends: Iterable[LinkEnd]) -> LinkEnd:
    """After a link came back up: one frame into it, so the BMv2 switch(es) at its ends receive again.

    Sent out of a host's end when the link has one (only the switch gets it). On a switch-to-switch link it
    leaves one switch's port: the other switch receives it, and the sending switch's own packet socket sees it
    leave (libpcap captures both directions), which wakes that port too. Returns the end it was sent from."""
    ends = list(ends)
    if not ends:
        raise WakeError("a link without ends")
    end = next((e for e in ends if e[0] is not None), ends[0])
    send_wake_frame(end[1], end[0])
    return end


def cut_table(ifname: str) -> str:
    """The nftables netdev table that cuts one switch-side interface."""
    return "ethlab_cut_" + re.sub(r"[^A-Za-z0-9_]", "_", ifname)


def _nft(script: str) -> subprocess.CompletedProcess[str]:
    nft = shutil.which("nft") or "/usr/sbin/nft"
    try:
        return subprocess.run([nft, "-f", "-"], input=script, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as err:
        raise WakeError(f"nft (package nftables) is needed to cut a BMv2 link: {err}") from None


def cut_interface(ifname: str, cut: bool) -> None:
    """Drop (or stop dropping) everything `ifname` sends, before the wire, with its admin state left up."""
    table = cut_table(ifname)
    if cut:
        done = _nft(f"table netdev {table} {{\n"
                    f"  chain out {{ type filter hook egress device \"{ifname}\" priority 0; policy drop; }}\n}}\n")
    else:
        done = _nft(f"destroy table netdev {table}\n")
        if done.returncode != 0 and "destroy" in done.stderr:  # nft before 1.0.8 has no `destroy`
            done = _nft(f"delete table netdev {table}\n")
            if done.returncode != 0 and "No such file" in done.stderr:
                return
    if done.returncode != 0:
        raise WakeError(f"nft {'cutting' if cut else 'restoring'} {ifname}: {done.stderr.strip()[-300:]}")


def _admin_up(ifname: str, netns: str | None) -> bool:
    if netns is None:
        try:
            return bool(int(Path(f"/sys/class/net/{ifname}/flags").read_text(), 16) & 0x1)  # IFF_UP
        except (OSError, ValueError):
            return False
    return True  # only switch ends are woken


def _ip_link(ifname: str, netns: str | None, state: str) -> None:
    cmd = ["ip"] + (["-n", netns] if netns else []) + ["link", "set", ifname, state]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise WakeError(f"ip link set {ifname} {state}: {done.stderr.strip()}")


def set_link_state(ends: Iterable[LinkEnd], up: bool) -> None:
    """Fail or restore a link of a BMv2 fabric without ever setting a BMv2 interface down (module doc)."""
    ends = list(ends)
    deaf = [end for end in ends if end[0] is None and up and not _admin_up(end[1], None)]
    for netns, ifname in ends:
        if netns is None:
            cut_interface(ifname, cut=not up)
            if (netns, ifname) in deaf:
                _ip_link(ifname, None, "up")
        else:
            _ip_link(ifname, netns, "up" if up else "down")
    if deaf:
        wake_link(ends)
