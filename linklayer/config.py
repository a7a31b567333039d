"""What a user asks of the link layer (`link_layer:` in a spec, flags of `ethlab traffic run`), checked once.

Every check names the key it refused, so a spec error reads `link_layer.pfc.xon_bytes: ...`. The defaults are
nominal for a 400 Gbit/s port with a few hundred ns of cable and pipeline (virtual time); emulation scales the
time constants with the link rate as it does every other timer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

FLOW_CONTROLS = ("none", "pfc", "cbfc")
PRIORITIES = 8


class LinkLayerError(ValueError):
    """A `link_layer` setting that cannot work; the message starts with the key."""


def _need(cond: bool, key: str, msg: str) -> None:
    if not cond:
        raise LinkLayerError(f"{key}: {msg}")


def _int(raw: dict, key: str, where: str, default: int, minimum: int) -> int:
    v = raw.get(key, default)
    _need(isinstance(v, int) and not isinstance(v, bool), f"{where}.{key}", f"must be an integer (got {v!r})")
    _need(v >= minimum, f"{where}.{key}", f"must be >= {minimum} (got {v})")
    return int(v)


def _rate(raw: dict, key: str, where: str) -> float:
    v = raw.get(key, 0.0)
    if isinstance(v, str):  # YAML 1.1 reads `1e-6` (no dot) as a string: take what is plainly a number
        try:
            v = float(v)
        except ValueError:
            pass
    _need(isinstance(v, (int, float)) and not isinstance(v, bool), f"{where}.{key}",
          f"must be a number in [0, 1] (got {v!r})")
    _need(0.0 <= float(v) <= 1.0, f"{where}.{key}", f"must be in [0, 1] (got {v})")
    return float(v)


def _known(raw: dict, cls: type, where: str, extra: tuple[str, ...] = ()) -> None:
    allowed = {f.name for f in fields(cls)} | set(extra)
    # topologies.keys.unknown_keys's wording; linklayer imports no other package of the project (it sits below
    # them all), so the one sentence is written out here
    unknown = sorted(str(k) for k in raw if k not in allowed)  # YAML keys may be null or numbers
    _need(not unknown, where, f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(allowed))})")


@dataclass(frozen=True)
class LlrConfig:
    """Link-level retry per link direction (go-back-N on the link, below P4)."""

    enabled: bool = False
    max_outstanding_frames: int = 512   # replay buffer bound (frames)
    max_outstanding_bytes: int = 1 << 20  # replay buffer bound (bytes)
    ack_every: int = 16                  # coalesced ACK: one per this many frames received in order
    ack_delay_ns: int = 1_000            # ... or this long after the first unacknowledged frame
    replay_timeout_ns: int = 5_000       # replay from the oldest unacknowledged frame when nothing came back
                                         # this long after the link's loop time (where the port knows it)
    max_replays: int = 8                 # a frame replayed more often is discarded (tx discard)

    @classmethod
    def parse(cls, raw: Any, where: str = "link_layer.llr") -> LlrConfig:
        if isinstance(raw, bool):
            return cls(enabled=raw)
        _need(isinstance(raw, dict), where, f"must be true, false or a mapping (got {raw!r})")
        _known(raw, cls, where)
        en = raw.get("enabled", True)
        _need(isinstance(en, bool), f"{where}.enabled", "must be true or false")
        return cls(enabled=en,
                   max_outstanding_frames=_int(raw, "max_outstanding_frames", where, cls.max_outstanding_frames, 1),
                   max_outstanding_bytes=_int(raw, "max_outstanding_bytes", where, cls.max_outstanding_bytes, 64),
                   ack_every=_int(raw, "ack_every", where, cls.ack_every, 1),
                   ack_delay_ns=_int(raw, "ack_delay_ns", where, cls.ack_delay_ns, 1),
                   replay_timeout_ns=_int(raw, "replay_timeout_ns", where, cls.replay_timeout_ns, 1),
                   max_replays=_int(raw, "max_replays", where, cls.max_replays, 0))


@dataclass(frozen=True)
class PfcConfig:
    """IEEE 802.1Qbb per ingress port and priority: pause at XOFF, resume at XON, absorb in-flight in headroom."""

    xoff_bytes: int = 96_000
    xon_bytes: int = 64_000
    headroom_bytes: int = 64_000         # beyond XOFF, for what is on the wire when the pause lands
    quanta: int = 0xFFFF                 # pause time in 512-bit times carried in the frame
    priorities: tuple[int, ...] = tuple(range(PRIORITIES))  # lossless priorities
    watchdog_ns: int = 0                 # a priority paused longer than this is a deadlock (0: no watchdog)

    @classmethod
    def parse(cls, raw: Any, where: str = "link_layer.pfc") -> PfcConfig:
        raw = {} if raw is None else raw
        _need(isinstance(raw, dict), where, f"must be a mapping (got {raw!r})")
        _known(raw, cls, where)
        xoff = _int(raw, "xoff_bytes", where, cls.xoff_bytes, 1)
        xon = _int(raw, "xon_bytes", where, min(cls.xon_bytes, xoff), 0)
        _need(xon <= xoff, f"{where}.xon_bytes", f"must not be above xoff_bytes ({xon} > {xoff})")
        prios = raw.get("priorities", list(cls.priorities))
        _need(isinstance(prios, list) and all(isinstance(p, int) and 0 <= p < PRIORITIES for p in prios),
              f"{where}.priorities", f"must be a list of priorities 0..{PRIORITIES - 1}")
        return cls(xoff_bytes=xoff, xon_bytes=xon,
                   headroom_bytes=_int(raw, "headroom_bytes", where, cls.headroom_bytes, 0),
                   quanta=_int(raw, "quanta", where, cls.quanta, 1),
                   priorities=tuple(sorted(set(prios))),
                   watchdog_ns=_int(raw, "watchdog_ns", where, cls.watchdog_ns, 0))


@dataclass(frozen=True)
class CbfcConfig:
    """Credit-based flow control per virtual channel: a sender needs credits for the whole frame."""

    cell_bytes: int = 256
    credits: int = 512                   # cells per VC the receiver's buffer holds
    update_interval_ns: int = 1_000      # periodic credit update (also repairs credits lost with a bad update)
    vc_map: tuple[int, ...] = tuple(range(PRIORITIES))  # priority -> VC

    @classmethod
    def parse(cls, raw: Any, where: str = "link_layer.cbfc", max_frame: int = 1518) -> CbfcConfig:
        raw = {} if raw is None else raw
        _need(isinstance(raw, dict), where, f"must be a mapping (got {raw!r})")
        _known(raw, cls, where)
        cell = _int(raw, "cell_bytes", where, cls.cell_bytes, 1)
        credits = _int(raw, "credits", where, cls.credits, 1)
        need = -(-max_frame // cell)
        _need(credits >= need, f"{where}.credits",
              f"{credits} cells of {cell} B cannot hold one {max_frame}-B frame (need >= {need})")
        vc_map = raw.get("vc_map", list(cls.vc_map))
        _need(isinstance(vc_map, list) and len(vc_map) == PRIORITIES
              and all(isinstance(v, int) and 0 <= v < PRIORITIES for v in vc_map),
              f"{where}.vc_map", f"must list a VC 0..{PRIORITIES - 1} for each of the {PRIORITIES} priorities")
        return cls(cell_bytes=cell, credits=credits,
                   update_interval_ns=_int(raw, "update_interval_ns", where, cls.update_interval_ns, 1),
                   vc_map=tuple(vc_map))


@dataclass(frozen=True)
class LinkLayerConfig:
    """The whole `link_layer` mapping. `active` is False for the default: then no port builds any link-layer
    state, and the data path is exactly what it was without this package (records stay byte-identical)."""

    frame_error_rate: float = 0.0
    bit_error_rate: float = 0.0          # turned into a per-frame probability by frame length
    llr: LlrConfig = field(default_factory=LlrConfig)
    flow_control: str = "none"
    pfc: PfcConfig = field(default_factory=PfcConfig)
    cbfc: CbfcConfig = field(default_factory=CbfcConfig)

    @property
    def active(self) -> bool:
        return bool(self.frame_error_rate or self.bit_error_rate or self.llr.enabled or self.flow_control != "none")

    def frame_error_probability(self, wire_bytes: int) -> float:
        """P(a frame of `wire_bytes` fails its FCS): the frame error rate, or 1 - (1 - BER)^bits."""
        if self.bit_error_rate:
            return 1.0 - (1.0 - self.bit_error_rate) ** (8 * wire_bytes)
        return self.frame_error_rate

    def scaled(self, factor: float) -> LinkLayerConfig:
        """The time constants × `factor` (emulation runs links slower than nominal: its timers stretch alike)."""
        def ns(v: int) -> int:
            return max(1, int(round(v * factor)))

        llr, pfc, cbfc = self.llr, self.pfc, self.cbfc
        return replace(self, llr=replace(llr, ack_delay_ns=ns(llr.ack_delay_ns),
                                         replay_timeout_ns=ns(llr.replay_timeout_ns)),
                       pfc=replace(pfc, watchdog_ns=ns(pfc.watchdog_ns) if pfc.watchdog_ns else 0),
                       cbfc=replace(cbfc, update_interval_ns=ns(cbfc.update_interval_ns)))

    def to_raw(self) -> dict[str, Any]:
        """The mapping `parse` takes back to this config (for a switch process's command line)."""
        raw = asdict(self)
        raw["pfc"]["priorities"] = list(self.pfc.priorities)
        raw["cbfc"]["vc_map"] = list(self.cbfc.vc_map)
        if not raw["bit_error_rate"]:
            del raw["bit_error_rate"]
        else:
            del raw["frame_error_rate"]
        return raw

    def describe(self) -> dict[str, Any]:
        """The settings a results table shows beside the counters."""
        return {"frame_error_rate": self.frame_error_rate, "bit_error_rate": self.bit_error_rate,
                "llr": self.llr.enabled, "flow_control": self.flow_control}

    @classmethod
    def parse(cls, raw: Any, where: str = "link_layer", max_frame: int = 1518) -> LinkLayerConfig:
        if raw is None:
            return cls()
        _need(isinstance(raw, dict), where, f"must be a mapping (got {raw!r})")
        _known(raw, cls, where)
        fc = raw.get("flow_control", "none")
        _need(fc in FLOW_CONTROLS, f"{where}.flow_control", f"must be one of {', '.join(FLOW_CONTROLS)} (got {fc!r})")
        fer = _rate(raw, "frame_error_rate", where)
        ber = _rate(raw, "bit_error_rate", where)
        _need(not (fer and ber), where, "give frame_error_rate or bit_error_rate, not both")
        return cls(frame_error_rate=fer, bit_error_rate=ber,
                   llr=LlrConfig.parse(raw.get("llr", False), f"{where}.llr"),
                   flow_control=fc,
                   pfc=PfcConfig.parse(raw.get("pfc"), f"{where}.pfc"),
                   cbfc=CbfcConfig.parse(raw.get("cbfc"), f"{where}.cbfc", max_frame=max_frame))
