"""Control-plane description of a compiled program: what P4Info and the runtime state are built from."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ParamInfo:
    name: str
    width: int
    annos: list = field(default_factory=list)
    type: Any = None               # the P4 type (P4Info names `type` declarations: type_name, new_types)


@dataclass
class ActionInfo:
    name: str                      # fully-qualified P4Info name
    local: str                     # name in its control
    params: list[ParamInfo]        # control-plane (directionless) params
    annos: list = field(default_factory=list)
    pyfunc: str = ""               # generated function name
    n_dir_params: int = 0
    decl: Any = None
    copy_objects: bool = False     # header/struct out/inout args need real copy-in/copy-out (body sees outer state)
    # the first call statement or `exit` in the body, as (text, location): a caller that calls this action
    # conditionally inherits it (p4c-bm2-ss inlines the action, then rejects the conditional call)
    first_effect: tuple[str, Any] | None = None


@dataclass
class KeyInfo:
    name: str
    match_kind: str
    width: int
    annos: list = field(default_factory=list)
    type: Any = None


@dataclass
class ActionRefInfo:
    action: ActionInfo
    scope: str = "TABLE_AND_DEFAULT"   # or TABLE_ONLY / DEFAULT_ONLY
    annos: list = field(default_factory=list)


@dataclass
class ConstEntry:
    match: tuple                    # runtime FieldMatch objects / None
    priority: int
    action: str
    args: tuple


@dataclass
class TableInfo:
    name: str
    local: str
    keys: list[KeyInfo]
    actions: list[ActionRefInfo]
    default_action: str | None = None
    default_args: tuple = ()
    default_const: bool = False
    size: int = 1024
    entries: list[ConstEntry] = field(default_factory=list)
    const_entries: bool = False
    direct_counter: str | None = None
    direct_meter: str | None = None
    implementation: str | None = None
    annos: list = field(default_factory=list)
    hidden: bool = False
    applied: bool = False          # applied somewhere a constant condition does not rule out (P4Info lists it)
    idle_timeout: bool = False
    pyfunc: str = ""
    pyobj: str = ""


@dataclass
class ExternInstance:
    kind: str                      # counter, direct_counter, meter, direct_meter, register, action_profile, action_selector
    name: str
    size: int = 0
    unit: str = ""                 # packets / bytes / packets_and_bytes
    width: int = 0                 # register cell width
    index_width: int = 32
    annos: list = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    algo: str = ""                 # selector hash algorithm
    output_width: int = 0
    meter_result_width: int = 0
    pyobj: str = ""
    type_name: str = ""
    # direct_meter: the one destination of its read() calls (p4c-bm2-ss's result_target), as P4 text, and the
    # control context it is written in; BMv2 writes it when the meter's table hits an entry
    read_target: str | None = None
    read_ctx: str = ""


@dataclass
class DigestInfo:
    name: str
    fields: list[tuple[str, int]]  # (field name, width)
    type: Any = None


@dataclass
class ControllerHeaderInfo:
    name: str                      # "packet_in" / "packet_out"
    header: str                    # header type name
    fields: list[tuple[str, int, list]]  # (name, width, annos)
    annos: list = field(default_factory=list)
    types: list = field(default_factory=list)   # each field's P4 type (P4Info names `type`s: type_name)


@dataclass
class ValueSetInfo:
    name: str
    size: int
    fields: list[tuple[str, int, str]]     # (name, width, match kind)
    annos: list = field(default_factory=list)


@dataclass
class ProgramInfo:
    actions: dict[str, ActionInfo] = field(default_factory=dict)
    tables: dict[str, TableInfo] = field(default_factory=dict)
    externs: dict[str, ExternInstance] = field(default_factory=dict)
    digests: dict[str, DigestInfo] = field(default_factory=dict)
    controller_headers: dict[str, ControllerHeaderInfo] = field(default_factory=dict)
    value_sets: dict[str, ValueSetInfo] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    arch: str = "v1model"
    # `file:line:col: warning: ...` for what p4c-bm2-ss accepts with a warning but BMv2 runs differently
    warnings: list[str] = field(default_factory=list)
    # actions called directly from a control's apply block (P4Info lists them as p4c does; not those only called
    # from other actions, which p4c inlines first)
    direct_actions: dict[str, ActionInfo] = field(default_factory=dict)
    # the program calls an extern function (mark_to_drop, hash, verify_checksum, ...): p4c's P4Info serializer
    # then writes a type_info, empty or not
    calls_extern_functions: bool = False
    # (V1Switch block, action name, "decl" | "use") in compile order, which is p4c's inlined source order:
    # local action declarations and every action reference (table lists, direct calls); P4Info orders its
    # actions from it as p4c does (p4exec/compiler/p4info.py: action_order)
    action_events: list[tuple[str | None, str, str]] = field(default_factory=list)
    # @p4runtime_translation of each typedef/type declaring one, and every use of such a type name with the
    # action it is in (None outside actions): p4c reads the annotation only where the use is live
    translations: dict[str, Any] = field(default_factory=dict)
    translated_uses: list[tuple[str, str | None]] = field(default_factory=list)
