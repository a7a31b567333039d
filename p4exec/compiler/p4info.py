"""P4Info (p4.config.v1.P4Info) for a compiled program, with p4c's names and ids."""
from __future__ import annotations

from typing import Any

from p4.config.v1 import p4info_pb2, p4types_pb2

from p4exec.compiler import controlplane
from p4exec.compiler import types as T
from p4exec.frontend import ast as A
from p4exec.frontend.translation_anno import parse_translation
from p4exec.runtime.p4info_ids import Prefix, assign_ids

_MATCH = {"exact": p4info_pb2.MatchField.EXACT, "lpm": p4info_pb2.MatchField.LPM,
          "ternary": p4info_pb2.MatchField.TERNARY, "range": p4info_pb2.MatchField.RANGE,
          "optional": p4info_pb2.MatchField.OPTIONAL}
_CUNIT = {"packets": p4info_pb2.CounterSpec.PACKETS, "bytes": p4info_pb2.CounterSpec.BYTES,
          "packets_and_bytes": p4info_pb2.CounterSpec.BOTH}
_MUNIT = {"packets": p4info_pb2.MeterSpec.PACKETS, "bytes": p4info_pb2.MeterSpec.BYTES}
_SKIP_ANNOS = {"name", "id", "hidden", "priority", "controller_header", "field_list", "match"}
_SCOPE_ANNOS = {"tableonly", "defaultonly"}     # kept on action refs (as p4c does), dropped elsewhere


def _annos(annos: list[A.Annotation] | None, keep: frozenset[str] | set[str] = frozenset()) -> list[str]:
    out: list[str] = []
    for a in annos or ():
        if a.name not in keep and (a.name in _SKIP_ANNOS or a.name in _SCOPE_ANNOS):
            continue
        out.append(f"@{a.name}({a.body})" if a.body else f"@{a.name}")
    return out


def _anno_id(annos: list[A.Annotation] | None) -> int | None:
    a = A.anno(annos, "id")
    if a is not None and a.args and isinstance(a.args[0], int):
        return a.args[0]
    return None


def _aliases(names: list[str]) -> dict[str, str]:
    """Shortest dot-suffix of each name that no other name ends with (p4c's alias rule)."""
    out = {}
    parts = {n: n.split(".") for n in names}
    for n, p in parts.items():
        for k in range(1, len(p) + 1):
            suffix = ".".join(p[-k:])
            clash = any(m != n and (m == suffix or m.endswith("." + suffix)) for m in names)
            if not clash:
                out[n] = suffix
                break
        else:
            out[n] = n
    return out


_TYPE_CONVERTING = ("tables", "action_profiles", "counters", "direct_counters", "meters", "direct_meters",
                    "controller_packet_metadata", "registers", "digests", "externs")


def action_order(events: list[tuple[str | None, str, str]]) -> list[str]:
    """Action names in p4c-bm2-ss's P4Info order. p4c writes P4Info after its mid-end, on the inlined program:
    per V1Switch block in package order, first the global actions that block uses (each copied into the block
    by p4c's action localisation, in the order of their first reference), then the block's own actions in
    declaration order, a sub-control's at the place its instance is declared; a name already listed stays at
    its first place (measured with p4c-bm2-ss 1.2.4.17; docs/p4exec-compiler.md)."""
    globals_ = {n for _, n, kind in events if kind == "global"}
    roles = list(dict.fromkeys(r for r, _, _ in events if r is not None))
    order: dict[str, None] = {}
    for role in roles:
        for r, n, kind in events:
            if r == role and kind == "use" and n in globals_:
                order.setdefault(n)
        for r, n, kind in events:
            if r == role and kind == "decl":
                order.setdefault(n)
    return list(order)


