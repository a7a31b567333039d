"""Write and Read of indexed externs, direct resources, the PRE, digests and the queue extension."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

from google.protobuf import struct_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2

from p4exec.p4runtime.codec import decode, encode
from p4exec.p4runtime.context import Context
from p4exec.p4runtime.entities import counter_data_of
from p4exec.p4runtime.errors import P4RuntimeError, invalid, not_found
from p4exec.p4runtime.translate import (
    canonical_field_list,
    canonical_matches,
    direct_counter_of,
    direct_meter_of,
)

U = p4runtime_pb2.Update
Entity: TypeAlias = p4runtime_pb2.Entity

# Queue configuration extension (docs/p4runtime.md): ExternEntry of this type, extern_id = port.
P4EXEC_QUEUE_TYPE = 0x81
_QUEUE_FIELDS = ("depth", "rate_pps", "rate_bps")


def _modify_only(update_type: int, what: str) -> None:
    if update_type != U.MODIFY:
        raise invalid(f"{what} entries exist for every index: only MODIFY is allowed")


def _indices(req_has_index: bool, index: int, size: int, what: str) -> range:
    """The cells an entry names: one index, or all of them when the index is unset (wildcard)."""
    if not req_has_index:
        return range(size)
    if index < 0:
        raise invalid(f"{what}: negative index {index}")
    if index >= size:
        raise P4RuntimeError("OUT_OF_RANGE", f"{what}: index {index} outside 0..{size - 1}")
    return range(index, index + 1)


# -- counters ----------------------------------------------------------------------------------
def write_counter(ctx: Context, update_type: int, msg: p4runtime_pb2.CounterEntry) -> None:
    info = ctx.index.lookup("counters", msg.counter_id, "counter")
    name = info.preamble.name
    _modify_only(update_type, f"counter {name!r}")
    data = msg.data
    for i in _indices(msg.HasField("index"), msg.index.index, info.size, f"counter {name!r}"):
        if not ctx.binding.counter_write(name, i, data.byte_count, data.packet_count):
            ctx.store.counters[msg.counter_id, i] = (data.byte_count, data.packet_count)


def _counter_value(ctx: Context, cid: int, name: str, i: int) -> tuple[int, int]:
    live = ctx.binding.counter_read(name, i)
    return live if live is not None else ctx.store.counters.get((cid, i), (0, 0))


def read_counters(ctx: Context, req: p4runtime_pb2.CounterEntry) -> Iterator[Entity]:
    infos = [ctx.index.lookup("counters", req.counter_id, "counter")] if req.counter_id \
        else list(ctx.index.p4info.counters)
    for info in infos:
        cid, name = info.preamble.id, info.preamble.name
        for i in _indices(req.HasField("index"), req.index.index, info.size, name):
            b, p = _counter_value(ctx, cid, name, i)
            ent = Entity()
            ent.counter_entry.counter_id = cid
            ent.counter_entry.index.index = i
            ent.counter_entry.data.byte_count = b
            ent.counter_entry.data.packet_count = p
            yield ent


def _table_entry_ref(ctx: Context, te: p4runtime_pb2.TableEntry, section: str) -> tuple[Any, Any]:
    """The table and the runtime entry a direct resource message points at."""
    table = ctx.index.table(te.table_id)
    finder = direct_counter_of if section == "counter" else direct_meter_of
    if finder(ctx.index, table) is None:
        raise invalid(f"table {table.preamble.name!r} has no direct {section}")
    probe = p4runtime_pb2.TableEntry(table_id=te.table_id, priority=te.priority)
    canonical_matches(ctx.index, table, te.match, probe.match)
    found = ctx.binding.find(table, probe)
    if found is None:
        raise not_found(f"no such entry in table {table.preamble.name!r}")
    return table, found


def write_direct_counter(ctx: Context, update_type: int, msg: p4runtime_pb2.DirectCounterEntry) -> None:
    _modify_only(update_type, "direct counter")
    _table, found = _table_entry_ref(ctx, msg.table_entry, "counter")
    if not msg.HasField("data"):
        return  # unset data: the counter is not changed (spec)
    found.packet_count, found.byte_count = msg.data.packet_count, msg.data.byte_count


def _direct_targets(ctx: Context, te: p4runtime_pb2.TableEntry, what: str,
                    resource_of: Callable[..., object]) -> list[tuple[Any, Any]]:
    """Entries a direct counter/meter read addresses: one entry by key, or every entry of the tables
    (one table, or all) that have such a resource."""
    if te.table_id and (te.match or te.priority):
        return [_table_entry_ref(ctx, te, what)]
    tables = [ctx.index.table(te.table_id)] if te.table_id else list(ctx.index.p4info.tables)
    return [(t, e) for t in tables if resource_of(ctx.index, t) is not None
            for e in ctx.binding.table(t).entries()]


def read_direct_counters(ctx: Context, req: p4runtime_pb2.DirectCounterEntry) -> Iterator[Entity]:
    for table, found in _direct_targets(ctx, req.table_entry, "counter", direct_counter_of):
        ent = Entity()
        ent.direct_counter_entry.table_entry.CopyFrom(_key_only(ctx, table, found))
        ent.direct_counter_entry.data.CopyFrom(counter_data_of(found))
        yield ent


def _key_only(ctx: Context, table, found) -> p4runtime_pb2.TableEntry:
    full = ctx.binding.entry_proto(table, found)
    out = p4runtime_pb2.TableEntry(table_id=full.table_id, priority=full.priority)
    out.match.extend(full.match)
    return out


# -- meters ------------------------------------------------------------------------------------
def _check_meter_config(cfg: p4runtime_pb2.MeterConfig) -> None:
    if cfg.cir < 0 or cfg.pir < 0 or cfg.cburst < 0 or cfg.pburst < 0:
        raise invalid("meter rates and bursts must not be negative")
    if cfg.pir < cfg.cir:
        raise invalid(f"meter PIR {cfg.pir} is below CIR {cfg.cir}")


def write_meter(ctx: Context, update_type: int, msg: p4runtime_pb2.MeterEntry) -> None:
    info = ctx.index.lookup("meters", msg.meter_id, "meter")
    name = info.preamble.name
    _modify_only(update_type, f"meter {name!r}")
    cells = _indices(msg.HasField("index"), msg.index.index, info.size, f"meter {name!r}")
    cfg = msg.config if msg.HasField("config") else None
    if cfg is not None:
        _check_meter_config(cfg)
    for i in cells:
        ctx.binding.meter_set(name, i, cfg)
        if cfg is None:
            ctx.store.meters.pop((msg.meter_id, i), None)
        else:
            ctx.store.meters[msg.meter_id, i] = cfg


def read_meters(ctx: Context, req: p4runtime_pb2.MeterEntry) -> Iterator[Entity]:
    infos = [ctx.index.lookup("meters", req.meter_id, "meter")] if req.meter_id \
        else list(ctx.index.p4info.meters)
    for info in infos:
        mid = info.preamble.id
        for i in _indices(req.HasField("index"), req.index.index, info.size, info.preamble.name):
            ent = Entity()
            ent.meter_entry.meter_id = mid
            ent.meter_entry.index.index = i
            cfg = ctx.store.meters.get((mid, i))
            if cfg is not None:
                ent.meter_entry.config.CopyFrom(cfg)
            yield ent


def write_direct_meter(ctx: Context, update_type: int, msg: p4runtime_pb2.DirectMeterEntry) -> None:
    _modify_only(update_type, "direct meter")
    table, found = _table_entry_ref(ctx, msg.table_entry, "meter")
    cfg = msg.config if msg.HasField("config") else None
    if cfg is not None:
        _check_meter_config(cfg)
    ctx.binding.direct_meter_set(table, found, cfg)


def read_direct_meters(ctx: Context, req: p4runtime_pb2.DirectMeterEntry) -> Iterator[Entity]:
    for table, found in _direct_targets(ctx, req.table_entry, "meter", direct_meter_of):
        ent = Entity()
        ent.direct_meter_entry.table_entry.CopyFrom(_key_only(ctx, table, found))
        cfg = ctx.binding.direct_meter_config(found)
        if cfg is not None:
            ent.direct_meter_entry.config.CopyFrom(cfg)
        yield ent


# -- registers ---------------------------------------------------------------------------------
def _register_width(info) -> int:
    spec = info.type_spec
    if spec.WhichOneof("type_spec") != "bitstring":
        raise P4RuntimeError("UNIMPLEMENTED", f"register {info.preamble.name!r}: non-bit<W> cells")
    bs = spec.bitstring
    kind = bs.WhichOneof("type_spec")
    return getattr(bs, kind).bitwidth if kind in ("bit", "int") else 0


def write_register(ctx: Context, update_type: int, msg: p4runtime_pb2.RegisterEntry) -> None:
    info = ctx.index.lookup("registers", msg.register_id, "register")
    name = info.preamble.name
    _modify_only(update_type, f"register {name!r}")
    cells = _indices(msg.HasField("index"), msg.index.index, info.size, f"register {name!r}")
    if msg.data.WhichOneof("data") != "bitstring":
        raise invalid(f"register {name!r}: data must be a bitstring")
    value = decode(msg.data.bitstring, _register_width(info), f"register {name!r} value")
    for i in cells:
        if not ctx.binding.register_write(name, i, value):
            ctx.store.registers[msg.register_id, i] = value


def read_registers(ctx: Context, req: p4runtime_pb2.RegisterEntry) -> Iterator[Entity]:
    infos = [ctx.index.lookup("registers", req.register_id, "register")] if req.register_id \
        else list(ctx.index.p4info.registers)
    for info in infos:
        rid, name = info.preamble.id, info.preamble.name
        for i in _indices(req.HasField("index"), req.index.index, info.size, name):
            value = ctx.binding.register_read(name, i)
            if value is None:
                value = ctx.store.registers.get((rid, i), 0)
            ent = Entity()
            ent.register_entry.register_id = rid
            ent.register_entry.index.index = i
            ent.register_entry.data.CopyFrom(p4data_pb2.P4Data(bitstring=encode(value)))
            yield ent


# -- packet replication engine -----------------------------------------------------------------
def _replicas(replicas, what: str) -> None:
    seen = set()
    for r in replicas:
        port = int.from_bytes(r.port, "big") if r.WhichOneof("port_kind") == "port" else r.egress_port
        if (port, r.instance) in seen:
            raise invalid(f"{what}: replica (port {port}, instance {r.instance}) listed twice")
        seen.add((port, r.instance))


def write_pre(ctx: Context, update_type: int, msg: p4runtime_pb2.PacketReplicationEngineEntry) -> None:
    kind = msg.WhichOneof("type")
    if kind == "multicast_group_entry":
        e = msg.multicast_group_entry
        gid, table, what = e.multicast_group_id, ctx.store.mcast, "multicast group"
    elif kind == "clone_session_entry":
        e = msg.clone_session_entry
        gid, table, what = e.session_id, ctx.store.clones, "clone session"
    else:
        raise invalid("empty packet replication engine entry")
    if gid == 0:
        raise invalid(f"{what} id 0 is reserved")
    if update_type == U.INSERT and gid in table:
        raise P4RuntimeError("ALREADY_EXISTS", f"{what} {gid} exists")
    if update_type != U.INSERT and gid not in table:
        raise not_found(f"no {what} {gid}")
    if update_type != U.DELETE:
        _replicas(e.replicas, f"{what} {gid}")
    if kind == "multicast_group_entry":
        ctx.binding.mcast_write(update_type, e)
    else:
        ctx.binding.clone_write(update_type, e)
    if update_type == U.DELETE:
        del table[gid]
    else:
        table[gid] = type(e)()
        table[gid].CopyFrom(e)


def read_pre(ctx: Context, req: p4runtime_pb2.PacketReplicationEngineEntry) -> Iterator[Entity]:
    kind = req.WhichOneof("type")
    if kind in (None, "multicast_group_entry"):
        want = req.multicast_group_entry.multicast_group_id if kind else 0
        for gid, e in ctx.store.mcast.items():
            if not want or gid == want:
                ent = Entity()
                ent.packet_replication_engine_entry.multicast_group_entry.CopyFrom(e)
                yield ent
    if kind in (None, "clone_session_entry"):
        want = req.clone_session_entry.session_id if kind else 0
        for sid, e in ctx.store.clones.items():
            if not want or sid == want:
                ent = Entity()
                ent.packet_replication_engine_entry.clone_session_entry.CopyFrom(e)
                yield ent


# -- digests -----------------------------------------------------------------------------------
def write_digest(ctx: Context, update_type: int, msg: p4runtime_pb2.DigestEntry) -> None:
    info = ctx.index.lookup("digests", msg.digest_id, "digest")
    name = info.preamble.name
    configs = ctx.store.digests
    if update_type == U.INSERT and msg.digest_id in configs:
        raise P4RuntimeError("ALREADY_EXISTS", f"digest {name!r} is already configured")
    if update_type != U.INSERT and msg.digest_id not in configs:
        raise not_found(f"digest {name!r} is not configured")
    if update_type == U.DELETE:
        ctx.binding.digest_config(name, None)
        del configs[msg.digest_id]
        return
    cfg = msg.config
    if cfg.max_timeout_ns < 0 or cfg.max_list_size < 0 or cfg.ack_timeout_ns < 0:
        raise invalid("digest config values must not be negative")
    stored = p4runtime_pb2.DigestEntry.Config()
    stored.CopyFrom(cfg)
    ctx.binding.digest_config(name, stored)
    configs[msg.digest_id] = stored


def read_digests(ctx: Context, req: p4runtime_pb2.DigestEntry) -> Iterator[Entity]:
    if req.digest_id:
        ctx.index.lookup("digests", req.digest_id, "digest")
    for did, cfg in ctx.store.digests.items():
        if not req.digest_id or did == req.digest_id:
            ent = Entity()
            ent.digest_entry.digest_id = did
            ent.digest_entry.config.CopyFrom(cfg)
            yield ent


# -- parser value sets -------------------------------------------------------------------------
def write_value_set(ctx: Context, update_type: int, msg: p4runtime_pb2.ValueSetEntry) -> None:
    """MODIFY replaces the whole member list (P4Runtime: value sets have one entry each)."""
    info = ctx.index.lookup("value_sets", msg.value_set_id, "value set")
    name = info.preamble.name
    _modify_only(update_type, f"value set {name!r}")
    stored = p4runtime_pb2.ValueSetEntry(value_set_id=msg.value_set_id)
    members = [canonical_field_list(name, list(info.match), m.match, stored.members.add().match)
               for m in msg.members]
    keys = [tuple(m.SerializeToString(deterministic=True) for m in match) for match in members]
    if len(set(keys)) != len(keys):
        raise P4RuntimeError("ALREADY_EXISTS", f"value set {name!r}: a member is given twice")
    if info.size and len(members) > info.size:
        raise P4RuntimeError("RESOURCE_EXHAUSTED", f"value set {name!r} holds {info.size} members")
    ctx.binding.value_set_write(info, members)
    ctx.store.value_sets[msg.value_set_id] = stored


def read_value_sets(ctx: Context, req: p4runtime_pb2.ValueSetEntry) -> Iterator[Entity]:
    infos = [ctx.index.lookup("value_sets", req.value_set_id, "value set")] if req.value_set_id \
        else list(ctx.index.p4info.value_sets)
    for info in infos:
        stored = ctx.store.value_sets.get(info.preamble.id)
        yield Entity(value_set_entry=stored or p4runtime_pb2.ValueSetEntry(value_set_id=info.preamble.id))


# -- queue extension ---------------------------------------------------------------------------
def write_extern(ctx: Context | None, device, update_type: int, msg: p4runtime_pb2.ExternEntry) -> None:
    if msg.extern_type_id != P4EXEC_QUEUE_TYPE:
        raise not_found(f"unknown extern type {msg.extern_type_id:#x}")
    if update_type != U.MODIFY:
        raise invalid("queues exist for every port: only MODIFY is allowed")
    st = struct_pb2.Struct()
    if not msg.entry.Unpack(st):
        raise invalid("a p4exec queue entry carries a google.protobuf.Struct")
    values: dict[str, int] = {}
    for k, v in st.fields.items():
        if k not in _QUEUE_FIELDS:
            raise invalid(f"unknown queue field {k!r} (known: {', '.join(_QUEUE_FIELDS)})")
        if v.WhichOneof("kind") != "number_value" or v.number_value < 0 \
                or v.number_value != int(v.number_value):
            raise invalid(f"queue field {k!r} must be a non-negative integer")
        values[k] = int(v.number_value)
    ports = device.port_status()
    if ports and msg.extern_id not in ports:
        raise not_found(f"no port {msg.extern_id}")
    device.set_queue(msg.extern_id, **values)


def read_externs(ctx: Context | None, device, req: p4runtime_pb2.ExternEntry) -> Iterator[Entity]:
    if req.extern_type_id not in (0, P4EXEC_QUEUE_TYPE):
        raise not_found(f"unknown extern type {req.extern_type_id:#x}")
    ports = device.port_status()
    if req.extern_id:
        if ports and req.extern_id not in ports:
            raise not_found(f"no port {req.extern_id}")
        targets = [req.extern_id]
    else:
        targets = sorted(ports)
    for port in targets:
        q = device.queue_config(port)
        st = struct_pb2.Struct()
        for k in _QUEUE_FIELDS:
            st.fields[k].number_value = getattr(q, k)
        info = ports.get(port)
        st.fields["up"].bool_value = bool(getattr(info, "up", True))
        ent = Entity()
        ent.extern_entry.extern_type_id = P4EXEC_QUEUE_TYPE
        ent.extern_entry.extern_id = port
        ent.extern_entry.entry.Pack(st)
        yield ent

