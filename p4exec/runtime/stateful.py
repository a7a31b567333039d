"""Registers, counters and meters (indexed and direct).

Control-plane methods validate and raise :class:`RuntimeOpError` (OUT_OF_RANGE for an index beyond the
size, INVALID_ARGUMENT for a value wider than the cell).  The data plane uses the ``dp_*`` / ``count`` /
``execute`` methods, which never raise: an out-of-range index reads 0 and writes nothing, as BMv2 logs
and carries on.

Meters are BMv2's two-rate three-colour marker (RFC 2698, colour-blind): each cell keeps a peak and a
committed token bucket; tokens are ``floor(t_us * rate_per_us)`` counted from time 0 of the virtual clock,
capped at the burst size.  A packet that finds too few peak tokens is RED (nothing taken); otherwise it
takes peak tokens and, finding too few committed tokens, is YELLOW; otherwise it takes committed tokens
too and is GREEN.  An unconfigured cell marks everything GREEN.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

from p4exec.runtime.errors import RuntimeOpError, invalid


class Counted(Protocol):
    """What a direct counter counts on: an entry's packet and byte counts."""

    packet_count: int
    byte_count: int


class Metered(Protocol):
    """What a direct meter meters on: an entry's meter cell."""

    meter: MeterCell | None

GREEN, YELLOW, RED = 0, 1, 2


class Unit(IntEnum):
    """Values equal ``p4.config.v1.CounterSpec.Unit`` / ``MeterSpec.Unit``."""

    UNSPECIFIED = 0
    BYTES = 1
    PACKETS = 2
    BOTH = 3


def _check_index(name: str, i: int, size: int) -> None:
    """P4Runtime: a negative index is INVALID_ARGUMENT, one beyond the size OUT_OF_RANGE."""
    if not isinstance(i, int) or i < 0:
        raise invalid(f"{name}: bad index {i!r}")
    if i >= size:
        raise RuntimeOpError("OUT_OF_RANGE", f"{name}: index {i} outside [0, {size})")


# -------------------------------------------------------------------------------------------- register


@dataclass
class Register:
    name: str
    id: int
    size: int
    bitwidth: int
    values: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.values:
            self.values = [0] * self.size

    def read(self, i: int) -> int:
        _check_index(self.name, i, self.size)
        return self.values[i]

    def write(self, i: int, value: int) -> None:
        _check_index(self.name, i, self.size)
        if not isinstance(value, int) or value < 0 or value >> self.bitwidth:
            raise invalid(f"{self.name}: value {value!r} does not fit in {self.bitwidth} bits")
        self.values[i] = value

    def dp_read(self, i: int) -> int:
        return self.values[i] if 0 <= i < self.size else 0

    def dp_write(self, i: int, value: int) -> None:
        if 0 <= i < self.size:
            self.values[i] = value & ((1 << self.bitwidth) - 1)

    def reset(self) -> None:
        # in place: the native pipeline may have put the cells in C memory (p4exec/native), still this object's
        self.values[0:len(self.values)] = [0] * len(self.values)


# -------------------------------------------------------------------------------------------- counters


@dataclass
class Counter:
    """Indexed counter; both packet and byte counts are kept whatever the unit (P4Runtime reads filter)."""

    name: str
    id: int
    size: int
    unit: Unit = Unit.BOTH
    packets: list[int] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.reset()

    def count(self, i: int, nbytes: int) -> None:
        if 0 <= i < self.size:
            self.packets[i] += 1
            self.bytes[i] += nbytes

    def read(self, i: int) -> tuple[int, int]:
        """(packets, bytes) of cell ``i``."""
        _check_index(self.name, i, self.size)
        return self.packets[i], self.bytes[i]

    def write(self, i: int, packets: int, nbytes: int) -> None:
        _check_index(self.name, i, self.size)
        if packets < 0 or nbytes < 0:
            raise invalid(f"{self.name}: negative counter value")
        self.packets[i] = packets
        self.bytes[i] = nbytes

    def reset(self) -> None:
        if len(self.packets) == self.size and len(self.bytes) == self.size:
            self.packets[0:self.size] = [0] * self.size     # in place (see Register.reset)
            self.bytes[0:self.size] = [0] * self.size
        else:
            self.packets = [0] * self.size
            self.bytes = [0] * self.size


@dataclass
class DirectCounter:
    """A table's direct counter: the counts live on the table entries (``packet_count``/``byte_count``)."""

    name: str
    id: int
    table: str
    unit: Unit = Unit.BOTH

    @staticmethod
    def read(entry: Counted) -> tuple[int, int]:
        return entry.packet_count, entry.byte_count

    @staticmethod
    def write(entry: Counted, packets: int, nbytes: int) -> None:
        if packets < 0 or nbytes < 0:
            raise invalid("negative counter value")
        entry.packet_count, entry.byte_count = packets, nbytes


# ---------------------------------------------------------------------------------------------- meters