def build_p4info(info: controlplane.ProgramInfo) -> p4info_pb2.P4Info:
    p4 = p4info_pb2.P4Info()
    p4.pkg_info.arch = "v1model"
    # p4c's mid-end removes a table nothing live applies ("Table t is not used; removing"), and with it a direct
    # counter/meter no remaining table uses
    tables = [t for t in info.tables.values() if not t.hidden and t.applied]
    used_actions: dict[str, controlplane.ActionInfo] = {}
    for t in tables:
        for r in t.actions:
            used_actions.setdefault(r.action.name, r.action)
    table_actions = set(used_actions)
    for a in info.direct_actions.values():      # called from apply blocks / other actions: p4c lists them too
        if A.anno(a.annos, "hidden") is None:
            used_actions.setdefault(a.name, a)
    live_tables = {t.name for t in info.tables.values() if t.applied}
    externs = [x for x in info.externs.values()
               if x.kind not in ("direct_counter", "direct_meter") or live_tables.intersection(x.tables)]
    check_translations(info, set(used_actions))
    rank = {n: i for i, n in enumerate(action_order(info.action_events))}

    def _in_p4c_order(actions: dict[str, controlplane.ActionInfo]) -> list[controlplane.ActionInfo]:
        return sorted(actions.values(), key=lambda a: rank.get(a.name, len(rank)))
    # ---- ids
    pairs = []
    annotated = {}

    def reg(prefix: Prefix, name: str, annos: list[A.Annotation] | None) -> None:
        pairs.append((int(prefix), name))
        i = _anno_id(annos)
        if i is not None:
            annotated[(int(prefix), name)] = i

    for t in tables:
        reg(Prefix.TABLE, t.name, t.annos)
    for a in used_actions.values():
        reg(Prefix.ACTION, a.name, a.annos)
    kind_prefix = {"counter": Prefix.COUNTER, "direct_counter": Prefix.DIRECT_COUNTER, "meter": Prefix.METER,
                   "direct_meter": Prefix.DIRECT_METER, "register": Prefix.REGISTER,
                   "action_profile": Prefix.ACTION_PROFILE, "action_selector": Prefix.ACTION_PROFILE}
    for x in externs:
        reg(kind_prefix[x.kind], x.name, x.annos)
    for d in info.digests.values():
        reg(Prefix.DIGEST, d.name, [])
    for c in info.controller_headers.values():  # p4c hashes the header type's name, shows the annotation's
        reg(Prefix.CONTROLLER_HEADER, c.header, c.annos)
    for v in info.value_sets.values():
        reg(Prefix.VALUE_SET, v.name, v.annos)
    ids = assign_ids(pairs, annotated)
    aliases = _aliases([n for _, n in pairs])

    def pre(msg: Any, prefix: Prefix, name: str, annos: list[A.Annotation] | None) -> None:
        msg.preamble.id = ids[(int(prefix), name)]
        msg.preamble.name = name
        msg.preamble.alias = aliases.get(name, name)
        msg.preamble.annotations.extend(_annos(annos))

    for t in tables:
        m = p4.tables.add()
        pre(m, Prefix.TABLE, t.name, t.annos)
        fid = 0
        for k in t.keys:
            if k.match_kind == "selector":
                continue
            fid += 1
            mf = m.match_fields.add()
            mf.id = _anno_id(k.annos) or fid
            mf.name = k.name
            mf.bitwidth = _control_plane_width(k.type, k.width)
            mf.match_type = _MATCH[k.match_kind]
            mf.annotations.extend(_annos(k.annos))
            _type_name(p4.type_info, mf, k.type)
        for r in t.actions:
            ar = m.action_refs.add()
            ar.id = ids[(int(Prefix.ACTION), r.action.name)]
            ar.scope = {"TABLE_AND_DEFAULT": 0, "TABLE_ONLY": 1, "DEFAULT_ONLY": 2}[r.scope]
            ar.annotations.extend(_annos(r.annos, keep=_SCOPE_ANNOS))
        if t.default_action is not None and (int(Prefix.ACTION), t.default_action) in ids:
            aid = ids[(int(Prefix.ACTION), t.default_action)]
            if t.default_const:
                m.const_default_action_id = aid
            m.initial_default_action.action_id = aid
            ainfo = used_actions.get(t.default_action)
            if ainfo is not None:
                for i, (p, v) in enumerate(zip(ainfo.params, t.default_args, strict=False)):
                    arg = m.initial_default_action.arguments.add()
                    arg.param_id = i + 1
                    arg.value = v.to_bytes(max(1, (p.width + 7) // 8), "big")
        if t.implementation:
            x = info.externs[t.implementation]
            m.implementation_id = ids[(int(kind_prefix[x.kind]), x.name)]
        for res in (t.direct_counter, t.direct_meter):
            if res:
                x = info.externs[res]
                m.direct_resource_ids.append(ids[(int(kind_prefix[x.kind]), x.name)])
        m.size = t.size
        if t.idle_timeout:
            m.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        if t.const_entries:
            m.is_const_table = True
        if t.entries:           # p4c 1.2.4.17 sets it for `const entries` too
            m.has_initial_entries = True
    for a in _in_p4c_order(used_actions):
        m = p4.actions.add()
        pre(m, Prefix.ACTION, a.name, a.annos)
        # an action only called directly has every parameter bound at its call sites: p4c lists none
        params = a.params if a.name in table_actions else []
        for i, p in enumerate(params):
            pm = m.params.add()
            pm.id = _anno_id(p.annos) or (i + 1)
            pm.name = p.name
            pm.bitwidth = _control_plane_width(p.type, p.width)
            pm.annotations.extend(_annos(p.annos))
            _type_name(p4.type_info, pm, p.type)
    for x in externs:
        pf = kind_prefix[x.kind]
        if x.kind in ("action_profile", "action_selector"):
            m = p4.action_profiles.add()
            pre(m, pf, x.name, x.annos)
            for tn in x.tables:
                m.table_ids.append(ids[(int(Prefix.TABLE), tn)])
            m.with_selector = x.kind == "action_selector"
            m.size = x.size
            mg = A.anno(x.annos, "max_group_size")
            if mg is not None and mg.args:
                m.max_group_size = int(mg.args[0])
        elif x.kind in ("counter", "direct_counter", "meter", "direct_meter"):
            # counters and meters differ only in their unit enum; direct ones name their table, not a size
            direct = x.kind.startswith("direct_")
            group = {"counter": p4.counters, "direct_counter": p4.direct_counters, "meter": p4.meters,
                     "direct_meter": p4.direct_meters}[x.kind]
            m = group.add()
            pre(m, pf, x.name, x.annos)
            m.spec.unit = (_CUNIT if x.kind.endswith("counter") else _MUNIT)[x.unit]
            if not direct:
                m.size = x.size
            elif x.tables:
                m.direct_table_id = ids[(int(Prefix.TABLE), x.tables[0])]
        elif x.kind == "register":
            m = p4.registers.add()
            pre(m, pf, x.name, x.annos)
            m.type_spec.bitstring.bit.bitwidth = x.width
            m.size = x.size
    for c in info.controller_headers.values():
        m = p4.controller_packet_metadata.add()
        m.preamble.id = ids[(int(Prefix.CONTROLLER_HEADER), c.header)]
        m.preamble.name = m.preamble.alias = c.name
        m.preamble.annotations.extend(_annos(c.annos, keep={"controller_header"}))
        for i, (fname, w, fannos) in enumerate(c.fields):
            ftype = c.types[i] if i < len(c.types) else None
            md = m.metadata.add()
            md.id = _anno_id(fannos) or (i + 1)
            named = A.anno(fannos, "name")     # a field's @name is its control-plane name (p4c)
            md.name = named.args[0] if named is not None and named.args and isinstance(named.args[0], str) \
                else fname
            md.bitwidth = _control_plane_width(ftype, w)
            md.annotations.extend(_annos(fannos))
            _type_name(p4.type_info, md, ftype)
    for v in info.value_sets.values():
        m = p4.value_sets.add()
        pre(m, Prefix.VALUE_SET, v.name, v.annos)
        m.size = v.size
        for i, (fname, w, mk) in enumerate(v.fields):
            mf = m.match.add()
            mf.id = i + 1
            mf.name = fname
            mf.bitwidth = w
            mf.match_type = _MATCH[mk]
    for d in info.digests.values():
        m = p4.digests.add()
        pre(m, Prefix.DIGEST, d.name, [])
        if isinstance(d.type, T.TupleT):
            for it in d.type.items:
                _type_spec(p4.type_info, m.type_spec.tuple.members.add(), it)
            continue
        if isinstance(d.type, T.Bits):
            _type_spec(p4.type_info, m.type_spec, d.type)
            continue
        m.type_spec.struct.name = d.name
        _add_type_info(p4.type_info, d.type)
    if info.calls_extern_functions or info.externs or any(len(getattr(p4, f)) for f in _TYPE_CONVERTING):
        # p4c-bm2-ss writes `type_info {}` once it has converted any type: a table, an extern instance, an
        # extern function call, a digest or a controller header. Actions do not count (a table lists its own,
        # and one only called directly has no parameters left), nor does a parser value_set (measured with
        # p4c-bm2-ss 1.2.4.17).
        p4.type_info.SetInParent()
    if p4.type_info.HasField("error"):
        p4.type_info.error.members[:] = list(info.errors)     # every error, core.p4's first, as p4c lists them
    return p4


def _add_type_info(ti: p4types_pb2.P4TypeInfo, t: T.Type) -> None:
    t = T.strip_new(t)
    if isinstance(t, T.StructT):
        if t.name in ti.structs:
            return
        st = ti.structs[t.name]
        for f, ft in t.fields.items():
            m = st.members.add()
            m.name = f
            _type_spec(ti, m.type_spec, ft)
    elif isinstance(t, T.HeaderT):
        if t.name in ti.headers:
            return
        h = ti.headers[t.name]
        for f, ft in t.fields.items():
            m = h.members.add()
            m.name = f
            b = T.strip_new(ft)
            if isinstance(b, T.Bits) and b.signed:
                m.type_spec.int.bitwidth = b.width
            else:
                m.type_spec.bit.bitwidth = T.bit_width(b) or 0


def _type_name(ti: p4types_pb2.P4TypeInfo, msg: Any, t: T.Type | None) -> None:
    """A match field or param of a `type` declaration names it (type_name) and the type goes into
    type_info.new_types, as p4c writes them; typedefs are transparent."""
    if isinstance(t, T.EnumT) and t.base is not None:
        # p4c converts the field's type, which lists the serializable enum in type_info (the field itself
        # keeps only its bit width)
        _serializable_enum(ti, t)
        return
    if not isinstance(t, T.NewT):
        return
    msg.type_name.name = t.name
    _new_type(ti, t)


def check_translations(info: controlplane.ProgramInfo, live_actions: set[str]) -> None:
    """p4c parses each `@p4runtime_translation` of a type or typedef that live code uses (outside actions, or in
    an action P4Info lists: its mid-end drops the others) and stops at a malformed one with bison's reason."""
    checked: set[str] = set()
    for name, action in info.translated_uses:
        if name not in checked and (action is None or action in live_actions):
            checked.add(name)
            parse_translation(info.translations[name])


def _control_plane_width(t: T.Type | None, device_width: int) -> int:
    """A translated `type` shows the controller its SDN width (0 for an SDN string), as p4c writes it; the
    P4Runtime server translates values (p4exec/p4runtime/sdn_translation.py)."""
    if isinstance(t, T.NewT) and t.translation is not None:
        sdn = parse_translation(t.translation).sdn_bitwidth
        return 0 if sdn is None else sdn
    return device_width


def device_widths(info: controlplane.ProgramInfo) -> dict[str, int]:
    """Data-plane width of each translated `type` a table key or action parameter uses: P4Info carries only
    the SDN side (`translated_type`), the server needs both."""
    out: dict[str, int] = {}
    for t in info.tables.values():
        for k in t.keys:
            if isinstance(k.type, T.NewT) and k.type.translation is not None:
                out[k.type.name] = k.width
    for a in info.actions.values():
        for p in a.params:
            if isinstance(p.type, T.NewT) and p.type.translation is not None:
                out[p.type.name] = p.width
    for c in info.controller_headers.values():
        for (_, w, _), ft in zip(c.fields, c.types, strict=False):
            if isinstance(ft, T.NewT) and ft.translation is not None:
                out[ft.name] = w
    return out


def _new_type(ti: p4types_pb2.P4TypeInfo, t: T.NewT) -> None:
    if t.name in ti.new_types:
        return
    spec = ti.new_types[t.name]
    if t.translation is not None:
        tr = parse_translation(t.translation)
        spec.translated_type.uri = tr.uri
        if tr.sdn_bitwidth is None:
            spec.translated_type.sdn_string.SetInParent()
        else:
            spec.translated_type.sdn_bitwidth = tr.sdn_bitwidth
        return
    b = T.strip_new(t.base)
    if isinstance(b, T.Bits):
        if b.signed:
            spec.original_type.bitstring.int.bitwidth = b.width
        else:
            spec.original_type.bitstring.bit.bitwidth = b.width
    else:
        _type_spec(ti, spec.original_type, t.base)


def _serializable_enum(ti: p4types_pb2.P4TypeInfo, e: T.EnumT) -> None:
    if e.name in ti.serializable_enums or e.base is None:
        return
    spec = ti.serializable_enums[e.name]
    spec.underlying_type.bitwidth = e.base.width
    for m in e.members:
        mm = spec.members.add()
        mm.name = m
        mm.value = (e.values[m] & e.base.mask).to_bytes((e.base.width + 7) // 8, "big")


def _type_spec(ti: p4types_pb2.P4TypeInfo, spec: Any, t: T.Type) -> None:
    if isinstance(t, T.NewT):
        spec.new_type.name = t.name
        _new_type(ti, t)
        return
    b = T.strip_new(t)
    if isinstance(b, T.Bits):
        if b.signed:
            spec.bitstring.int.bitwidth = b.width
        else:
            spec.bitstring.bit.bitwidth = b.width
    elif isinstance(b, T.BoolT):
        spec.bool.SetInParent()
    elif isinstance(b, T.StructT):
        spec.struct.name = b.name
        _add_type_info(ti, b)
    elif isinstance(b, T.HeaderT):
        spec.header.name = b.name
        _add_type_info(ti, b)
    elif isinstance(b, T.EnumT) and b.base is not None:
        spec.serializable_enum.name = b.name
        _serializable_enum(ti, b)
    elif isinstance(b, T.ErrorT):
        spec.error.SetInParent()
        ti.error.SetInParent()          # its members are filled in by build_p4info
    elif isinstance(b, T.EnumT):
        spec.enum.name = b.name
        if b.name not in ti.enums:
            for m in b.members:
                ti.enums[b.name].members.add().name = m
    else:
        spec.bitstring.bit.bitwidth = T.bit_width(b) or 0


_ = p4types_pb2


def device_view(p4: p4info_pb2.P4Info, info: controlplane.ProgramInfo) -> p4info_pb2.P4Info:
    """`p4` with the data-plane width of every translated match field and action parameter: what the runtime's
    tables are built from (the P4Runtime server translates the controller's SDN values to these)."""
    widths = device_widths(info)
    if not widths:
        return p4
    out = p4info_pb2.P4Info()
    out.CopyFrom(p4)
    for t in out.tables:
        for mf in t.match_fields:
            if mf.type_name.name in widths:
                mf.bitwidth = widths[mf.type_name.name]
    for a in out.actions:
        for p in a.params:
            if p.type_name.name in widths:
                p.bitwidth = widths[p.type_name.name]
    for c in out.controller_packet_metadata:
        for md in c.metadata:
            if md.type_name.name in widths:
                md.bitwidth = widths[md.type_name.name]
    return out
