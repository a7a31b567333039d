"""The p4.v1.P4Runtime servicer: RPC semantics over a device (see docs/p4runtime.md)."""

from __future__ import annotations

import logging
import queue
import threading

from google.protobuf.message import DecodeError
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4exec.device.base import P4RuntimeDevice
from p4exec.p4runtime import atomic, dispatch, fastpath, idle, release, sdn_translation, wire
from p4exec.p4runtime.arbitration import Arbitrator, Session, election_int
from p4exec.p4runtime.context import Context
from p4exec.p4runtime.digests import DigestEngine, digest_shapes
from p4exec.p4runtime.errors import (
    DETAILS_BUDGET,
    P4RuntimeError,
    UpdateResult,
    abort_with,
    abort_with_status,
    batch_status,
    canonical_code,
    check_batch_size,
    details_budget,
)
from p4exec.p4runtime.packetio import packet_in_message, packet_out_frame
from p4exec.p4runtime.runtime_binding import call
from p4exec.runtime import gcpause

log = logging.getLogger(__name__)

API_VERSION = "1.4.1"
READ_CHUNK = 500
WRITE_CHUNK = 200  # updates applied per data-plane call (CONTINUE_ON_ERROR writes)
# Raw writes: a data-plane call takes up to WRITE_CHUNK general-path updates, or up to GENERAL_COST times as
# many that the fast path may take (~10 us each instead of ~1 ms): a Write of 1,000 simple entries is one
# call (measured: the hand-offs of five calls per Write cost about as much CPU as decoding the entries).
GENERAL_COST = 10
OK_RESULT = UpdateResult()  # shared by every update that succeeded (never changed)
IDLE_SCAN_EVERY = 10  # polls (of ~2 ms): idle timeouts are checked about every 20 ms
CFG = p4runtime_pb2.SetForwardingPipelineConfigRequest
ATOMICITIES = frozenset(p4runtime_pb2.WriteRequest.Atomicity.values())
GET = p4runtime_pb2.GetForwardingPipelineConfigRequest


# A stream's writer waits for its next message this long before it checks that the RPC is still alive. The
# session is woken at once when it ends (reader done, RPC callback, `close`), so this is only a safety net; a
# short period made every idle stream of an in-process fabric take the interpreter lock twice a second, from
# the simulator's loop too (the cost bench/grpc_waits.py measures for grpc's own waits).
STREAM_CHECK_S = 5.0

