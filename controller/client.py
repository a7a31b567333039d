"""A P4Runtime client with a name-based API, usable on its own by a researcher.

One `SwitchConnection` per switch: a gRPC channel, a stream channel (arbitration, packet-in/out, digests) served
by one background thread, and helpers that turn names and human values into P4Runtime messages.

    sw = SwitchConnection("127.0.0.1:9559", device_id=0, p4info=load_p4info("basic_l3.p4info.txtpb"))
    sw.connect()
    sw.set_pipeline(device_config=Path("basic_l3.p4exec.json").read_bytes())
    sw.insert(sw.table_entry("ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.1.0/24"},
                             "ipv4_forward", {"dstAddr": "00:00:00:00:01:01", "port": 1}))
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import grpc
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2 as pb
from p4.v1 import p4runtime_pb2_grpc

from controller.bmv2 import Bmv2SideChannel
from controller.channels import CHANNELS
from controller.codec import Value, decode, encode, parse_prefix
from controller.device import DeviceMixin
from controller.errors import ControllerError
from controller.messages import (
    ActionEncoder,
    ActionSpec,
    EncodedUpdate,
    FieldSpec,
    TableEntryEncoder,
    UpdateLike,
    as_entity,
    election,
    parse_write_error,
)
from controller.p4info_index import P4InfoIndex
from controller.pre import PreMixin
from p4exec.entry_codec import KINDS

_STOP = object()
_UPDATES_KEY = bytes([pb.WriteRequest.DESCRIPTOR.fields_by_name["updates"].number << 3 | 2])  # a LEN field
# Big pipeline configs and batches: the server accepts up to 256 MB.
# Big metadata limits: the per-update errors of a failed 500-update batch travel in the status details
# (trailing metadata); with gRPC's default 8/16 KiB limits the server has to send them compact or cut.
_CHANNEL_OPTIONS = [("grpc.max_send_message_length", 256 << 20), ("grpc.max_receive_message_length", 256 << 20),
                    ("grpc.max_metadata_size", 5 << 20), ("grpc.absolute_max_metadata_size", 5 << 20)]
# Tells p4exec's server that this client takes status details up to 4 MiB: every failure's message arrives for
# batches of thousands, and every failure's code for batches up to ~210k updates (the server refuses larger ones).
_WRITE_METADATA = (("p4exec-status-details-budget", str(4 << 20)),)
__all__ = ["SwitchConnection", "as_entity", "parse_write_error"]


CLOSING_STREAM_GRACE_S = 2.0  # how long a switch may take to tear down a closed client's stream


# grpc's blocking waits (a stream's next response, a future's result) wake every `MAXIMUM_WAIT_TIMEOUT` (0.1 s)
# only so that a main thread blocked there can take a signal. A controller keeps one reader thread blocked in
# such a wait per switch; with the 48 in-process switches of UPN 512 their wake-ups took the interpreter lock from
# the simulator's loop hundreds of times a second (bench/grpc_waits.py measures it). Once a second keeps Ctrl-C
# prompt enough. The constant is grpc's own, read at each wait; an older or newer grpc without it is left alone.
STREAM_WAIT_S = 1.0


def _quiet_grpc_waits() -> None:
    from grpc import _common

    if getattr(_common, "MAXIMUM_WAIT_TIMEOUT", STREAM_WAIT_S) < STREAM_WAIT_S:
        _common.MAXIMUM_WAIT_TIMEOUT = STREAM_WAIT_S


_quiet_grpc_waits()


class SwitchConnection(PreMixin, DeviceMixin):
    """One P4Runtime session with one switch."""

    def __init__(self, address: str, device_id: int = 0, p4info: p4info_pb2.P4Info | None = None,
                 election_id: int = 1, role: str = "", name: str | None = None, timeout: float = 10.0) -> None:
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.role = role
        self.name = name or address
        self.timeout = timeout
        self.index = P4InfoIndex(p4info) if p4info is not None else None
        self.is_primary = False
        self.packet_ins: queue.Queue[pb.PacketIn] = queue.Queue()
        self.digests: queue.Queue[pb.DigestList] = queue.Queue()
        self.stream_errors: queue.Queue[pb.StreamError] = queue.Queue()
        self._arbitration: queue.Queue[pb.MasterArbitrationUpdate] = queue.Queue()
        self._requests: queue.Queue[Any] = queue.Queue()
        self._channel: grpc.Channel | None = None
        self._stub: p4runtime_pb2_grpc.P4RuntimeStub | None = None
        self._write_bytes: grpc.UnaryUnaryMultiCallable | None = None
        self._reader: threading.Thread | None = None
        self._stream_call: Any = None  # the StreamChannel call: cancelled on close (the channel may be shared)
        self._stream_done = threading.Event()
        self._stream_end = "stream ended"  # how the switch ended the stream (status code and details)
        self._stream_code: grpc.StatusCode | None = None
        self._closing = False
        # Called (from the stream thread, must not block) with (self, reason) when the stream ends without
        # close() or another client takes the primary role: how a controller notices a switch restart.
        self.on_lost: Callable[[SwitchConnection, str], None] | None = None
        # On BMv2: registers and queues over Thrift, which PI's P4Runtime server lacks (controller/bmv2.py).
        self.bmv2: Bmv2SideChannel | None = None
        self._encoders: dict[str, TableEntryEncoder] = {}  # table name -> encoder, for `_encoders_for`
        self._action_encoder: ActionEncoder | None = None  # for `_encoders_for`
        self._encoders_for: P4InfoIndex | None = None

    # ---- session -------------------------------------------------------------------------------------------
    def connect(self, wait_primary: bool = True) -> SwitchConnection:
        """Open the channel and the stream, send arbitration, and wait for the switch's answer.

        A switch that still counts our election id as another client's — the stream of a controller that just
        closed, which the switch has not torn down yet (a controller restart on a busy machine) — is asked
        again for CLOSING_STREAM_GRACE_S; a real second client with the same id still fails then, with the
        switch's reason."""
        deadline = time.monotonic() + min(self.timeout, CLOSING_STREAM_GRACE_S)
        while True:
            try:
                return self._connect_once(wait_primary)
            except ControllerError as err:
                if "already used by another client" not in str(err) or time.monotonic() >= deadline:
                    raise
                self.close()
                time.sleep(0.05)

    def _connect_once(self, wait_primary: bool) -> SwitchConnection:
        self._closing = False
        self._stream_done.clear()
        self._stream_end, self._stream_code = "stream ended", None
        self._requests = queue.Queue()
        self._arbitration = queue.Queue()
        # shared with the sessions of the other devices behind the same server (controller/channels.py)
        self._channel = CHANNELS.take(self.address, _CHANNEL_OPTIONS)
        self._stub = p4runtime_pb2_grpc.P4RuntimeStub(self._channel)
        try:
            # a call that waits for the connection, not grpc.channel_ready_future: its polling thread outlived
            # the wait by up to 0.2 s and failed ("Channel closed!") when the channel closed meanwhile
            self._stub.Capabilities(pb.CapabilitiesRequest(), timeout=self.timeout, wait_for_ready=True)
        except grpc.RpcError as err:
            if err.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
                CHANNELS.give_back(self._channel)
                self._channel = self._stub = None
                raise ControllerError(f"{self.name}: no P4Runtime server at {self.address} "
                                      f"within {self.timeout:g}s", grpc.StatusCode.UNAVAILABLE) from None
            # any other answer (a target without Capabilities): a server is there
        self._write_bytes = self._channel.unary_unary(
            "/p4.v1.P4Runtime/Write", request_serializer=None,  # a WriteRequest already serialized
            response_deserializer=pb.WriteResponse.FromString)
        responses = self._stub.StreamChannel(self._request_iter(self._requests))
        self._stream_call = responses
        self._reader = threading.Thread(target=self._read_stream, args=(responses,), daemon=True,
                                        name=f"p4rt-stream-{self.name}")
        self._reader.start()
        self._send_arbitration()
        if wait_primary:
            self.wait_arbitration()
        return self

    def _send_arbitration(self) -> None:
        update = pb.MasterArbitrationUpdate(device_id=self.device_id, election_id=election(self.election_id))
        if self.role:
            update.role.name = self.role
        self._requests.put(pb.StreamMessageRequest(arbitration=update))

    def wait_arbitration(self) -> bool:
        """The switch's answer to our arbitration; a stream the switch ends instead (duplicate election id,
        unknown device id) fails at once with the switch's reason rather than after the whole timeout."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                update = self._arbitration.get(timeout=0.05)
                break
            except queue.Empty:
                if self._stream_done.is_set() and self._arbitration.empty():
                    raise ControllerError(f"{self.name}: arbitration refused: {self._stream_end}",
                                          self._stream_code) from None
                if time.monotonic() >= deadline:
                    raise ControllerError(f"{self.name}: no arbitration answer within {self.timeout}s") from None
        self.is_primary = update.status.code == 0
        return self.is_primary

    def _request_iter(self, requests: queue.Queue[Any]) -> Iterator[pb.StreamMessageRequest]:
        while True:
            item = requests.get()
            if item is _STOP:
                return
            yield item

    def _read_stream(self, responses: Iterable[pb.StreamMessageResponse]) -> None:
        reason = "stream ended"
        try:
            for message in responses:
                kind = message.WhichOneof("update")
                if kind == "arbitration":
                    was_primary = self.is_primary
                    self.is_primary = message.arbitration.status.code == 0
                    self._arbitration.put(message.arbitration)
                    if was_primary and not self.is_primary:
                        self._lost("primary role lost")
                elif kind == "packet":
                    self.packet_ins.put(message.packet)
                elif kind == "digest":
                    self.digests.put(message.digest)
                elif kind == "error":
                    self.stream_errors.put(message.error)
        except grpc.RpcError as err:
            reason = f"stream broken ({err.code().name})"  # channel closed or switch gone
            self._stream_end, self._stream_code = f"{err.code().name}: {err.details()}", err.code()
        finally:
            self.is_primary = False
            self._stream_done.set()
        self._lost(reason)

    def _lost(self, reason: str) -> None:
        callback = self.on_lost
        if callback is not None and not self._closing:
            callback(self, reason)

    def stream_alive(self) -> bool:
        """True while the stream to the switch is open (it ends when the switch process goes away)."""
        return self._reader is not None and not self._stream_done.is_set()

    def close(self) -> None:
        self._closing = True
        self._requests.put(_STOP)
        if self._stream_call is not None:
            self._stream_call.cancel()  # ends this session's stream only; the channel may serve other devices
            self._stream_call = None
        if self._channel is not None:
            CHANNELS.give_back(self._channel)
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=2)
        self._channel = self._stub = self._write_bytes = None

    def __enter__(self) -> SwitchConnection:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def stub(self) -> p4runtime_pb2_grpc.P4RuntimeStub:
        if self._stub is None:
            raise ControllerError(f"{self.name}: not connected")
        return self._stub

    def _index(self) -> P4InfoIndex:
        if self.index is None:
            raise ControllerError(f"{self.name}: no P4Info known; pass p4info= or call set_pipeline")
        return self.index

    # ---- pipeline --------------------------------------------------------------------------------------------
    def capabilities(self) -> str:
        return self.stub.Capabilities(pb.CapabilitiesRequest(), timeout=self.timeout).p4runtime_api_version

    def set_pipeline(self, device_config: bytes, p4info: p4info_pb2.P4Info | None = None,
                     action: int = pb.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
                     cookie: int = 0) -> None:
        """Push a pipeline; `cookie` (64 bits) lets a later controller tell whether it is already there."""
        if p4info is not None:
            self.index = P4InfoIndex(p4info)
        request = pb.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=election(self.election_id), action=action, role=self.role)
        request.config.p4info.CopyFrom(self._index().p4info)
        request.config.p4_device_config = device_config
        request.config.cookie.cookie = cookie
        try:
            self.stub.SetForwardingPipelineConfig(request, timeout=max(self.timeout, 60))
        except grpc.RpcError as err:
            raise ControllerError(f"{self.name}: SetForwardingPipelineConfig: {err.details()}", err.code()) from None

    def get_pipeline(self, response_type: int = pb.GetForwardingPipelineConfigRequest.ALL
                     ) -> pb.ForwardingPipelineConfig:
        request = pb.GetForwardingPipelineConfigRequest(device_id=self.device_id, response_type=response_type)
        return self.stub.GetForwardingPipelineConfig(request, timeout=self.timeout).config

    def pipeline_cookie(self) -> int | None:
        """The cookie of the switch's pipeline, or None when it has none (e.g. it just restarted)."""
        try:
            return self.get_pipeline(pb.GetForwardingPipelineConfigRequest.COOKIE_ONLY).cookie.cookie
        except grpc.RpcError as err:
            if err.code() == grpc.StatusCode.FAILED_PRECONDITION:
                return None
            raise ControllerError(f"{self.name}: GetForwardingPipelineConfig: {err.details()}", err.code()) from None

    # ---- building entities -------------------------------------------------------------------------------------
    def action(self, name: str, params: dict[str, Value] | None = None, into: pb.Action | None = None) -> pb.Action:
        """Build an Action (in `into` if given: building in place saves a copy per entry at scale), parsed
        from the bytes the table-entry encoder writes for the same call."""
        message = into if into is not None else pb.Action()
        message.MergeFromString(self._encoders_of(self._index())[1].action(name, dict(params or {})))
        return message

    def table_entry(self, table: str, match: dict[str, Any] | None = None, action: str | None = None,
                    params: dict[str, Value] | None = None, priority: int = 0, default: bool = False,
                    member_id: int | None = None, group_id: int | None = None,
                    into: pb.TableEntry | None = None) -> pb.TableEntry:
        """Build a TableEntry: match values as ints/strings; lpm as "a.b.c.d/len" or (value, len);
        ternary as (value, mask); range as (low, high); omitted fields are don't-care.
        `into`: fill this message (e.g. `update.entity.table_entry`) instead of a new one. Parsed from the
        bytes `entry_update` sends: one encoder for both forms."""
        entry = into if into is not None else pb.TableEntry()
        entry.MergeFromString(self._encoder(table).entry(match, action, params, priority, default, member_id,
                                                         group_id))
        return entry

    def entry_update(self, kind: int, table: str, match: dict[str, Any] | None = None, action: str | None = None,
                     params: dict[str, Value] | None = None, priority: int = 0, default: bool = False,
                     member_id: int | None = None, group_id: int | None = None) -> EncodedUpdate:
        """The Update (`kind`: INSERT, MODIFY, DELETE) of a table entry as `table_entry` describes it, already
        serialized: the same bytes as `pb.Update(type=kind, entity=...)` would give, at a fraction of the cost
        (no protobuf object per entry; the table's ids and widths are looked up once)."""
        return self._encoder(table).update(kind, match, action, params, priority, default, member_id, group_id)

    def _encoders_of(self, index: P4InfoIndex) -> tuple[dict[str, TableEntryEncoder], ActionEncoder]:
        """The encoders of this P4Info: per table, and the actions' (made anew when the P4Info changes)."""
        if self._encoders_for is not index:

            def action(name: str) -> ActionSpec:
                info = index.action(name)
                return info.preamble.id, info.preamble.name, [(p.name, p.id, p.bitwidth) for p in index.params(info)]

            self._encoders, self._action_encoder, self._encoders_for = {}, ActionEncoder(action, encode), index
        assert self._action_encoder is not None  # made with the table encoders, just above
        return self._encoders, self._action_encoder

    def _encoder(self, table: str) -> TableEntryEncoder:
        index = self._index()
        encoders, actions = self._encoders_of(index)
        encoder = encoders.get(table)
        if encoder is None:
            tbl = index.table(table)

            def field(name: str) -> FieldSpec:
                f = index.match_field(tbl, name)
                if f.match_type not in KINDS:
                    raise ControllerError(f"match kind {f.match_type} of {f.name} is not supported")
                return FieldSpec(f.id, f.match_type, f.bitwidth)

            encoder = encoders[table] = TableEntryEncoder(tbl.preamble.id, field, actions, parse_prefix)
        return encoder

    def member(self, profile: str, member_id: int, action: str, params: dict[str, Value] | None = None,
               into: pb.ActionProfileMember | None = None) -> pb.ActionProfileMember:
        prof = self._index().get("action_profiles", profile)
        message = into if into is not None else pb.ActionProfileMember()
        message.action_profile_id = prof.preamble.id  # type: ignore[attr-defined]
        message.member_id = member_id
        self.action(action, params, into=message.action)
        return message

    def group(self, profile: str, group_id: int, members: Iterable[int | tuple[int, int]],
              max_size: int = 0, into: pb.ActionProfileGroup | None = None) -> pb.ActionProfileGroup:
        prof = self._index().get("action_profiles", profile)
        message = into if into is not None else pb.ActionProfileGroup()
        message.action_profile_id = prof.preamble.id  # type: ignore[attr-defined]
        message.group_id = group_id
        message.max_size = max_size
        for item in members:
            member_id, weight = item if isinstance(item, tuple) else (item, 1)
            message.members.add(member_id=member_id, weight=weight)
        return message

    # ---- write / read ------------------------------------------------------------------------------------------
    def write(self, updates: Iterable[UpdateLike], batch_size: int = 500) -> int:
        """Send updates in batches; raise WriteError (with per-update failures) on the first failed batch."""
        sent = 0
        if self.bmv2 is not None:  # PI answers RegisterEntry writes with UNIMPLEMENTED
            updates = list(updates)
            # (encoded updates are table entries: not decoded again here)
            registers = [u for u in updates if isinstance(u, pb.Update) and u.entity.HasField("register_entry")]
            self.bmv2.write_registers(registers, self._index())
            updates, sent = [u for u in updates if not any(u is r for r in registers)], len(registers)
        batch: list[UpdateLike] = []
        for update in updates:
            batch.append(update)
            if len(batch) >= batch_size:
                sent += self._write_batch(batch)
                batch = []
        if batch:
            sent += self._write_batch(batch)
        return sent

    def _write_batch(self, batch: list[UpdateLike]) -> int:
        # The request's bytes are its header's followed by each update as a `updates` field: the same
        # message as WriteRequest(updates=batch), without copying every update into the request first
        # (with the pure-Python protobuf runtime the copy cost twice as much as serializing).
        head = pb.WriteRequest(device_id=self.device_id, election_id=election(self.election_id), role=self.role)
        raw = b"".join([head.SerializeToString(), *(_updates_field(u.SerializeToString()) for u in batch)])
        if self._write_bytes is None:
            raise ControllerError(f"{self.name}: not connected")
        try:
            # A loaded 2-core host can take a while per update: the deadline grows with the batch.
            self._write_bytes(raw, timeout=max(self.timeout, 60, 0.25 * len(batch)), metadata=_WRITE_METADATA)
        except grpc.RpcError as err:
            raise parse_write_error(err) from None
        return len(batch)

    def _updates(self, kind: int, entities: Iterable[Any]) -> list[pb.Update]:
        return [pb.Update(type=kind, entity=as_entity(e)) for e in entities]

    def insert(self, *entities: Any) -> int:
        return self.write(self._updates(pb.Update.INSERT, entities))

    def modify(self, *entities: Any) -> int:
        return self.write(self._updates(pb.Update.MODIFY, entities))

    def delete(self, *entities: Any) -> int:
        return self.write(self._updates(pb.Update.DELETE, entities))

    def read(self, *entities: Any, timeout: float | None = None) -> Iterator[pb.Entity]:
        wanted = [as_entity(e) for e in entities]
        if self.bmv2 is not None and any(e.HasField("register_entry") for e in wanted):  # PI: UNIMPLEMENTED
            yield from self.bmv2.read_registers([e.register_entry for e in wanted if e.HasField("register_entry")],
                                                self._index())
            wanted = [e for e in wanted if not e.HasField("register_entry")]
            if not wanted:
                return
        request = pb.ReadRequest(device_id=self.device_id, role=self.role, entities=wanted)
        try:
            for response in self.stub.Read(request, timeout=timeout or max(self.timeout, 120)):
                yield from response.entities
        except grpc.RpcError as err:
            raise ControllerError(f"{self.name}: Read: {err.details()}", err.code()) from None

    def read_table(self, table: str | None = None, with_counters: bool = False) -> list[pb.TableEntry]:
        wildcard = pb.TableEntry(table_id=self._index().table(table).preamble.id if table else 0)
        if with_counters:
            wildcard.counter_data.SetInParent()
        return [e.table_entry for e in self.read(wildcard)]

    # ---- packet I/O ------------------------------------------------------------------------------------------
    def packet_out(self, payload: bytes, **metadata: Value) -> None:
        """Send a frame through the switch's CPU port; padding fields (`_pad`) default to 0, others are needed."""
        message = pb.PacketOut(payload=payload)
        for field in self._index().packet_metadata("packet_out"):
            if field.name in metadata:
                message.metadata.add(metadata_id=field.id, value=encode(metadata.pop(field.name), field.bitwidth))
            elif field.name.startswith("_"):
                message.metadata.add(metadata_id=field.id, value=b"\x00")
            else:
                raise ControllerError(f"packet_out needs metadata field {field.name!r}")
        if metadata:
            raise ControllerError(f"packet_out has no metadata field(s) {', '.join(metadata)}")
        self._requests.put(pb.StreamMessageRequest(packet=message))

    def packet_in(self, timeout: float = 1.0) -> tuple[bytes, dict[str, int]] | None:
        """The next packet-in as (payload, metadata by name), or None after `timeout` seconds."""
        try:
            packet = self.packet_ins.get(timeout=timeout)
        except queue.Empty:
            return None
        names = {f.id: f.name for f in self._index().packet_metadata("packet_in")}
        return packet.payload, {names.get(m.metadata_id, str(m.metadata_id)): decode(m.value)
                                for m in packet.metadata}

    def ack_digest(self, digest: pb.DigestList) -> None:
        ack = pb.DigestListAck(digest_id=digest.digest_id, list_id=digest.list_id)
        self._requests.put(pb.StreamMessageRequest(digest_ack=ack))


def _updates_field(update: bytes) -> bytes:
    """One serialized Update as a `WriteRequest.updates` field (key, varint length, bytes)."""
    n = len(update)
    length = bytearray()
    while n >= 0x80:
        length.append((n & 0x7F) | 0x80)
        n >>= 7
    length.append(n)
    return _UPDATES_KEY + bytes(length) + update
