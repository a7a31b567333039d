"""The bit layout of headers: unpacking every field from the header's bits as one integer, and packing them
back. Pure functions of a checked type; both the type generator (pytypes.py) and packet_in/packet_out
(methods.py) use them, so they live below both."""
from __future__ import annotations

from collections.abc import Iterator

from p4exec.compiler import types as T
from p4exec.compiler.emit import pyfield


def _leaves(t: T.HeaderT | T.StructT, path: str) -> Iterator[tuple[str, T.Type]]:
    """(python path, type) of every scalar field, struct-typed fields of headers included, in order."""
    for f, ft in t.fields.items():
        sub = f"{path}.{pyfield(f)}"
        nested = T.strip_new(ft)
        if isinstance(nested, T.StructT):
            yield from _leaves(nested, sub)
        else:
            yield sub, ft


def header_unpack_lines(t: T.HeaderT | T.StructT, target: str, v: str, vlen: str | None = None
                        ) -> list[str]:
    """Assign every field of ``target`` from the integer ``v`` (the header's bits, MSB first); a varbit
    field takes ``vlen`` bits (a run-time value) and is stored as (length, value)."""
    leaves = list(_leaves(t, target))
    widths: list[int | str] = []
    for _path, ft in leaves:
        b = T.strip_new(ft)
        widths.append((vlen or "0") if isinstance(b, T.Varbit) else (T.bit_width(ft) or 0))
    total_static = sum(w for w in widths if isinstance(w, int))
    lines = []
    for i, (path, ft) in enumerate(leaves):
        w = widths[i]
        after = widths[i + 1:]
        static = sum(x for x in after if isinstance(x, int))
        dyn = [x for x in after if isinstance(x, str)]
        shift: int | str = f"({' + '.join(dyn)} + {static})" if dyn else static
        bft = T.strip_new(ft)
        if isinstance(bft, T.Varbit):
            sh = f" >> {shift}" if shift else ""
            lines.append(f"{path} = ({w}, ({v}{sh}) & ((1 << {w}) - 1))")
            continue
        assert isinstance(w, int)
        m = (1 << w) - 1
        if shift == 0:
            x = f"{v} & {m:#x}" if (total_static != w or vlen) else v
        elif i == 0 and not vlen:
            x = f"{v} >> {shift}"
        else:
            x = f"({v} >> {shift}) & {m:#x}"
        if isinstance(bft, T.Bits) and bft.signed:
            h = 1 << (w - 1)
            x = f"(({x}) ^ {h:#x}) - {h:#x}"
        elif isinstance(bft, T.BoolT):
            x = f"({x}) != 0"
        lines.append(f"{path} = {x}")
    return lines


def header_pack_expr(t: T.HeaderT, src: str) -> str:
    leaves = list(_leaves(t, src))
    widths: list[int | str] = []
    for x, ft in leaves:
        widths.append(f"{x}[0]" if isinstance(T.strip_new(ft), T.Varbit) else (T.bit_width(ft) or 0))
    parts = []
    for i, (x, ft) in enumerate(leaves):
        after = widths[i + 1:]
        static = sum(w for w in after if isinstance(w, int))
        dyn = [w for w in after if isinstance(w, str)]
        shift: int | str = f"({' + '.join(dyn)} + {static})" if dyn else static
        bft = T.strip_new(ft)
        if isinstance(bft, T.Varbit):
            x = f"{x}[1]"
        elif isinstance(bft, T.Bits) and bft.signed:
            x = f"({x} & {bft.mask:#x})"
        elif isinstance(bft, T.BoolT):
            x = f"(1 if {x} else 0)"
        parts.append(f"({x} << {shift})" if shift else x)
    return " | ".join(parts) or "0"


def header_nbytes(t: T.HeaderT, src: str) -> str:
    """Bytes of a header as emitted: fixed, or fixed + the varbit field's current length."""
    vb = T.varbit_field(t)
    if vb is None:
        return str(t.width // 8)
    return f"(({t.width} + {src}.{pyfield(vb[0])}[0]) >> 3)"
