"""@p4runtime_translation values: the controller's (SDN) values on the wire, the device's in the data plane.

P4Runtime spec, "Translation of Port Numbers": a match field or action parameter whose P4Info `type_name` names a
`translated_type` carries SDN values — `sdn_bitwidth` bits or, with `sdn_string`, a string — and the server
maps them to the device values the data plane uses on Write, and back on Read. The mapping is out-of-band
switch configuration; here it is a `TranslationTable` per translated type, one symmetric encode/decode pair:

- explicit pairs (`SdnConfig`, keyed by the type's URI): only those values translate, any other is an error;
- none given, `sdn_bitwidth`: the identity, for SDN values that fit the device width;
- none given, `sdn_string`: each new string gets the lowest free device value, in the order first written.

A value with no mapping is INVALID_ARGUMENT on Write (nothing is applied) and INTERNAL on Read (a device value
the controller never wrote, e.g. a program's const entry, under a string or explicit mapping). Only
exact-like matches translate (exact, optional, a full ternary mask, a full LPM prefix, a one-value range), as
the spec allows a server to require. The server calls this module at three places (service.py): Write,
WriteRaw (translated pipelines skip the wire fast path) and Read.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4exec.p4runtime.codec import encode
from p4exec.p4runtime.errors import P4RuntimeError, invalid

MF = p4info_pb2.MatchField


@dataclass(frozen=True)
class TranslatedType:
    """A P4 `type` the controller sees through `@p4runtime_translation`."""
    name: str
    uri: str
    sdn_bitwidth: int | None        # None: SDN strings
    device_bitwidth: int


SdnValue = int | str


@dataclass(frozen=True)
class SdnConfig:
    """The out-of-band mapping: URI -> {SDN value: device value}. SDN values are ints (sdn_bitwidth) or strings."""
    mappings: Mapping[str, Mapping[SdnValue, int]] = field(default_factory=dict)


class TranslationTable:
    """One translated type's SDN <-> device mapping; both directions always agree (a bijection)."""

    def __init__(self, t: TranslatedType, pairs: Mapping[SdnValue, int] | None = None) -> None:
        self.type = t
        self.explicit = pairs is not None
        self._to_device: dict[SdnValue, int] = {}
        self._to_sdn: dict[int, SdnValue] = {}
        for sdn, dev in (pairs or {}).items():
            self._add(self._check_sdn(sdn), dev)

    def _add(self, sdn: SdnValue, dev: int) -> None:
        if not 0 <= dev < (1 << self.type.device_bitwidth):
            raise ValueError(f"{self.type.uri}: device value {dev} does not fit in {self.type.device_bitwidth} bits")
        if dev in self._to_sdn and self._to_sdn[dev] != sdn:
            raise ValueError(f"{self.type.uri}: device value {dev} mapped twice")
        self._to_device[sdn] = dev
        self._to_sdn[dev] = sdn

    def _check_sdn(self, sdn: SdnValue) -> SdnValue:
        t = self.type
        if t.sdn_bitwidth is None:
            if not isinstance(sdn, str) or not sdn:
                raise invalid(f"{t.name} ({t.uri}) takes non-empty SDN strings, not {sdn!r}")
        elif isinstance(sdn, str) or not 0 <= sdn < (1 << t.sdn_bitwidth):
            raise invalid(f"SDN value {sdn!r} of {t.name} ({t.uri}) does not fit in {t.sdn_bitwidth} bits")
        return sdn

    def _sdn_of_bytes(self, data: bytes) -> SdnValue:
        if self.type.sdn_bitwidth is None:
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                raise invalid(f"SDN string of {self.type.name} is not UTF-8") from None
        if not data:
            raise invalid(f"empty SDN value of {self.type.name}")
        return int.from_bytes(data, "big")

    def to_device(self, data: bytes) -> int:
        """The device value for an SDN value (P4Runtime bytes)."""
        sdn = self._check_sdn(self._sdn_of_bytes(data))
        dev = self._to_device.get(sdn)
        if dev is not None:
            return dev
        t = self.type
        if self.explicit:
            raise invalid(f"no mapping for SDN value {sdn!r} of {t.name} ({t.uri})")
        if t.sdn_bitwidth is not None:          # identity
            if isinstance(sdn, int) and sdn < (1 << t.device_bitwidth):
                return sdn
            raise invalid(f"no mapping for SDN value {sdn!r} of {t.name} ({t.uri}): the identity mapping "
                          f"covers device values below 2^{t.device_bitwidth}")
        free = next((d for d in range(1 << t.device_bitwidth) if d not in self._to_sdn), None)
        if free is None:
            raise P4RuntimeError("RESOURCE_EXHAUSTED", f"{t.name} ({t.uri}): all {1 << t.device_bitwidth} "
                                 "device values are mapped")
        self._add(sdn, free)
        return free

    def to_sdn(self, device: int) -> bytes:
        """The SDN value (P4Runtime bytes, canonical) of a device value."""
        sdn = self._to_sdn.get(device)
        if sdn is None:
            t = self.type
            if self.explicit or t.sdn_bitwidth is None:
                raise P4RuntimeError("INTERNAL", f"device value {device} of {t.name} ({t.uri}) has no SDN "
                                     "mapping")
            sdn = device
        return sdn.encode("utf-8") if isinstance(sdn, str) else encode(sdn)