class P4RuntimeService(p4runtime_pb2_grpc.P4RuntimeServicer):
    """One device behind the P4Runtime service; all control-plane changes under one lock."""

    def __init__(self, device: P4RuntimeDevice) -> None:
        self.device = device
        self.arbitrator = Arbitrator({device.device_id})
        # ctx: what Read/Write address (after VERIFY_AND_SAVE, the saved config, whose state
        # collects the writes until COMMIT makes it live); live: the committed pipeline, which
        # packet I/O, digests and idle timeouts follow.
        self.ctx: Context | None = None
        self.live: Context | None = None
        self._saved = None  # program from VERIFY_AND_SAVE, waiting for COMMIT
        self._lock = threading.RLock()
        self._closing = threading.Event()
        self.digests = DigestEngine(self._send_digest)
        self._polls = 0
        self._idle_reported: dict[int, int] = {}
        # Every state change runs where the data plane cannot see it half-done (switch: its own thread).
        self._control = device.control
        self.sdn_config: sdn_translation.SdnConfig | None = None  # @p4runtime_translation mappings
        device.add_packet_in_listener(self._on_packet_in)
        device.add_digest_listener(self._on_digest)
        current = device.program
        if current is not None:  # the switch may start with a program (p4exec switch OUT.json)
            self._install(current, cookie=0)

    # -- helpers --------------------------------------------------------------------------------
    def _check_device(self, device_id: int) -> None:
        if device_id != self.device.device_id:
            raise P4RuntimeError("NOT_FOUND", f"unknown device id {device_id}")

    def _need_pipeline(self) -> Context:
        if self.ctx is None:
            raise P4RuntimeError("FAILED_PRECONDITION", "no forwarding pipeline config is set")
        return self.ctx

    def _install(self, program, cookie: int) -> None:
        self.ctx = self.live = Context.build(program, self.device, cookie)
        self._went_live(self.live)

    def _went_live(self, live: Context) -> None:
        self.digests.reset()
        self.digests.configure(live.store.digests, digest_shapes(live.program.p4info))
        self._idle_reported.clear()

    # -- RPCs -----------------------------------------------------------------------------------
    def Capabilities(self, request, context):  # noqa: N802 - gRPC method name
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def SetForwardingPipelineConfig(self, request, context):  # noqa: N802
        try:
            self._set_pipeline(request)
        except P4RuntimeError as err:
            abort_with(context, err)
        except Exception as exc:  # noqa: BLE001 - report, keep serving
            abort_with(context, _unexpected(exc))
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _set_pipeline(self, request) -> None:
        before = self.ctx, self.live
        try:
            self._change_pipeline(request)
        finally:
            # only when a pipeline was replaced: a first push (every switch of a fabric) frees nothing
            replaced = ((before[0] is not None and self.ctx is not before[0])
                        or (before[1] is not None and self.live is not before[1]))
            del before
            if replaced:
                release.release_replaced()

    def _change_pipeline(self, request) -> None:
        self._check_device(request.device_id)
        self.arbitrator.check_primary(request.device_id, request.role,
                                      election_int(request.election_id))
        action = request.action
        if action == CFG.UNSPECIFIED:
            raise P4RuntimeError("INVALID_ARGUMENT", "action is UNSPECIFIED")
        program = None
        if action != CFG.COMMIT and request.HasField("config"):
            # Compiling takes long (received source goes to a bounded worker): never under the lock, so Read,
            # Write and the other streams keep being served meanwhile.
            cfg = request.config
            program = call(self.device.load_config, cfg.p4info, bytes(cfg.p4_device_config))
        with self._lock:
            if action == CFG.COMMIT:
                if request.HasField("config"):
                    raise P4RuntimeError("INVALID_ARGUMENT", "COMMIT takes no config")
                if self._saved is None:
                    raise P4RuntimeError("NOT_FOUND", "COMMIT without a config saved by VERIFY_AND_SAVE")
                self.device.commit(self._saved)  # its state already holds the writes made since
                self.live = self.ctx
                self._saved = None
                if self.live is not None:
                    self._went_live(self.live)
                return
            if not request.HasField("config"):
                raise P4RuntimeError("INVALID_ARGUMENT", "the request has no config")
            cookie = request.config.cookie.cookie
            if action == CFG.VERIFY:
                return
            assert program is not None  # a config was given and loaded above
            if action == CFG.VERIFY_AND_SAVE:
                self._saved = program
                self.ctx = Context.build(program, self.device, cookie)
            elif action == CFG.VERIFY_AND_COMMIT:
                self._commit(program, cookie)
            elif action == CFG.RECONCILE_AND_COMMIT:
                self._reconcile(program, cookie)
            else:
                raise P4RuntimeError("UNIMPLEMENTED", f"action {action} is not supported")

    def _commit(self, program, cookie: int) -> None:
        self.device.commit(program)
        self._install(program, cookie)
        self._saved = None

    def _reconcile(self, program, cookie: int) -> None:
        """Commit the new program keeping the forwarding state; refuse if it does not fit."""
        old = self.ctx
        if old is None:
            self._commit(program, cookie)
            return
        updates = self._control(lambda: dispatch.snapshot(old, self.device))
        fresh = Context.build(program, self.device, cookie)
        for update in updates:
            try:
                try:
                    dispatch.write_update(fresh, self.device, update)
                except P4RuntimeError as err:
                    if err.code != "ALREADY_EXISTS":  # the new program installed it already
                        raise
                    update.type = p4runtime_pb2.Update.MODIFY
                    dispatch.write_update(fresh, self.device, update)
            except P4RuntimeError as err:
                raise P4RuntimeError(
                    "INVALID_ARGUMENT", f"cannot reconcile the old state with the new config: {err}"
                ) from None
        self.device.commit(program)
        self.ctx = self.live = fresh
        self._saved = None
        self._went_live(fresh)

    def GetForwardingPipelineConfig(self, request, context):  # noqa: N802
        try:
            self._check_device(request.device_id)
            with self._lock:
                resp = p4runtime_pb2.GetForwardingPipelineConfigResponse()
                ctx = self.ctx
                if ctx is None:  # no config known: the config field stays unset (spec)
                    return resp
                cfg = resp.config
                rt = request.response_type
                if rt in (GET.ALL, GET.P4INFO_AND_COOKIE):
                    cfg.p4info.CopyFrom(ctx.program.p4info)
                if rt in (GET.ALL, GET.DEVICE_CONFIG_AND_COOKIE):
                    cfg.p4_device_config = ctx.program.config
                cfg.cookie.cookie = ctx.cookie
                return resp
        except P4RuntimeError as err:
            abort_with(context, err)
        except Exception as exc:  # noqa: BLE001 - report, keep serving
            abort_with(context, _unexpected(exc))

    def Write(self, request, context):  # noqa: N802
        try:
            request = sdn_translation.for_context(self.ctx, self.sdn_config).request_to_device(request)
            results = self._write(request, details_budget(context))
        except P4RuntimeError as err:
            abort_with(context, err)
        except Exception as exc:  # noqa: BLE001 - e.g. the switch's data plane did not answer
            abort_with(context, _unexpected(exc))
        if any(r.error is not None for r in results):
            abort_with_status(context, batch_status(results, budget=details_budget(context)))
        return p4runtime_pb2.WriteResponse()

    def WriteRaw(self, raw: bytes, context):  # noqa: N802 - the Write RPC, request as bytes (handlers.py)
        """Write, reading simple table entries straight from the wire; the rest as protobuf."""
        try:
            head = wire.split_write(raw)
        except (wire.Unusual, IndexError, UnicodeDecodeError):
            head = None
        if (head is None or head.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR or head.has_role_id
                or sdn_translation.for_context(self.ctx, self.sdn_config).active):
            try:
                request = p4runtime_pb2.WriteRequest.FromString(raw)
            except (DecodeError, RecursionError):
                abort_with(context, P4RuntimeError("INVALID_ARGUMENT", "the WriteRequest does not parse"))
            return self.Write(request, context)
        try:
            results = self._write_raw(raw, head, details_budget(context))
        except P4RuntimeError as err:
            abort_with(context, err)
        except Exception as exc:  # noqa: BLE001 - e.g. the switch's data plane did not answer
            abort_with(context, _unexpected(exc))
        if any(r.error is not None for r in results):
            abort_with_status(context, batch_status(results, budget=details_budget(context)))
        return p4runtime_pb2.WriteResponse()

    def _write_raw(self, raw: bytes, head: wire.RawWrite, budget: int = DETAILS_BUDGET) -> list[UpdateResult]:
        self._check_device(head.device_id)
        self.arbitrator.check_primary(head.device_id, head.role, head.election)
        check_batch_size(len(head.updates), budget)
        with self._lock:
            ctx = self.ctx
            if ctx is not None:
                # Decoded on this thread; the data-plane thread only puts the entries in.
                with gcpause.paused():
                    decoded = fastpath.decode(ctx, raw, head.updates)
            if ctx is None or all(d is None for d in decoded):  # nothing for the fast path
                try:
                    request = p4runtime_pb2.WriteRequest.FromString(raw)
                except (DecodeError, RecursionError):
                    raise P4RuntimeError("INVALID_ARGUMENT", "the WriteRequest does not parse") from None
                return self._write(request, budget)
            items = list(zip(decoded, head.updates, strict=True))
            results: list[UpdateResult] = []
            for chunk in _chunks(items):

                def apply_chunk(c: list = chunk) -> list[UpdateResult]:
                    out = []
                    commit = fastpath.commit
                    with gcpause.paused():
                        for item, (start, end) in c:
                            if item is not None and commit(item):
                                out.append(OK_RESULT)
                            else:
                                out.append(self._apply_raw(ctx, raw, start, end))
                    return out

                results.extend(self._control(apply_chunk))
        return results

    def _apply_raw(self, ctx: Context, raw: bytes, start: int, end: int) -> UpdateResult:
        try:
            update = p4runtime_pb2.Update.FromString(raw[start:end])
        except (DecodeError, RecursionError):
            return UpdateResult(P4RuntimeError("INVALID_ARGUMENT", "the update does not parse"))
        return self._apply_one(ctx, update)

    def _write(self, request, budget: int = DETAILS_BUDGET) -> list[UpdateResult]:
        self._check_device(request.device_id)
        self.arbitrator.check_primary(request.device_id, request.role,
                                      election_int(request.election_id))
        results: list[UpdateResult] = []
        with self._lock:
            ctx = self.ctx if _device_level(request.updates) else self._need_pipeline()
            check_batch_size(len(request.updates), budget)
            if request.atomicity not in ATOMICITIES:
                raise P4RuntimeError("INVALID_ARGUMENT", f"unknown atomicity {request.atomicity}")
            if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
                # The whole batch runs in one control() call: the data plane sees all or nothing.
                errors = self._control(
                    lambda: atomic.run_all_or_nothing(ctx, self.device, list(request.updates)))
                return [UpdateResult(e) for e in errors]
            # One data-plane call per chunk, not per update: on a loaded host every call is a thread
            # hand-off, and big fabrics write tens of thousands of entries. Each update still succeeds or
            # fails on its own (CONTINUE_ON_ERROR).
            updates = list(request.updates)
            for start in range(0, len(updates), WRITE_CHUNK):
                chunk = updates[start:start + WRITE_CHUNK]

                def apply_chunk(c: list = chunk) -> list[UpdateResult]:
                    return [self._apply_one(ctx, u) for u in c]

                results.extend(self._control(apply_chunk))
        return results

    def _apply_one(self, ctx: Context | None, update) -> UpdateResult:
        try:
            dispatch.write_update(ctx, self.device, update)
            return UpdateResult()
        except P4RuntimeError as err:
            return UpdateResult(err)
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the RPC or the switch
            return UpdateResult(_unexpected(exc))

    def Read(self, request, context):  # noqa: N802
        """Each requested entity is read on its own: bad ones get a p4.Error, good ones their
        entities; any error ends the stream with UNKNOWN and one p4.Error per request (spec)."""
        try:
            self._check_device(request.device_id)
            with self._lock:
                device_level = _device_level(p4runtime_pb2.Update(entity=e) for e in request.entities)
                ctx = self.ctx if device_level else self._need_pipeline()
                asked = sdn_translation.for_context(ctx, self.sdn_config).entities_to_device(request.entities)
                found, results = self._control(lambda: self._read_all(ctx, asked))
                found = sdn_translation.for_context(ctx, self.sdn_config).entities_to_sdn(found)
        except P4RuntimeError as err:
            abort_with(context, err)
        except Exception as exc:  # noqa: BLE001 - report, keep serving
            abort_with(context, _unexpected(exc))
        for start in range(0, max(len(found), 1), READ_CHUNK):
            yield p4runtime_pb2.ReadResponse(entities=found[start:start + READ_CHUNK])
        if any(r.error is not None for r in results):
            abort_with_status(context, batch_status(results, "Read failure."))

    def _read_all(self, ctx, entities) -> tuple[list, list[UpdateResult]]:
        found: list = []
        results: list[UpdateResult] = []
        for ent in entities:
            try:
                found.extend(dispatch.read_entity(ctx, self.device, ent))
                results.append(UpdateResult())
            except P4RuntimeError as err:
                results.append(UpdateResult(err))
        return found, results

    # -- StreamChannel --------------------------------------------------------------------------
    def StreamChannel(self, request_iterator, context):  # noqa: N802
        session = Session()
        failure: list[P4RuntimeError] = []

        def reader() -> None:
            # The stream ends when the client half-closes or vanishes (clients such as
            # p4runtime-shell wait for the server to end it after they stop sending).
            try:
                for msg in request_iterator:
                    try:
                        self._on_stream_message(session, msg)
                    except Exception as exc:  # noqa: BLE001 - a bad message never ends the stream
                        err = exc if isinstance(exc, P4RuntimeError) else _unexpected(exc)
                        if msg.WhichOneof("update") == "arbitration":
                            failure.append(err)
                            return
                        session.send(stream_error(err, msg))
            except Exception:  # noqa: BLE001 - a vanished client ends its own stream only
                pass
            finally:
                session.close()

        context.add_callback(session.close)
        thread = threading.Thread(target=reader, name=f"p4rt-stream-{session.ident}", daemon=True)
        thread.start()
        try:
            while not self._closing.is_set():
                try:
                    msg = session.out.get(timeout=STREAM_CHECK_S)
                except queue.Empty:
                    if not context.is_active():
                        break
                    continue
                if msg is None:
                    break
                yield msg
        finally:
            self.arbitrator.remove(session)
        if failure:
            abort_with(context, failure[0])

    def _on_stream_message(self, session: Session, msg) -> None:
        kind = msg.WhichOneof("update")
        if kind == "arbitration":
            self.arbitrator.arbitrate(session, msg.arbitration)
            return
        if session.key is None:
            raise P4RuntimeError("FAILED_PRECONDITION", "send a MasterArbitrationUpdate first")
        if kind == "packet":
            self._check_stream_primary(session)
            with self._lock:
                if self.live is None:
                    raise P4RuntimeError("FAILED_PRECONDITION", "no forwarding pipeline is running")
                out_msg = sdn_translation.for_context(self.live, self.sdn_config).packet_out_to_device(msg.packet)
                frame = packet_out_frame(self.live.index, out_msg)
            self.device.packet_out(frame)
        elif kind == "digest_ack":
            self.digests.ack(msg.digest_ack.digest_id, msg.digest_ack.list_id)
        else:
            raise P4RuntimeError("UNIMPLEMENTED", f"stream message {kind} is not supported")

    def _check_stream_primary(self, session: Session) -> None:
        if session.election_id is None or session.device_id is None:
            raise P4RuntimeError("PERMISSION_DENIED", "only the primary client may send packets")
        self.arbitrator.check_primary(session.device_id, session.role or "", session.election_id)

    def _on_packet_in(self, frame: bytes) -> None:
        ctx = self.live
        if ctx is None:
            return
        msg = packet_in_message(ctx.index, frame)
        if msg is None:
            log.warning("frame to the CPU port shorter than the packet_in header: dropped")
            return
        try:
            msg = sdn_translation.for_context(ctx, self.sdn_config).packet_in_to_sdn(msg)
        except P4RuntimeError as err:
            log.warning("packet-in dropped: %s", err)
            return
        out = p4runtime_pb2.StreamMessageResponse(packet=msg)
        for s in self.arbitrator.primaries(self.device.device_id):
            s.send(out)

    def _on_digest(self, digest, values) -> None:
        """A digest from the data plane, named by P4Info id or by name (the pipeline's sink)."""
        ctx = self.live
        if isinstance(digest, str):
            if ctx is None:
                return
            info = ctx.index.by_name["digests"].get(digest)
            if info is None:
                return
            digest = info.preamble.id
        self.digests.add(digest, values)

    def _send_digest(self, digest_list: p4runtime_pb2.DigestList) -> None:
        out = p4runtime_pb2.StreamMessageResponse(digest=digest_list)
        for s in self.arbitrator.primaries(self.device.device_id):
            s.send(out)

    def poll(self) -> None:
        """Collect digests the data plane emitted, send lists that are due, report idle entries."""
        ctx = self.live
        if ctx is not None:
            for digest_id, values in ctx.binding.drain_digests():
                self.digests.add(digest_id, values)
        self.digests.tick()
        self._polls += 1
        if ctx is not None and ctx.has_idle_tables and self._polls % IDLE_SCAN_EVERY == 0:
            with self._lock:
                note = self._control(lambda: idle.expired(ctx, self._idle_reported))
            if note is not None:
                out = p4runtime_pb2.StreamMessageResponse(idle_timeout_notification=note)
                for s in self.arbitrator.primaries(self.device.device_id):
                    s.send(out)

    def needs_fast_poll(self) -> bool:
        """Digests configured or pending, or idle-timeout tables: poll at digest-timeout resolution.
        Otherwise there is nothing time-critical and the ticker can sleep longer (an idle switch then
        costs ~0 % CPU instead of ~2 % of a core for a 500 Hz ticker)."""
        ctx = self.live
        return self.digests.busy() or (ctx is not None and ctx.has_idle_tables)

    def close(self) -> None:
        """Wake every stream so the server can stop promptly; stop listening to the device."""
        self._closing.set()
        self.device.remove_packet_in_listener(self._on_packet_in)
        for s in self.arbitrator.sessions():
            s.close()


