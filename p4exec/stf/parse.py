"""Parser for p4c's STF ("simple test framework") files into plain dataclasses.

The STF runner (``p4exec.stf.runner``) executes the statements; this module only reads them, so a bad line is
reported as ``file:line:col: error: ...`` (an :class:`StfError`, a :class:`p4exec.errors.P4Error`) before
anything runs.  The accepted grammar, one statement per line, ``#`` starts a comment, blank lines ignored,
keywords case-insensitive::

    add TABLE [PRIORITY] KEY:VALUE ... ACTION([ARG:NUM {, ARG:NUM}]) [= HANDLE]
    setdefault TABLE ACTION([ARG:NUM {, ARG:NUM}])
    remove all
    packet PORT HEXDATA                      # hex digits, whitespace between them ignored
    expect PORT [EXPECTDATA]                 # hex digits or '*' (any nibble), optional final '$'
    no_packet
    wait [NUM]
    mirroring_add SESSION PORT
    mirroring_add_mc SESSION MGRP
    mirroring_delete SESSION | mirroring_get SESSION
    mc_mgrp_create MGRP
    mc_node_create RID PORT...               # BMv2 CLI: node handles are 0, 1, 2 ... in creation order
    mc_node_update HANDLE PORT...
    mc_node_associate MGRP HANDLE
    register_read NAME INDEX | register_write NAME INDEX NUM | register_reset NAME
    counter_read NAME INDEX  | counter_write NAME INDEX PACKETS BYTES
    check_counter NAME(INDEX|HANDLE) [packets|bytes OP NUM]      # OP one of == != < <= > >=
    meter_get_rates NAME INDEX
    meter_set_rates NAME INDEX RATE:BURST [RATE:BURST]          # BMv2 units: per microsecond
    meter_array_set_rates NAME RATE:BURST [RATE:BURST]

    NAME  := IDENT {'.' IDENT | '[' DEC ']'}  (IDENT may contain '$'; a "quoted name" is also accepted)
    NUM   := DEC | 0xHEX | 0bBIN
    VALUE := NUM ['/' DEC] | NUM '&&&' NUM | 0x with '*' nibbles | 0b with '*' bits

``PRIORITY`` keeps STF's meaning, which is P4Runtime's: a larger number wins (p4c's BMv2 driver turns it
into BMv2's smaller-wins form with ``10000 - PRIORITY``).  How a key value becomes a field match for a given
match kind follows p4c's driver; see :meth:`KeyValue.to_match`.  :func:`table_entry`, :func:`action_call`
and :func:`resolve_name` turn ``add``/``setdefault`` lines into runtime objects for a given table.

The statement dataclasses live in ``commands`` and the conversion to runtime objects in ``entries``; every
public name is re-exported here, so ``from p4exec.stf.parse import ...`` keeps working.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from p4exec.errors import SourceLoc
from p4exec.stf.commands import (
    ActionSpec,
    AddEntry,
    CheckCounter,
    CounterRead,
    CounterWrite,
    Expect,
    KeyValue,
    McMgrpCreate,
    McNodeAssociate,
    McNodeCreate,
    McNodeUpdate,
    MeterGetRates,
    MeterSetRates,
    MirroringAdd,
    MirroringAddMc,
    MirroringDelete,
    MirroringGet,
    NoPacket,
    Packet,
    RegisterRead,
    RegisterReset,
    RegisterWrite,
    RemoveAll,
    SetDefault,
    StfError,
    Stmt,
    Wait,
)
from p4exec.stf.commands import iter_statements as iter_statements
from p4exec.stf.entries import action_call as action_call
from p4exec.stf.entries import resolve_name as resolve_name
from p4exec.stf.entries import table_entry as table_entry
from p4exec.textfile import read_text_file

# ------------------------------------------------------------------------------------------ tokenizer

_TOKEN_RE = re.compile(
    r"""\s*(?:
        (?P<num>0[xX][0-9a-fA-F*]+|0[bB][01*]+|[0-9]+(?:\.[0-9]+)?(?![A-Za-z_$]))
      | (?P<name>"[^"]*"|[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*|\[[0-9]+\])*)
      | (?P<op>&&&|==|!=|<=|>=|[():,/=<>])
    )""",
    re.VERBOSE,
)


@dataclass
class _Tok:
    kind: str  # num / name / op
    text: str
    col: int


class _Line:
    """Cursor over the tokens of one statement line."""

    def __init__(self, text: str, file: str, line: int, start_col: int = 0):
        self.file, self.line = file, line
        self.toks: list[_Tok] = []
        pos = start_col
        text_len = len(text.rstrip())
        while pos < text_len:
            m = _TOKEN_RE.match(text, pos)
            if m is None or m.end() == pos:
                while pos < text_len and text[pos].isspace():
                    pos += 1
                raise self.error(f"unexpected character {text[pos]!r}", pos)
            kind = m.lastgroup or "op"
            tok = m.group(kind)
            self.toks.append(_Tok(kind, tok, m.start(kind)))
            pos = m.end()
        self.i = 0
        self.eol_col = text_len

    def error(self, msg: str, col: int | None = None) -> StfError:
        if col is None:
            col = self.toks[self.i].col if self.i < len(self.toks) else self.eol_col
        return StfError(msg, SourceLoc(self.file, self.line, col + 1))

    def peek(self, k: int = 0) -> _Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at_end(self) -> bool:
        return self.i >= len(self.toks)

    def take(self, kind: str, what: str) -> _Tok:
        tok = self.peek()
        if tok is None or tok.kind != kind:
            found = "end of line" if tok is None else repr(tok.text)
            raise self.error(f"expected {what}, found {found}")
        self.i += 1
        return tok

    def op(self, text: str) -> None:
        tok = self.peek()
        if tok is None or tok.kind != "op" or tok.text != text:
            found = "end of line" if tok is None else repr(tok.text)
            raise self.error(f"expected '{text}', found {found}")
        self.i += 1

    def is_op(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok is not None and tok.kind == "op" and tok.text == text

    def name(self, what: str = "a name") -> str:
        text = self.take("name", what).text
        return text[1:-1] if text.startswith('"') else text

    def int(self, what: str = "a number") -> int:
        tok = self.take("num", what)
        try:
            return parse_int(tok.text)
        except ValueError as e:
            raise StfError(str(e), SourceLoc(self.file, self.line, tok.col + 1)) from None

    def float(self, what: str = "a number") -> float:
        tok = self.take("num", what)
        try:
            return float(tok.text) if "." in tok.text else float(parse_int(tok.text))
        except ValueError as e:
            raise StfError(str(e), SourceLoc(self.file, self.line, tok.col + 1)) from None

    def end(self) -> None:
        if not self.at_end():
            raise self.error(f"unexpected {self.peek().text!r} at end of statement")  # type: ignore[union-attr]


def parse_int(text: str) -> int:
    """Decimal, ``0x`` hex or ``0b`` binary, no don't-care digits."""
    if "*" in text or "." in text:
        raise ValueError(f"{text!r} is not an integer")
    low = text.lower()
    if low.startswith("0x"):
        return int(low[2:], 16)
    if low.startswith("0b"):
        return int(low[2:], 2)
    return int(low, 10)


