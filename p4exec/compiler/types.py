"""P4 types as the p4exec compiler resolves them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Type:
    def __str__(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__

    @property
    def is_scalar(self) -> bool:
        return True


@dataclass(frozen=True)
class Bits(Type):
    width: int
    signed: bool = False

    def __str__(self):
        return f"{'int' if self.signed else 'bit'}<{self.width}>"

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1


@dataclass(frozen=True)
class Varbit(Type):
    width: int

    def __str__(self):
        return f"varbit<{self.width}>"


class _Singleton(Type):
    name = "?"

    def __str__(self):
        return self.name

    def __repr__(self):
        return self.name


class InfIntT(_Singleton):
    name = "int"


class BoolT(_Singleton):
    name = "bool"


class StringT(_Singleton):
    name = "string"


class ErrorT(_Singleton):
    name = "error"


class MatchKindT(_Singleton):
    name = "match_kind"


class VoidT(_Singleton):
    name = "void"


class DontCareT(_Singleton):
    name = "_"


INFINT = InfIntT()
BOOL = BoolT()
STRING = StringT()
ERROR = ErrorT()
MATCH_KIND = MatchKindT()
VOID = VoidT()
DONTCARE = DontCareT()


@dataclass(eq=False)
class TypeVar(Type):
    name: str

    def __str__(self):
        return self.name


@dataclass(eq=False)
class FieldsType(Type):
    name: str
    fields: dict[str, Type] = field(default_factory=dict)
    annos: dict[str, Any] = field(default_factory=dict)       # field name -> list[Annotation]
    decl_annos: list = field(default_factory=list)
    pyclass: str = ""

    def __str__(self):
        return self.name

    @property
    def is_scalar(self) -> bool:
        return False


@dataclass(eq=False)
class HeaderT(FieldsType):
    @property
    def width(self) -> int:
        return sum(bit_width(t) or 0 for t in self.fields.values())


@dataclass(eq=False)
class StructT(FieldsType):
    pass


@dataclass(eq=False)
class UnionT(FieldsType):
    pass


@dataclass(eq=False)
class StackT(Type):
    elem: HeaderT | UnionT
    size: int

    def __str__(self):
        return f"{self.elem}[{self.size}]"

    def __eq__(self, other):
        return isinstance(other, StackT) and other.elem is self.elem and other.size == self.size

    def __hash__(self):
        return hash((id(self.elem), self.size))

    @property
    def is_scalar(self) -> bool:
        return False


@dataclass(eq=False)
class EnumT(Type):
    name: str
    members: list[str]
    base: Bits | None = None
    values: dict[str, int] = field(default_factory=dict)

    def __str__(self):
        return self.name


@dataclass(eq=False)
class NewT(Type):
    """`type bit<9> PortId_t;` — a distinct type that behaves as its base."""
    name: str
    base: Type
    translation: Any = None        # its @p4runtime_translation annotation (checked where P4Info needs it)

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class TupleT(Type):
    items: tuple

    def __str__(self):
        return "tuple<" + ", ".join(map(str, self.items)) + ">"

    @property
    def is_scalar(self) -> bool:
        return False


@dataclass(eq=False)
class ListT(Type):
    """Type of a `{a, b}` list expression before it is given a struct/header/tuple type."""
    items: list

    def __str__(self):
        return "{" + ", ".join(map(str, self.items)) + "}"


@dataclass(eq=False)
class StructInitT(Type):
    fields: dict

    def __str__(self):
        return "{" + ", ".join(f"{k} = {v}" for k, v in self.fields.items()) + "}"


@dataclass(eq=False)
class ExternT(Type):
    name: str
    decl: Any
    args: tuple = ()

    def __str__(self):
        return self.name + (("<" + ", ".join(map(str, self.args)) + ">") if self.args else "")

    @property
    def is_scalar(self) -> bool:
        return False


@dataclass(eq=False)
class BlockT(Type):
    """Type of a parser/control/package declaration (or its instance)."""
    kind: str           # "parser", "control", "package"
    name: str
    decl: Any

    def __str__(self):
        return self.name


@dataclass(eq=False)
class TableT(Type):
    info: Any

    def __str__(self):
        return "table " + self.info.local


@dataclass(eq=False)
class ApplyResultT(Type):
    table: Any

    def __str__(self):
        return "apply_result"


@dataclass(eq=False)
class ActionRunT(Type):
    table: Any

    def __str__(self):
        return "action_list"


def strip_new(t: Type) -> Type:
    while isinstance(t, NewT):
        t = t.base
    return t


def bit_width(t: Type) -> int | None:
    """Width in bits of a serializable type (bit/int/bool as 1, serializable enum), else None."""
    t = strip_new(t)
    if isinstance(t, Bits):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, EnumT) and t.base is not None:
        return t.base.width
    if isinstance(t, HeaderT):
        return t.width
    if isinstance(t, StructT):
        total = 0
        for ft in t.fields.values():
            w = bit_width(ft)
            if w is None:
                return None
            total += w
        return total
    return None


def varbit_field(t: Type) -> tuple[str, int] | None:
    """(name, max width) of the header's varbit field, if it has one (BMv2 allows one per header)."""
    t = strip_new(t)
    if isinstance(t, HeaderT):
        for f, ft in t.fields.items():
            b = strip_new(ft)
            if isinstance(b, Varbit):
                return f, b.width
    return None


def same_type(a: Type, b: Type) -> bool:
    if a is b:
        return True
    if isinstance(a, NewT) or isinstance(b, NewT):
        return isinstance(a, NewT) and isinstance(b, NewT) and a.name == b.name
    if isinstance(a, Bits) and isinstance(b, Bits):
        return a == b
    if isinstance(a, TupleT) and isinstance(b, TupleT):
        return len(a.items) == len(b.items) and all(same_type(x, y) for x, y in zip(a.items, b.items, strict=True))
    if isinstance(a, StackT) and isinstance(b, StackT):
        return a.elem is b.elem and a.size == b.size
    if isinstance(a, _Singleton) and isinstance(b, _Singleton):
        return type(a) is type(b)
    if isinstance(a, Varbit) and isinstance(b, Varbit):
        return a.width == b.width
    if isinstance(a, ExternT) and isinstance(b, ExternT):
        return a.name == b.name
    return False
