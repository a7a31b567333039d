"""Python for P4 data types: one `__slots__` class per header, struct and union (copy, compare, construct,
unpack) and default values; the bit layout of headers (unpacking from and packing into an integer) is layout.py's.

This is generation only: it reads checked types (p4exec.compiler.types) and writes Python; nothing here looks at
the AST or decides whether a program is valid, so it can be driven by a type alone (tests/p4exec/
test_compiler_stages.py)."""
from __future__ import annotations

from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.emit import Emitter, pyfield
from p4exec.compiler.layout import (  # noqa: F401  (header_pack_expr, header_nbytes: re-exported)
    header_nbytes,
    header_pack_expr,
    header_unpack_lines,
)


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