def _literal(text: str) -> tuple[int, int | None, int | None, int]:
    """(value, mask-from-stars, written bits, trailing wildcard bits) of a key literal."""
    low = text.lower()
    if low.startswith(("0x", "0b")):
        bits, base = (4, 16) if low[1] == "x" else (1, 2)
        digits = low[2:]
        full_digit = base - 1
        value = mask = 0
        for d in digits:
            value <<= bits
            mask <<= bits
            if d != "*":
                value |= int(d, base)
                mask |= full_digit
        trailing = len(digits) - len(digits.rstrip("*"))
        return value, (mask if "*" in digits else None), len(digits) * bits, trailing * bits
    if "." in low:
        raise ValueError(f"{text!r} is not an integer")
    return int(low, 10), None, None, 0


# -------------------------------------------------------------------------------------------- parser


def parse_stf(text: str, file: str = "<stf>") -> list[Stmt]:
    """Parse STF ``text``; raises :class:`StfError` at the first malformed line."""
    out: list[Stmt] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0]
        stripped = line.strip()
        if not stripped:
            continue
        start = len(line) - len(line.lstrip())
        m = re.match(r"[A-Za-z_]+", line[start:])
        if m is None:
            raise StfError("expected a command", SourceLoc(file, lineno, start + 1))
        cmd = m.group(0).lower()
        rest_col = start + m.end()
        loc = SourceLoc(file, lineno, start + 1)
        if cmd in ("packet", "expect"):
            out.append(_packet_line(cmd, line, rest_col, file, lineno, loc))
            continue
        handler = _HANDLERS.get(cmd)
        if handler is None:
            raise StfError(f"unknown STF command {m.group(0)!r}", loc)
        cur = _Line(line, file, lineno, rest_col)
        out.append(handler(cur, loc))
        cur.end()
    return out


