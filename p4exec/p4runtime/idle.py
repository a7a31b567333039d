"""Idle-timeout notifications (P4Runtime spec, "Idle-timeout"): entries of NOTIFY_CONTROL
tables not hit for their `idle_timeout_ns` are reported once, until they are hit again."""

from __future__ import annotations

import time
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4exec.p4runtime.context import Context
from p4exec.p4runtime.entities import entry_of


def idle_tables(ctx: Context) -> list[tuple[p4info_pb2.Table, Any]]:
    out = []
    for t in ctx.program.p4info.tables:
        if t.idle_timeout_behavior != p4info_pb2.Table.NOTIFY_CONTROL:
            continue
        obj = ctx.binding._obj("tables", t.preamble.name)
        if obj is not None:
            out.append((t, obj))
    return out


def expired(ctx: Context, reported: dict[int, int]) -> p4runtime_pb2.IdleTimeoutNotification | None:
    """The entries that went idle since the last scan; `reported` maps id(entry) -> last hit seen."""
    now = time.monotonic_ns()
    note = p4runtime_pb2.IdleTimeoutNotification()
    alive: set[int] = set()
    for table, obj in idle_tables(ctx):
        for e in obj.entries():
            alive.add(id(e))
            if not e.idle_timeout_ns or now - e.last_hit_ns < e.idle_timeout_ns:
                continue
            if reported.get(id(e)) == e.last_hit_ns:
                continue  # already reported, not hit since
            reported[id(e)] = e.last_hit_ns
            note.table_entry.add().CopyFrom(entry_of(ctx, table, e))
    for k in [k for k in reported if k not in alive]:
        del reported[k]
    if not note.table_entry:
        return None
    note.timestamp = time.time_ns()
    return note
