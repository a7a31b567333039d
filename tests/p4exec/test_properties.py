"""Property tests: bit-exact P4 arithmetic through real compiled programs.

Each width W gets one v1model program (compiled once per module) that reads operands a, b (bit<W>)
and a shift amount n (bit<8>) from a header and writes every result into a second header. Hypothesis
draws the operands and the results are compared with a small Python model of P4_16 semantics:
unsigned wrap-around, saturation, shifts past the width, concatenation, slices (also as l-values),
casts between widths and signedness, and comparisons.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p4exec.harness import Harness

WIDTHS = [8, 12, 16, 32]


def u(v: int, w: int) -> int:
    """Value modulo 2^w (P4 bit<w>)."""
    return v & ((1 << w) - 1)


def s(v: int, w: int) -> int:
    """Two's-complement reading of the low w bits (P4 int<w>)."""
    v = u(v, w)
    return v - (1 << w) if v >> (w - 1) else v


def clamp_u(v: int, w: int) -> int:
    return max(0, min((1 << w) - 1, v))


def clamp_s(v: int, w: int) -> int:
    return max(-(1 << (w - 1)), min((1 << (w - 1)) - 1, v))


@dataclass(frozen=True)
class Field:
    """One result field: its width, the P4 statement setting it ($a $b $n operands, $r results)
    and the model of its value."""

    name: str
    width: int
    p4: str
    model: Callable[[int, int, int], int]


def fields(w: int) -> list[Field]:
    """Result fields for operand width w (all values as unsigned bit patterns)."""
    h = w // 2
    iw = f"int<{w}>"

    def flags(a: int, b: int, n: int) -> int:
        bits = [a < b, a <= b, a > b, a >= b, a == b, a != b, s(a, w) < s(b, w), s(a, w) >= s(b, w)]
        out = 0
        for bit in bits:
            out = (out << 1) | int(bit)
        return out

    def mix(a: int, b: int, n: int) -> int:
        return (b & ~((1 << h) - 1)) | (a >> h)

    return [
        Field("add", w, "$r.add = $a + $b;", lambda a, b, n: u(a + b, w)),
        Field("sub", w, "$r.sub = $a - $b;", lambda a, b, n: u(a - b, w)),
        Field("mul", w, "$r.mul = $a * $b;", lambda a, b, n: u(a * b, w)),
        Field("neg", w, "$r.neg = -$a;", lambda a, b, n: u(-a, w)),
        Field("sadd", w, "$r.sadd = $a |+| $b;", lambda a, b, n: clamp_u(a + b, w)),
        Field("ssub", w, "$r.ssub = $a |-| $b;", lambda a, b, n: clamp_u(a - b, w)),
        Field("shl", w, "$r.shl = $a << $n;", lambda a, b, n: u(a << n, w)),
        Field("shr", w, "$r.shr = $a >> $n;", lambda a, b, n: a >> n),
        Field("shlk", w, "$r.shlk = $b << 3;", lambda a, b, n: u(b << 3, w)),
        Field("band", w, "$r.band = $a & $b;", lambda a, b, n: a & b),
        Field("bor", w, "$r.bor = $a | $b;", lambda a, b, n: a | b),
        Field("bxor", w, "$r.bxor = $a ^ $b;", lambda a, b, n: a ^ b),
        Field("bnot", w, "$r.bnot = ~$a;", lambda a, b, n: u(~a, w)),
        Field("cat", 2 * w, "$r.cat = $a ++ $b;", lambda a, b, n: (a << w) | b),
        Field("hi", h, f"$r.hi = $a[{w - 1}:{h}];", lambda a, b, n: a >> h),
        Field("lo", h, f"$r.lo = $a[{h - 1}:0];", lambda a, b, n: u(a, h)),
        Field("mix", w, f"$r.mix = $b; $r.mix[{h - 1}:0] = $a[{w - 1}:{h}];", mix),
        Field("maxv", w, "$r.maxv = $a > $b ? $a : $b;", lambda a, b, n: max(a, b)),
        Field("iadd", w, f"$r.iadd = ({iw})$a + ({iw})$b;", lambda a, b, n: u(s(a, w) + s(b, w), w)),
        Field("isadd", w, f"$r.isadd = ({iw})$a |+| ({iw})$b;",
              lambda a, b, n: u(clamp_s(s(a, w) + s(b, w), w), w)),
        Field("issub", w, f"$r.issub = ({iw})$a |-| ({iw})$b;",
              lambda a, b, n: u(clamp_s(s(a, w) - s(b, w), w), w)),
        Field("isar", w, f"$r.isar = ({iw})$a >> $n;", lambda a, b, n: u(s(a, w) >> n, w)),
        Field("zext", 2 * w, f"$r.zext = (bit<{2 * w}>)$a;", lambda a, b, n: a),
        Field("sext", 2 * w, f"$r.sext = (bit<{2 * w}>)(int<{2 * w}>)({iw})$a;",
              lambda a, b, n: u(s(a, w), 2 * w)),
        Field("trunc", h, f"$r.trunc = (bit<{h}>)$b;", lambda a, b, n: u(b, h)),
        Field("snarrow", h, f"$r.snarrow = (bit<{h}>)(int<{h}>)({iw})$b;", lambda a, b, n: u(s(b, w), h)),
        Field("sgt", 8, f"$r.sgt = ({iw})$a > ({iw})$b ? 8w1 : 8w0;", lambda a, b, n: int(s(a, w) > s(b, w))),
        Field("flags", 8, "$r.flags = " + " ++ ".join(
            f"(bit<1>)({e})" for e in [
                "$a < $b", "$a <= $b", "$a > $b", "$a >= $b", "$a == $b", "$a != $b",
                f"({iw})$a < ({iw})$b", f"({iw})$a >= ({iw})$b",
            ]) + ";", flags),
    ]