@dataclass(frozen=True)
class MeterConfig:
    """P4Runtime ``MeterConfig`` units: rates per second, bursts in units (packets or bytes)."""

    cir: int
    cburst: int
    pir: int
    pburst: int


class MeterCell:
    """One trTCM instance (see module doc).  Buckets: index 0 peak (-> RED), 1 committed (-> YELLOW)."""

    __slots__ = ("config", "rates", "bursts", "tokens", "last", "by_packets")

    def __init__(self, by_packets: bool):
        self.by_packets = by_packets
        self.config: MeterConfig | None = None
        self.rates = [0.0, 0.0]  # units per microsecond
        self.bursts = [0, 0]
        self.tokens = [0, 0]
        self.last = [0, 0]

    def configure(self, cfg: MeterConfig | None) -> None:
        self.config = cfg
        if cfg is None:
            return
        self.rates = [cfg.pir / 1e6, cfg.cir / 1e6]
        self.bursts = [cfg.pburst, cfg.cburst]
        self.tokens = [cfg.pburst, cfg.cburst]
        self.last = [0, 0]

    def configure_us(self, rates: tuple[tuple[float, int], ...]) -> None:
        """BMv2 CLI form: ``((cir_per_us, cburst), (pir_per_us, pburst))``, committed first.

        As BMv2: exactly two rates (else INVALID_ARGUMENT, BMv2's BAD_RATES_LIST), committed <= peak.
        """
        if len(rates) != 2:
            raise invalid(f"a two-rate meter takes 2 RATE:BURST pairs, {len(rates)} given")
        (crate, cburst), (prate, pburst) = rates
        if crate > prate or min(crate, prate, cburst, pburst) < 0:
            raise invalid(f"bad meter rates {rates}: need 0 <= committed <= peak")
        self.configure(MeterConfig(round(crate * 1e6), cburst, round(prate * 1e6), pburst))
        self.rates = [prate, crate]  # keep the exact per-µs rates given

    def execute(self, nbytes: int, now_us: int) -> int:
        if self.config is None:
            return GREEN
        need = 1 if self.by_packets else nbytes
        now = int(now_us)
        for k, colour in ((0, RED), (1, YELLOW)):
            since_init = int(now * self.rates[k])
            new = since_init - self.last[k]
            if new < 0:  # virtual clock went backwards (reset): restart the bucket's origin
                new = 0
            self.last[k] = since_init
            tokens = min(self.tokens[k] + new, self.bursts[k])
            if tokens < need:
                self.tokens[k] = tokens
                return colour
            self.tokens[k] = tokens - need
        return GREEN


def _check_meter_config(name: str, cfg: MeterConfig) -> None:
    vals = (cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)
    if any(not isinstance(v, int) or v < 0 for v in vals):
        raise invalid(f"{name}: meter rates and bursts must be non-negative integers")
    if cfg.cir > cfg.pir:
        raise invalid(f"{name}: committed rate {cfg.cir} exceeds peak rate {cfg.pir}")


@dataclass
class Meter:
    name: str
    id: int
    size: int
    unit: Unit = Unit.BYTES
    cells: list[MeterCell] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.reset()

    def set_config(self, i: int, cir: int, cburst: int, pir: int, pburst: int) -> None:
        """Configure cell ``i`` with P4Runtime units (rates per second)."""
        _check_index(self.name, i, self.size)
        cfg = MeterConfig(cir, cburst, pir, pburst)
        _check_meter_config(self.name, cfg)
        self.cells[i].configure(cfg)

    def clear_config(self, i: int) -> None:
        _check_index(self.name, i, self.size)
        self.cells[i].configure(None)

    def get_config(self, i: int) -> MeterConfig | None:
        _check_index(self.name, i, self.size)
        return self.cells[i].config

    def execute(self, i: int, nbytes: int, now_us: int) -> int:
        """Colour of a packet of ``nbytes`` at virtual time ``now_us`` (0 green, 1 yellow, 2 red)."""
        if 0 <= i < self.size:
            return self.cells[i].execute(nbytes, now_us)
        return GREEN

    def reset(self) -> None:
        by_packets = self.unit is Unit.PACKETS
        self.cells = [MeterCell(by_packets) for _ in range(self.size)]


@dataclass
class DirectMeter:
    """A table's direct meter: one :class:`MeterCell` per entry (``TableEntry.meter``)."""

    name: str
    id: int
    table: str
    unit: Unit = Unit.BYTES

    def new_cell(self) -> MeterCell:
        return MeterCell(self.unit is Unit.PACKETS)

    def set_config(self, entry: Metered, cir: int, cburst: int, pir: int, pburst: int) -> None:
        cfg = MeterConfig(cir, cburst, pir, pburst)
        _check_meter_config(self.name, cfg)
        if entry.meter is None:
            entry.meter = self.new_cell()
        entry.meter.configure(cfg)

    @staticmethod
    def execute(entry: Metered | None, nbytes: int, now_us: int) -> int:
        if entry is None or entry.meter is None:
            return GREEN
        return entry.meter.execute(nbytes, now_us)