MAX_STF_BYTES = 64 << 20


def parse_stf_file(path: str | Path) -> list[Stmt]:
    p = Path(path)
    return parse_stf(read_text_file(str(p), MAX_STF_BYTES, "STF file"), str(p))


def _packet_line(cmd: str, line: str, col: int, file: str, lineno: int, loc: SourceLoc) -> Stmt:
    m = re.compile(r"\s*([0-9]+)").match(line, col)
    if m is None:
        raise StfError(f"'{cmd}' needs a port number", SourceLoc(file, lineno, col + 1))
    port = int(m.group(1))
    pos = m.end()
    body = line[pos:]
    exact = False
    digits: list[str] = []
    for off, ch in enumerate(body):
        if ch.isspace():
            continue
        at = SourceLoc(file, lineno, pos + off + 1)
        if exact:
            raise StfError("nothing may follow '$'", at)
        if ch in "0123456789abcdefABCDEF":
            digits.append(ch.upper())
        elif ch == "*" and cmd == "expect":
            digits.append("*")
        elif ch == "$" and cmd == "expect":
            exact = True
        else:
            raise StfError(f"invalid {cmd} data character {ch!r}", at)
    data = "".join(digits)
    if cmd == "packet":
        if len(data) % 2:
            raise StfError("packet data has an odd number of hex digits", loc)
        return Packet(loc, port, bytes.fromhex(data))
    if not data and not exact:
        return Expect(loc, port, None)
    return Expect(loc, port, data, exact)


def _action(cur: _Line) -> ActionSpec:
    name = cur.name("an action name")
    cur.op("(")
    args: list[tuple[str, int]] = []
    if not cur.is_op(")"):
        while True:
            arg = cur.name("an action parameter name")
            cur.op(":")
            args.append((arg, cur.int("a parameter value")))
            if cur.is_op(","):
                cur.i += 1
                continue
            break
    cur.op(")")
    return ActionSpec(name, tuple(args))


def _key_value(cur: _Line) -> KeyValue:
    tok = cur.take("num", "a key value")
    text = tok.text
    try:
        value, star_mask, bits, wild = _literal(tok.text)
        mask = star_mask
        plen = None
        if cur.is_op("&&&"):
            cur.i += 1
            mtok = cur.take("num", "a mask")
            text += "&&&" + mtok.text
            mask = parse_int(mtok.text)
            if star_mask is not None:
                mask &= star_mask
        elif cur.is_op("/"):
            cur.i += 1
            ptok = cur.take("num", "a prefix length")
            text += "/" + ptok.text
            plen = int(ptok.text, 10)
    except ValueError as e:
        raise StfError(str(e), SourceLoc(cur.file, cur.line, tok.col + 1)) from None
    return KeyValue(text, value, mask, plen, bits, wild)


def _add(cur: _Line, loc: SourceLoc) -> Stmt:
    table = cur.name("a table name")
    priority = None
    tok = cur.peek()
    if tok is not None and tok.kind == "num":
        priority = cur.int("a priority")
    keys: list[tuple[str, KeyValue]] = []
    while True:
        if cur.peek() is None:
            raise cur.error("missing action call")
        if cur.is_op("(", 1):
            break
        kname = cur.name("a key field name or an action call")
        cur.op(":")
        keys.append((kname, _key_value(cur)))
    action = _action(cur)
    handle = None
    if cur.is_op("="):
        cur.i += 1
        t = cur.peek()
        if t is None or t.kind not in ("name", "num"):
            raise cur.error("expected an entry handle after '='")
        handle = t.text
        cur.i += 1
    return AddEntry(loc, table, priority, tuple(keys), action, handle)