def program(w: int) -> str:
    """The v1model program for width w: operands header in, results header out."""
    fs = fields(w)
    total = sum(f.width for f in fs)
    pad = (-total) % 8
    decl = "\n".join(f"    {'int' if f.name.startswith('i') else 'bit'}<{f.width}> {f.name};" for f in fs)
    if pad:
        decl += f"\n    bit<{pad}> pad;"
    names = {"$a": "hdr.o.a", "$b": "hdr.o.b", "$n": "hdr.o.n", "$r": "hdr.r"}
    lines = []
    for f in fs:
        stmt = f.p4
        for k, v in names.items():
            stmt = stmt.replace(k, v)
        lines.append("        " + stmt)
    body = "\n".join(lines)
    return f"""
#include <core.p4>
#include <v1model.p4>

header ops_t {{
    bit<{w}> a;
    bit<{w}> b;
    bit<8> n;
}}
header res_t {{
{decl}
}}
struct headers_t {{ ops_t o; res_t r; }}
struct meta_t {{ }}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.o); transition accept; }}
}}
control V(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    apply {{
        hdr.r.setValid();
{body}
        sm.egress_spec = 9w1;
    }}
}}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers_t hdr) {{ apply {{ pkt.emit(hdr.o); pkt.emit(hdr.r); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def unpack(data: bytes, widths: list[int]) -> list[int]:
    """Split a big-endian bit string into consecutive fields of the given widths."""
    total = len(data) * 8
    v = int.from_bytes(data, "big")
    out, pos = [], 0
    for w in widths:
        out.append((v >> (total - pos - w)) & ((1 << w) - 1))
        pos += w
    return out


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"bit{w}" for w in WIDTHS])
def compiled(request: pytest.FixtureRequest) -> tuple[int, Harness]:
    """Compile the width-specific program once per module."""
    w = request.param
    return w, Harness.from_source(program(w))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_arithmetic_matches_model(compiled: tuple[int, Harness], data: st.DataObject) -> None:
    """Every result field equals the Python model of P4 semantics for random operands."""
    w, h = compiled
    edge = st.sampled_from([0, 1, (1 << (w - 1)) - 1, 1 << (w - 1), (1 << w) - 1])
    a = data.draw(st.one_of(edge, st.integers(0, (1 << w) - 1)), label="a")
    b = data.draw(st.one_of(edge, st.integers(0, (1 << w) - 1)), label="b")
    n = data.draw(st.one_of(st.integers(0, 2 * w + 2), st.integers(0, 255)), label="n")
    ops = ((a << (w + 8)) | (b << 8) | n).to_bytes((2 * w + 8) // 8, "big")
    out = h.send(0, ops + b"\xab")
    assert len(out) == 1 and out[0][0] == 1
    pkt = out[0][1]
    assert pkt[: len(ops)] == ops and pkt[-1:] == b"\xab"
    fs = fields(w)
    got = unpack(pkt[len(ops):-1], [f.width for f in fs])
    for f, value in zip(fs, got, strict=True):
        assert value == f.model(a, b, n), f"{f.name}: a={a:#x} b={b:#x} n={n} ({f.p4})"



# ------------------------------------------------------------------------------------------------
# Table matching through the same compiled pipeline: random LPM and ternary tables against a model.

CORPUS = __import__("pathlib").Path(__file__).resolve().parents[1] / "p4"


@pytest.fixture(scope="module")
def lpm_harness() -> Harness:
    return Harness.from_file(str(CORPUS / "13_table_lpm.p4"), seed=1)


@pytest.fixture(scope="module")
def ternary_harness() -> Harness:
    return Harness.from_file(str(CORPUS / "14_table_ternary.p4"), seed=1)


routes = st.lists(
    st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 32), st.integers(1, 8), st.integers(0, 255)),
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=routes, addrs=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=8), data=st.data())
def test_lpm_matches_model(lpm_harness: Harness, entries: list, addrs: list, data: st.DataObject) -> None:
    """The longest matching prefix wins; no match runs the default action (drop)."""
    from p4exec.runtime.match import Lpm

    h = lpm_harness
    h.state.tables["MyIngress.lpm"].clear()
    installed: dict[tuple[int, int], tuple[int, int]] = {}
    for value, plen, port, tag in entries:
        mask = ((1 << plen) - 1) << (32 - plen)
        key = (value & mask, plen)
        if key in installed:
            continue
        installed[key] = (port, tag)
        h.table_add("MyIngress.lpm", {"hdr.h.addr": Lpm(value & mask, plen)}, "MyIngress.route",
                    {"port": port, "tag": tag})
    # also probe addresses inside installed prefixes, not only random ones
    probes = addrs + [p | data.draw(st.integers(0, (1 << (32 - n)) - 1)) for p, n in installed]
    for addr in probes:
        best = max((n for p, n in installed if (addr >> (32 - n) if n else 0) == (p >> (32 - n) if n else 0)),
                   default=None)
        pkt = addr.to_bytes(4, "big") + b"\x00"
        out = h.send(0, pkt)
        if best is None:
            assert out == []
        else:
            p = next(pp for pp, n in installed if n == best and (addr >> (32 - n) if n else 0) == (pp >> (32 - n) if n else 0))
            port, tag = installed[(p, best)]
            assert out == [(port, addr.to_bytes(4, "big") + bytes([tag]))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    entries=st.lists(st.tuples(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 254)),
                     max_size=10),
    keys=st.lists(st.integers(0, 0xFFFF), min_size=1, max_size=8),
)
def test_ternary_priority_matches_model(ternary_harness: Harness, entries: list, keys: list) -> None:
    """Among matching ternary entries the largest priority wins (P4Runtime meaning)."""
    from p4exec.runtime.match import Ternary

    h = ternary_harness
    h.state.tables["MyIngress.tern"].clear()
    installed: list[tuple[int, int, int, int]] = []
    seen_keys: set[tuple[int, int]] = set()
    for i, (value, mask, v) in enumerate(entries):
        if (value & mask, mask) in seen_keys:
            continue
        seen_keys.add((value & mask, mask))
        prio = 100 + i  # distinct priorities: the winner is well defined
        installed.append((value & mask, mask, prio, v))
        h.table_add("MyIngress.tern", {"hdr.h.k": Ternary(value & mask, mask)}, "MyIngress.mark", {"v": v},
                    priority=prio)
    for k in keys + [val for val, _, _, _ in installed]:
        hits = [(prio, v) for val, mask, prio, v in installed if k & mask == val]
        pkt = k.to_bytes(2, "big") + b"\x00"
        if hits:
            assert h.send(0, pkt) == [(1, k.to_bytes(2, "big") + bytes([max(hits)[1]]))]
        else:
            assert h.send(0, pkt) == [(2, k.to_bytes(2, "big") + b"\xff")]
