"""Registers, counters and meters (colours at known rates, BMv2's trTCM)."""
from __future__ import annotations

import pytest

from p4exec.runtime import GREEN, RED, YELLOW, Exact, Lpm, RuntimeOpError, TableEntry
from p4exec.runtime.actions import ActionCall
from p4exec.runtime.stateful import DirectMeter, Meter, MeterCell, Unit


def code_of(fn, *a) -> str:
    with pytest.raises(RuntimeOpError) as ei:
        fn(*a)
    return ei.value.code


def test_register(state):
    r = state.registers["MyIngress.reg"]
    assert (r.size, r.bitwidth) == (8, 16)
    r.write(3, 0xBEEF)
    assert r.read(3) == 0xBEEF and r.dp_read(3) == 0xBEEF
    assert code_of(r.read, 8) == "OUT_OF_RANGE"
    assert code_of(r.write, -1, 0) == "INVALID_ARGUMENT"  # negative index (spec: RegisterEntry)
    assert code_of(r.write, 0, 1 << 16) == "INVALID_ARGUMENT"
    r.dp_write(1, 0x12345)  # data plane truncates to the width
    assert r.read(1) == 0x2345
    r.dp_write(99, 1)  # out of range on the data plane: ignored
    assert r.dp_read(99) == 0
    r.reset()
    assert r.read(3) == 0


def test_counter(state):
    c = state.counters["MyIngress.port_counter"]
    assert c.unit is Unit.BOTH
    c.count(2, 100)
    c.count(2, 50)
    c.count(100, 1)  # ignored
    assert c.read(2) == (2, 150)
    assert code_of(c.read, 8) == "OUT_OF_RANGE"
    c.write(2, 7, 700)
    assert c.read(2) == (7, 700)
    assert code_of(c.write, 9, 1, 1) == "OUT_OF_RANGE"


def test_meter_packets_known_rates(state):
    m = state.meters["MyIngress.port_meter"]
    assert m.unit is Unit.PACKETS
    # CIR 1000 pkt/s burst 2, PIR 2000 pkt/s burst 4
    m.set_config(0, 1000, 2, 2000, 4)
    colours = [m.execute(0, 64, 0) for _ in range(6)]
    assert colours == [GREEN, GREEN, YELLOW, YELLOW, RED, RED]
    # 1 ms later: 2 peak tokens and 1 committed token have come back
    assert [m.execute(0, 64, 1000) for _ in range(3)] == [GREEN, YELLOW, RED]
    # an unconfigured cell marks everything green
    assert all(m.execute(1, 1500, t) == GREEN for t in range(10))
    assert m.execute(99, 1, 0) == GREEN


def test_meter_steady_rate_between_cir_and_pir():
    m = Meter("m", 1, 1, Unit.PACKETS)
    m.set_config(0, 1000, 10, 2000, 10)
    tally = {GREEN: 0, YELLOW: 0, RED: 0}
    for i in range(1500):  # 1500 packets/s for one second
        tally[m.execute(0, 64, i * 10**6 // 1500)] += 1
    assert tally[RED] == 0
    assert abs(tally[GREEN] - 1000) <= 15 and tally[YELLOW] >= 485


def test_meter_bytes_and_config_errors():
    m = Meter("m", 1, 2, Unit.BYTES)
    m.set_config(0, 10**6, 1500, 2 * 10**6, 3000)  # 1 MB/s committed, 2 MB/s peak
    assert m.execute(0, 1500, 0) == GREEN
    assert m.execute(0, 1500, 0) == YELLOW   # committed bucket empty, peak has 1500 left
    assert m.execute(0, 1500, 0) == RED
    assert m.execute(0, 1500, 1500) == GREEN  # 1.5 ms refills 1500 committed, 3000 peak bytes
    assert code_of(m.set_config, 2, 1, 1, 1, 1) == "OUT_OF_RANGE"
    assert code_of(m.set_config, 0, 10, 1, 5, 1) == "INVALID_ARGUMENT"  # CIR > PIR
    assert code_of(m.set_config, 0, -1, 1, 5, 1) == "INVALID_ARGUMENT"
    assert m.get_config(0).pir == 2 * 10**6
    m.clear_config(0)
    assert m.get_config(0) is None and m.execute(0, 10**6, 0) == GREEN


def test_meter_bmv2_cli_rates():
    cell = MeterCell(by_packets=True)
    cell.configure_us(((0.001, 1), (0.002, 2)))  # committed then peak, per microsecond
    assert [cell.execute(1, 0) for _ in range(3)] == [GREEN, YELLOW, RED]


def test_direct_meter_on_entries(state):
    t = state.tables["MyIngress.mac"]
    dm = DirectMeter("MyIngress.mac_meter", 1, "MyIngress.mac", Unit.PACKETS)
    t.direct_meter = dm
    t.insert(TableEntry((Exact(1), Exact(1)), action=ActionCall("MyIngress.drop")))
    e = t.lookup((1, 1)).entry
    assert e.meter is not None and dm.execute(e, 64, 0) == GREEN
    dm.set_config(e, 1000, 1, 1000, 1)
    assert [dm.execute(e, 64, 0) for _ in range(2)] == [GREEN, RED]
    assert DirectMeter.execute(None, 64, 0) == GREEN


def test_direct_counter_unit_from_p4info(state):
    assert state.direct_counters["MyIngress.lpm_hits"].unit is Unit.PACKETS
    t = state.tables["MyIngress.ipv4_lpm"]
    t.insert(TableEntry((Lpm(0, 1),), action=ActionCall("MyIngress.drop")))
    t.lookup((5,), 99)
    assert state.direct_counters["MyIngress.lpm_hits"].read(t.entries()[0]) == (1, 99)


def test_meter_bmv2_cli_rate_errors():
    cell = MeterCell(by_packets=True)
    assert code_of(cell.configure_us, ((0.001, 1),)) == "INVALID_ARGUMENT"
    assert code_of(cell.configure_us, ((0.002, 1), (0.001, 1))) == "INVALID_ARGUMENT"
    assert cell.config is None and cell.execute(1, 0) == GREEN
