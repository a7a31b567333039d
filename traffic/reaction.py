"""Endpoint congestion reactions: none, DCQCN-like rate control on ECN-CE, HPCC-like window on queue depth.

The engine is both sender and receiver, so the feedback that a NIC would get as a CNP (DCQCN) or in an ACK
carrying in-band telemetry (HPCC) is handed over in-process when the receiver sees the mark; what is
modelled is the reaction, with a reverse path of zero delay. Time constants are scaled for an emulated
fabric whose links run at Mbit/s-to-Gbit/s in software, and can be set per run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FlowCC:
    """Congestion state of one flow (used by whichever reaction is active)."""

    rate_bps: float
    target_bps: float
    alpha: float = 1.0
    last_cut: float = -1.0
    last_tick: float = 0.0
    increases: int = 0
    window: float = 0.0
    acked_since_update: int = 0
    cuts: int = 0


class NoReaction:
    """Send at the configured rate whatever happens."""

    name = "none"

    def __init__(self, line_rate_bps: float) -> None:
        self.line_rate_bps = line_rate_bps

    def start(self, now: float) -> FlowCC:
        return FlowCC(self.line_rate_bps, self.line_rate_bps, last_tick=now)

    def rate_bps(self, st: FlowCC, now: float) -> float:
        return st.rate_bps

    def window(self, st: FlowCC) -> float | None:
        return None

    def on_delivery(self, st: FlowCC, ce: bool, qdepth: int, now: float) -> None:
        return None


class Dcqcn(NoReaction):
    """DCQCN-like: cut the rate by alpha/2 on a CE mark (at most once per `cnp_interval_s`, like the CNP
    generator), then recover towards the target rate in `fast_recovery` halving steps and additive increase.
    """

    name = "dcqcn"

    def __init__(self, line_rate_bps: float, g: float = 1 / 16, cnp_interval_s: float = 50e-6,
                 timer_s: float = 300e-6, fast_recovery: int = 5, ai_fraction: float = 0.02,
                 min_fraction: float = 0.01) -> None:
        super().__init__(line_rate_bps)
        self.g, self.cnp_interval_s, self.timer_s = g, cnp_interval_s, timer_s
        self.fast_recovery = fast_recovery
        self.rai = ai_fraction * line_rate_bps
        self.min_rate = min_fraction * line_rate_bps

    def rate_bps(self, st: FlowCC, now: float) -> float:
        ticks = int((now - st.last_tick) / self.timer_s)
        if ticks > 0:
            st.last_tick += ticks * self.timer_s
            for _ in range(min(ticks, 64)):
                st.alpha *= 1 - self.g
                if st.increases >= self.fast_recovery:
                    st.target_bps = min(self.line_rate_bps, st.target_bps + self.rai)
                st.rate_bps = min(self.line_rate_bps, (st.rate_bps + st.target_bps) / 2)
                st.increases += 1
        return st.rate_bps

    def on_delivery(self, st: FlowCC, ce: bool, qdepth: int, now: float) -> None:
        if not ce or (st.last_cut >= 0 and now - st.last_cut < self.cnp_interval_s):
            return
        st.last_cut = now
        st.last_tick = now  # the increase timer restarts at a cut
        st.target_bps = st.rate_bps
        st.rate_bps = max(self.min_rate, st.rate_bps * (1 - st.alpha / 2))
        st.alpha = (1 - self.g) * st.alpha + self.g
        st.increases = 0
        st.cuts += 1


class HpccWindow(NoReaction):
    """HPCC-like: a window of packets in flight, resized once per window of ACKs from the path's maximum
    queue depth (the ETH+ congestion field): shrink in proportion when it exceeds the target, else grow
    additively. Frames without the field (RoCEv2) leave the window alone.
    """

    name = "hpcc"

    def __init__(self, line_rate_bps: float, init_window: int = 64, target_qdepth: int = 8,
                 w_ai: float = 1.0, min_window: float = 1.0) -> None:
        super().__init__(line_rate_bps)
        self.init_window, self.target_qdepth = init_window, target_qdepth
        self.w_ai, self.min_window = w_ai, min_window

    def start(self, now: float) -> FlowCC:
        st = super().start(now)
        st.window = float(self.init_window)
        return st

    def window(self, st: FlowCC) -> float | None:
        return st.window

    def on_delivery(self, st: FlowCC, ce: bool, qdepth: int, now: float) -> None:
        if qdepth < 0:
            return
        st.acked_since_update += 1
        if st.acked_since_update < max(1, int(st.window)):
            return
        st.acked_since_update = 0
        if qdepth > self.target_qdepth:
            st.window = max(self.min_window, st.window * self.target_qdepth / qdepth + self.w_ai)
            st.cuts += 1
        else:
            st.window = min(float(self.init_window), st.window + self.w_ai)


def make_reaction(name: str, line_rate_bps: float, **params) -> NoReaction:
    table = {"none": NoReaction, "dcqcn": Dcqcn, "hpcc": HpccWindow}
    if name not in table:
        raise ValueError(f"unknown reaction {name!r}; known: {', '.join(table)}")
    return table[name](line_rate_bps, **params)