def _chunks(items: list) -> list[list]:
    """Updates of a raw Write, cut into data-plane calls by cost (see GENERAL_COST)."""
    out: list[list] = []
    chunk: list = []
    cost = 0
    budget = WRITE_CHUNK * GENERAL_COST
    for item in items:
        cost += 1 if item[0] is not None else GENERAL_COST
        if cost > budget and chunk:
            out.append(chunk)
            chunk, cost = [], 1 if item[0] is not None else GENERAL_COST
        chunk.append(item)
    if chunk:
        out.append(chunk)
    return out


def _device_level(updates) -> bool:
    """Only queue extern entries: they concern the device, so they need no pipeline."""
    kinds = {u.entity.WhichOneof("entity") for u in updates}
    return kinds == {"extern_entry"}


def _unexpected(exc: Exception) -> P4RuntimeError:
    """An exception that is not a P4Runtime error: a bug or a device failure, reported as INTERNAL; bytes that
    do not parse (an `Any` holding garbage, a Struct nested deeper than protobuf allows) are the client's."""
    if isinstance(exc, (DecodeError, RecursionError, UnicodeDecodeError)):
        return P4RuntimeError("INVALID_ARGUMENT", f"a message does not parse ({type(exc).__name__})")
    log.exception("unexpected error in the P4Runtime server")
    return P4RuntimeError("INTERNAL", f"{type(exc).__name__}: {exc}")


def stream_error(err: P4RuntimeError, msg) -> p4runtime_pb2.StreamMessageResponse:
    out = p4runtime_pb2.StreamMessageResponse()
    out.error.canonical_code = canonical_code(err.code)
    out.error.message = err.message
    kind = msg.WhichOneof("update")
    if kind == "packet":
        out.error.packet_out.packet_out.CopyFrom(msg.packet)
    elif kind == "digest_ack":
        out.error.digest_list_ack.digest_list_ack.CopyFrom(msg.digest_ack)
    return out
