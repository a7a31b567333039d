"""Draw the transport state machines (docs/img/transport-state-machines.png) with matplotlib.

    python -m traffic.transport.diagram [OUT.png]
"""

from __future__ import annotations

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

Box = tuple[float, float, str]


def _box(ax, x: float, y: float, text: str, color: str) -> None:
    ax.add_patch(FancyBboxPatch((x - 1.05, y - 0.42), 2.1, 0.84, boxstyle="round,pad=0.05", fc=color,
                                ec="#333", lw=1.2))
    ax.text(x, y, text, ha="center", va="center", fontsize=8.5)


def _arrow(ax, a: tuple[float, float], b: tuple[float, float], label: str, rad: float = 0.0,
           dx: float = 0.0, dy: float = 0.0) -> None:
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=12, lw=1.0, color="#333",
                                 connectionstyle=f"arc3,rad={rad}", shrinkA=30, shrinkB=30))
    ax.text((a[0] + b[0]) / 2 + dx, (a[1] + b[1]) / 2 + dy, label, ha="center", va="center", fontsize=7.2,
            color="#124", bbox={"fc": "white", "ec": "none", "alpha": 0.85, "pad": 1})


def draw(path: str) -> None:
    fig, axes = plt.subplots(2, 2, figsize=(14, 9.5))
    for ax in axes.flat:
        ax.set_xlim(-4.2, 4.2)
        ax.set_ylim(-3.2, 3.2)
        ax.axis("off")

    ax = axes[0][0]
    ax.set_title("rc-gbn sender (go-back-N)", fontsize=11)
    _box(ax, -2.4, 2.0, "SENDING\nnxt < npkts,\nnxt − una < window", "#dfe9f7")
    _box(ax, 2.4, 2.0, "WAITING\n(window full or\nall sent once)", "#f7ecd9")
    _box(ax, -2.4, -1.8, "GO BACK\nnxt := una\n(or := NAKed PSN)", "#f7d9d9")
    _box(ax, 2.4, -1.8, "DONE\nuna = npkts\n(or FAILED)", "#d9f2df")
    _arrow(ax, (-1.3, 1.2), (1.3, 1.2), "take(): PSN nxt++", dy=-0.25)
    _arrow(ax, (2.4, 2.0), (-2.4, 2.0), "ACK cum > una: una := cum, RTO restarts", rad=0.35, dy=1.0)
    _arrow(ax, (2.4, 2.0), (-2.4, -1.8), "RTO (srtt+4·rttvar,\n×2 per timeout in a row)", dx=0.9, dy=0.2)
    _arrow(ax, (-2.4, 2.0), (-2.4, -1.8), "NAK(cum)", dx=0.55)
    _arrow(ax, (-2.4, -1.8), (-2.4, 2.0), "resend\nfrom there", rad=-0.4, dx=-1.25)
    _arrow(ax, (2.4, 2.0), (2.4, -1.8), "last ACK /\n> max_timeouts", dx=0.75)

    ax = axes[0][1]
    ax.set_title("rc-gbn receiver (expects PSN e)", fontsize=11)
    _box(ax, 0.0, 2.2, "IN ORDER\n(no NAK out)", "#dfe9f7")
    _box(ax, 0.0, -0.9, "GAP SEEN\n(one NAK out for e)", "#f7d9d9")
    _arrow(ax, (0.0, 2.2), (0.0, -0.9), "PSN > e: discard,\nNAK(e) once;\ntrimmed PSN ≥ e: NAK(e)", dx=1.6)
    _arrow(ax, (0.0, -0.9), (0.0, 2.2), "PSN = e arrives", rad=-0.5, dx=-1.5)
    ax.text(0, -2.4, "PSN = e: deliver, e += 1; ACK(e) every ack_every packets or ack_delay after the first\n"
            "unacknowledged one; PSN < e (duplicate): ACK(e) at once; ECN-CE: CNP, at most one per "
            "cnp_interval", ha="center", va="center", fontsize=7.5, color="#333")

    ax = axes[1][0]
    ax.set_title("sr sender (selective repeat, UEC RUD-like)", fontsize=11)
    _box(ax, -2.4, 2.0, "SENDING\nretransmit queue first,\nthen new PSNs", "#dfe9f7")
    _box(ax, 2.4, 2.0, "WAITING\n(window full /\nall sent once)", "#f7ecd9")
    _box(ax, -2.4, -1.8, "LOST\nPSN queued for\nresend (only it)", "#f7d9d9")
    _box(ax, 2.4, -1.8, "DONE\nall acked\n(or FAILED)", "#d9f2df")
    _arrow(ax, (-1.3, 1.2), (1.3, 1.2), "take()", dy=-0.25)
    _arrow(ax, (2.4, 2.0), (-2.4, -1.8), "RACK: a packet sent ≥ max(reorder, srtt/2)\nlater was SACKed; "
           "NAK(trimmed PSN);\ntail-loss probe (2·srtt quiet); RTO", dx=0.2, dy=0.15)
    _arrow(ax, (-2.4, -1.8), (-2.4, 2.0), "resend", dx=-0.45)
    _arrow(ax, (2.4, 2.0), (2.4, -1.8), "every PSN\nacked", dx=0.6)
    _arrow(ax, (2.4, 2.0), (-2.4, 2.0), "ACK: cum + 64-bit SACK", rad=0.35, dy=1.0)

    ax = axes[1][1]
    ax.set_title("sr receiver and the NIC around both", fontsize=11)
    ax.text(0, 1.5, "Receiver: bitmap of PSNs; every new PSN delivered once, in any order;\n"
            "ACK(cum, triggering PSN, SACK of cum+1..cum+64, echoed send time, max queue depth)\n"
            "every ack_every new arrivals or after ack_delay; duplicate → ACK at once;\n"
            "trimmed PSN not yet received → NAK(PSN) at once.", ha="center", va="center", fontsize=8)
    ax.text(0, -1.2, "NIC (traffic/engine.py): asks the sender which PSN to send, picks the plane\n"
            "(pinned / round-robin / least-loaded, per packet or flowlet) and a fresh path entropy,\n"
            "avoids a plane that lost a packet for max(rto_min, 2·srtt) (longer on repeated loss),\n"
            "sends ACK/NAK/CNP back through the fabric by the port the data came in on.\n"
            "Reactions (none/DCQCN/HPCC) are separate: CNPs cut DCQCN's rate, ACK depth drives HPCC.",
            ha="center", va="center", fontsize=8)
    fig.suptitle("ethlab transports: clock-free state machines (traffic/transport); `none` = send once, never ACK",
                 fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    draw(sys.argv[1] if len(sys.argv) > 1 else "docs/img/transport-state-machines.png")
