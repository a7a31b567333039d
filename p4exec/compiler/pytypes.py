"""Python for P4 data types: one `__slots__` class per header, struct and union (copy, compare, construct,
unpack), default values, and the bit layout of headers (unpacking from and packing into an integer).

This is generation only: it reads checked types (p4exec.compiler.types) and writes Python; nothing here looks at
the AST or decides whether a program is valid, so it can be driven by a type alone (tests/p4exec/
test_compiler_stages.py)."""
from __future__ import annotations

from collections.abc import Iterator

from p4exec.compiler import types as T
from p4exec.compiler.emit import Emitter, pyfield
from p4exec.compiler.state import CompileState


class DataTypeGenerator:
    """Python classes of header/struct/union types (emitted once each into CompileState.class_code)."""

    def __init__(self, st: CompileState) -> None:
        self.st = st

    def pyclass(self, t) -> str:
        t = T.strip_new(t)
        key = id(t)
        if key in self.st.classes:
            return self.st.classes[key]
        if isinstance(t, T.HeaderT):
            name = self.st.unique("H_" + t.name)
        elif isinstance(t, T.UnionT):
            name = self.st.unique("U_" + t.name)
        else:
            name = self.st.unique("S_" + t.name)
        self.st.classes[key] = name
        fields = [(pyfield(f), ft) for f, ft in t.fields.items()]
        em = Emitter()
        slots = (["_v"] if isinstance(t, T.HeaderT) else []) + [f for f, _ in fields]
        em(f"class {name}:")
        em.indent()
        em(f"__slots__ = {tuple(slots)!r}")
        em("def __init__(self):")
        em.indent()
        if isinstance(t, T.HeaderT):
            em("self._v = False")
        for f, ft in fields:
            em(f"self.{f} = {self.default_value(ft)}")
        if not slots:
            em("pass")
        em.dedent()
        em("def _set(self, o):")
        em.indent()
        if isinstance(t, T.HeaderT):
            em("self._v = o._v")
        for f, ft in fields:
            if ft.is_scalar:
                em(f"self.{f} = o.{f}")
            else:
                em(f"self.{f}._set(o.{f})")
        em("return self")
        em.dedent()
        em("def _copy(self):")
        em.indent()
        em(f"n = {name}.__new__({name})")
        if isinstance(t, T.HeaderT):
            em("n._v = self._v")
        for f, ft in fields:
            em(f"n.{f} = self.{f}" + ("" if ft.is_scalar else "._copy()"))
        em("return n")
        em.dedent()
        em("def _eq(self, o):")
        em.indent()
        parts = []
        for f, ft in fields:
            parts.append(f"self.{f} == o.{f}" if ft.is_scalar else f"self.{f}._eq(o.{f})")
        if isinstance(t, T.HeaderT):
            em(f"return self._v == o._v and (not self._v or ({' and '.join(parts) or 'True'}))")
        else:
            em(f"return {' and '.join(parts) or 'True'}")
        em.dedent()
        em("@staticmethod")
        em(f"def _mk({', '.join(f'a{i}' for i in range(len(fields)))}):")
        em.indent()
        em(f"n = {name}.__new__({name})")
        if isinstance(t, T.HeaderT):
            em("n._v = True")
        for i, (f, _ft) in enumerate(fields):
            em(f"n.{f} = a{i}")
        em("return n")
        em.dedent()
        if (isinstance(t, T.HeaderT) and T.varbit_field(t) is None) or (isinstance(t, T.StructT) and T.bit_width(t)):
            em("@staticmethod")
            em("def _unpack(v):")
            em.indent()
            em(f"n = {name}()")
            for line in header_unpack_lines(t, "n", "v"):
                em(line)
            if isinstance(t, T.HeaderT):
                em("n._v = True")
            em("return n")
            em.dedent()
        if isinstance(t, T.HeaderT):
            em("def _setinvalid(self):")
            em.indent()
            em("self._v = False")
            em.dedent()
        if isinstance(t, T.UnionT):
            em("def _valid(self):")
            em.indent()
            em(f"return {' or '.join(f'self.{f}._v' for f, _ in fields) or 'False'}")
            em.dedent()
            em("def _setinvalid(self):")
            em.indent()
            for f, _ in fields:
                em(f"self.{f}._v = False")
            em("pass")
            em.dedent()
        em.dedent()
        self.st.class_code.extend(em)
        return name

    def default_value(self, t) -> str:
        t = T.strip_new(t)
        if isinstance(t, T.Varbit):
            return "(0, 0)"          # (length in bits, value)
        if isinstance(t, T.Bits | T.InfIntT):
            return "0"
        if isinstance(t, T.BoolT):
            return "False"
        if isinstance(t, T.ErrorT):
            return "0"
        if isinstance(t, T.EnumT):
            return "0" if t.base is None else "0"
        if isinstance(t, T.StringT):
            return "''"
        if isinstance(t, T.HeaderT | T.StructT | T.UnionT):
            return f"{self.pyclass(t)}()"
        if isinstance(t, T.StackT):
            return f"_Stack({self.pyclass(t.elem)}, {t.size})"
        if isinstance(t, T.TupleT):
            return "(" + "".join(self.default_value(x) + ", " for x in t.items) + ")"
        return "None"


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