def _remove(cur: _Line, loc: SourceLoc) -> Stmt:
    word = cur.name("'all'")
    if word.lower() != "all":
        raise cur.error("only 'remove all' is supported", cur.toks[cur.i - 1].col)
    return RemoveAll(loc)


def _ints(cur: _Line) -> tuple[int, ...]:
    vals = []
    while not cur.at_end():
        vals.append(cur.int("a port number"))
    return tuple(vals)


def _rates(cur: _Line) -> tuple[tuple[float, int], ...]:
    rates = []
    while not cur.at_end():
        rate = cur.float("a rate")
        cur.op(":")
        rates.append((rate, cur.int("a burst size")))
    if not rates:
        raise cur.error("expected RATE:BURST")
    return tuple(rates)


def _check_counter(cur: _Line, loc: SourceLoc) -> Stmt:
    name = cur.name("a counter name")
    cur.op("(")
    tok = cur.peek()
    if tok is not None and tok.kind == "num":
        index: int | str = cur.int()
    else:
        index = cur.name("a counter index or entry handle")
    cur.op(")")
    if cur.at_end():
        return CheckCounter(loc, name, index)
    ctype = cur.name("'packets' or 'bytes'").lower()
    if ctype not in ("packets", "bytes"):
        raise cur.error("expected 'packets' or 'bytes'", cur.toks[cur.i - 1].col)
    op_tok = cur.take("op", "a comparison")
    if op_tok.text not in ("==", "!=", "<", "<=", ">", ">="):
        raise cur.error(f"bad comparison {op_tok.text!r}", op_tok.col)
    return CheckCounter(loc, name, index, ctype, op_tok.text, cur.int("a count"))


def _wait(cur: _Line, loc: SourceLoc) -> Stmt:
    return Wait(loc, None if cur.at_end() else cur.float("a duration"))


_HANDLERS = {
    "add": _add,
    "setdefault": lambda c, loc: SetDefault(loc, c.name("a table name"), _action(c)),
    "remove": _remove,
    "no_packet": lambda c, loc: NoPacket(loc),
    "wait": _wait,
    "mirroring_add": lambda c, loc: MirroringAdd(loc, c.int("a session id"), c.int("a port")),
    "mirroring_add_mc": lambda c, loc: MirroringAddMc(loc, c.int("a session id"), c.int("a group id")),
    "mirroring_delete": lambda c, loc: MirroringDelete(loc, c.int("a session id")),
    "mirroring_get": lambda c, loc: MirroringGet(loc, c.int("a session id")),
    "mc_mgrp_create": lambda c, loc: McMgrpCreate(loc, c.int("a group id")),
    "mc_node_create": lambda c, loc: McNodeCreate(loc, c.int("a replication id"), _ints(c)),
    "mc_node_update": lambda c, loc: McNodeUpdate(loc, c.int("a node handle"), _ints(c)),
    "mc_node_associate": lambda c, loc: McNodeAssociate(loc, c.int("a group id"), c.int("a node handle")),
    "register_read": lambda c, loc: RegisterRead(loc, c.name("a register name"), c.int("an index")),
    "register_write": lambda c, loc: RegisterWrite(loc, c.name("a register name"), c.int("an index"),
                                                   c.int("a value")),
    "register_reset": lambda c, loc: RegisterReset(loc, c.name("a register name")),
    "counter_read": lambda c, loc: CounterRead(loc, c.name("a counter name"), c.int("an index")),
    "counter_write": lambda c, loc: CounterWrite(loc, c.name("a counter name"), c.int("an index"),
                                                 c.int("a packet count"), c.int("a byte count")),
    "check_counter": _check_counter,
    "meter_get_rates": lambda c, loc: MeterGetRates(loc, c.name("a meter name"), c.int("an index")),
    "meter_set_rates": lambda c, loc: MeterSetRates(loc, c.name("a meter name"), c.int("an index"),
                                                    _rates(c)),
    "meter_array_set_rates": lambda c, loc: MeterSetRates(loc, c.name("a meter name"), None, _rates(c)),
}
