"""Everything the entity handlers need about the live pipeline, in one object."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4.config.v1 import p4info_pb2

from p4exec.device.program import Program
from p4exec.p4runtime import sdn_translation
from p4exec.p4runtime.p4info_index import P4InfoIndex
from p4exec.p4runtime.runtime_binding import Binding
from p4exec.p4runtime.store import Store


@dataclass
class Context:
    program: Program
    index: P4InfoIndex
    binding: Binding
    device: Any
    cookie: int = 0
    store: Store = field(default_factory=Store)
    has_idle_tables: bool = False  # any NOTIFY_CONTROL table: only then scan for idle entries
    fast_layouts: dict[int, Any] = field(default_factory=dict)  # table id -> fastpath.TableLayout | None
    fast_readers: dict[int, list] = field(default_factory=dict)  # update length -> fastpath readers

    @classmethod
    def build(cls, program: Program, device: Any, cookie: int = 0) -> Context:
        index = P4InfoIndex.build(sdn_translation.device_p4info(program))  # device widths (translated types)
        ctx = cls(program=program, index=index, binding=Binding(program), device=device,
                  cookie=cookie)
        ctx.has_idle_tables = any(t.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL
                                  for t in program.p4info.tables)
        return ctx