class SdnTranslator:
    """Every translated match field and action parameter of one pipeline, by P4Info id."""

    def __init__(self, p4info: p4info_pb2.P4Info, device_widths: Mapping[str, int],
                 config: SdnConfig | None = None) -> None:
        config = config or SdnConfig()
        self.tables: dict[str, TranslationTable] = {}
        for name, spec in p4info.type_info.new_types.items():
            if not spec.HasField("translated_type"):
                continue
            tt = spec.translated_type
            sdn_w = tt.sdn_bitwidth if tt.WhichOneof("sdn_type") == "sdn_bitwidth" else None
            # a control-only pipeline has no data plane: its device values are the SDN ones
            dev_w = device_widths.get(name, sdn_w if sdn_w is not None else 32)
            self.tables[name] = TranslationTable(TranslatedType(name, tt.uri, sdn_w, dev_w),
                                                 config.mappings.get(tt.uri))
        self.match: dict[int, dict[int, tuple[TranslationTable, p4info_pb2.MatchField]]] = {}
        self.params: dict[int, dict[int, TranslationTable]] = {}
        self.packet_metadata: dict[str, dict[int, TranslationTable]] = {}   # "packet_in"/"packet_out" -> id
        if not self.tables:
            return
        for c in p4info.controller_packet_metadata:
            md = {m.id: self.tables[m.type_name.name] for m in c.metadata if m.type_name.name in self.tables}
            if md:
                self.packet_metadata[c.preamble.name] = md
        for t in p4info.tables:
            fields = {mf.id: (self.tables[mf.type_name.name], mf) for mf in t.match_fields
                      if mf.type_name.name in self.tables}
            if fields:
                self.match[t.preamble.id] = fields
        for a in p4info.actions:
            params = {p.id: self.tables[p.type_name.name] for p in a.params if p.type_name.name in self.tables}
            if params:
                self.params[a.preamble.id] = params

    @property
    def active(self) -> bool:
        return bool(self.match or self.params)

    # -- Write: SDN -> device -----------------------------------------------------------------
    def request_to_device(self, request: p4runtime_pb2.WriteRequest) -> p4runtime_pb2.WriteRequest:
        """A copy of `request` with device values (the request itself when nothing is translated)."""
        if not self.active:
            return request
        out = p4runtime_pb2.WriteRequest()
        out.CopyFrom(request)
        for u in out.updates:
            self._entity(u.entity, self._field_to_device, self._param_to_device)
        return out

    def _field_to_device(self, tbl: TranslationTable, mf: p4info_pb2.MatchField,
                         fm: p4runtime_pb2.FieldMatch) -> None:
        kind = fm.WhichOneof("field_match_type")
        w = mf.bitwidth
        full = (1 << w) - 1
        dev_full = (1 << tbl.type.device_bitwidth) - 1
        if kind == "exact":
            fm.exact.value = encode(tbl.to_device(fm.exact.value))
        elif kind == "optional":
            fm.optional.value = encode(tbl.to_device(fm.optional.value))
        elif kind == "ternary" and w and int.from_bytes(fm.ternary.mask, "big") == full:
            fm.ternary.value = encode(tbl.to_device(fm.ternary.value))
            fm.ternary.mask = encode(dev_full)
        elif kind == "lpm" and w and fm.lpm.prefix_len == w:
            fm.lpm.value = encode(tbl.to_device(fm.lpm.value))
            fm.lpm.prefix_len = tbl.type.device_bitwidth
        elif kind == "range" and fm.range.low == fm.range.high:
            fm.range.low = fm.range.high = encode(tbl.to_device(fm.range.low))
        else:
            raise invalid(f"match field {mf.name!r} has translated type {tbl.type.name}: only exact matches "
                          "(or don't-care) translate")

    @staticmethod
    def _param_to_device(tbl: TranslationTable, p: p4runtime_pb2.Action.Param) -> None:
        p.value = encode(tbl.to_device(p.value))

    def entities_to_device(self, entities: Iterable[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        """A Read request's entities (filters name SDN values) with device values."""
        return self._copy_entities(entities, self._field_to_device, self._param_to_device)

    def packet_out_to_device(self, msg: p4runtime_pb2.PacketOut) -> p4runtime_pb2.PacketOut:
        return self._packet(msg, "packet_out", lambda t, v: encode(t.to_device(v)))

    # -- Read: device -> SDN ------------------------------------------------------------------
    def packet_in_to_sdn(self, msg: p4runtime_pb2.PacketIn) -> p4runtime_pb2.PacketIn:
        return self._packet(msg, "packet_in", lambda t, v: t.to_sdn(int.from_bytes(v, "big")))

    def _packet(self, msg, kind: str, convert):
        md = self.packet_metadata.get(kind)
        if not md:
            return msg
        out = type(msg)()
        out.CopyFrom(msg)
        for m in out.metadata:
            tbl = md.get(m.metadata_id)
            if tbl is not None:
                m.value = convert(tbl, m.value)
        return out

    def entities_to_sdn(self, entities: Iterable[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        """Copies of the read entities with SDN values (the same objects when nothing is translated)."""
        return self._copy_entities(entities, self._field_to_sdn, self._param_to_sdn)

    def _copy_entities(self, entities: Iterable[p4runtime_pb2.Entity], on_field,
                       on_param) -> list[p4runtime_pb2.Entity]:
        if not self.active:
            return list(entities)
        out = []
        for e in entities:
            c = p4runtime_pb2.Entity()
            c.CopyFrom(e)
            self._entity(c, on_field, on_param)
            out.append(c)
        return out

    @staticmethod
    def _field_to_sdn(tbl: TranslationTable, mf: p4info_pb2.MatchField, fm: p4runtime_pb2.FieldMatch) -> None:
        kind = fm.WhichOneof("field_match_type")
        if kind in ("exact", "optional"):
            m = getattr(fm, kind)
            m.value = tbl.to_sdn(int.from_bytes(m.value, "big"))
        elif kind == "ternary":
            fm.ternary.value = tbl.to_sdn(int.from_bytes(fm.ternary.value, "big"))
            fm.ternary.mask = encode((1 << mf.bitwidth) - 1)
        elif kind == "lpm":
            fm.lpm.value = tbl.to_sdn(int.from_bytes(fm.lpm.value, "big"))
            fm.lpm.prefix_len = mf.bitwidth
        elif kind == "range":
            fm.range.low = fm.range.high = tbl.to_sdn(int.from_bytes(fm.range.low, "big"))

    @staticmethod
    def _param_to_sdn(tbl: TranslationTable, p: p4runtime_pb2.Action.Param) -> None:
        p.value = tbl.to_sdn(int.from_bytes(p.value, "big"))

    # -- both directions: where translated values sit in an entity ------------------------------
    def _entity(self, e: p4runtime_pb2.Entity, on_field, on_param) -> None:
        kind = e.WhichOneof("entity")
        if kind == "table_entry":
            te = e.table_entry
            fields = self.match.get(te.table_id)
            if fields:
                for fm in te.match:
                    hit = fields.get(fm.field_id)
                    if hit is not None:
                        on_field(hit[0], hit[1], fm)
            which = te.action.WhichOneof("type")
            if which == "action":
                self._action(te.action.action, on_param)
            elif which == "action_profile_action_set":
                for pa in te.action.action_profile_action_set.action_profile_actions:
                    self._action(pa.action, on_param)
        elif kind == "action_profile_member":
            self._action(e.action_profile_member.action, on_param)

    def _action(self, a: p4runtime_pb2.Action, on_param) -> None:
        params = self.params.get(a.action_id)
        if params:
            for p in a.params:
                tbl = params.get(p.param_id)
                if tbl is not None:
                    on_param(tbl, p)


_NO_TRANSLATION = SdnTranslator(p4info_pb2.P4Info(), {})


def for_context(ctx, config: SdnConfig | None = None) -> SdnTranslator:
    """The translator of a live pipeline (server Context), built once per pipeline and kept on it."""
    if ctx is None:
        return _NO_TRANSLATION
    tr = getattr(ctx, "sdn_translator", None)
    if tr is None:
        compiled = _compiled(ctx.program)
        widths = {} if compiled is None else _device_widths(compiled.info)
        tr = SdnTranslator(ctx.program.p4info, widths, config)
        ctx.sdn_translator = tr
    return tr


def _device_widths(info) -> dict[str, int]:
    from p4exec.compiler.p4info import device_widths
    return device_widths(info)


def device_p4info(program) -> p4info_pb2.P4Info:
    """The pipeline's P4Info with device widths for translated values: what the server checks translated
    (device) values against and lays packet-in/out headers out by."""
    compiled = _compiled(program)
    if compiled is None:
        return program.p4info
    from p4exec.compiler.p4info import device_view
    return device_view(program.p4info, compiled.info)


def _compiled(program):
    """The compiled program behind a pipeline; None for a control-only one (or a device of its own)."""
    return getattr(program.loaded, "compiled", None)
