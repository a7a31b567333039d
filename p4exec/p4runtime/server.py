"""P4RuntimeServer: serve one device (or several, by `device_id`: `P4RuntimeServer.shared`) over gRPC, with bounded stop.

Transport (the security model is docs/security.md): inside a fabric the address is a Unix-domain socket
(``unix:/path``) in a directory only root can enter, so only ethlab's own processes can drive the switch; the
standalone ``p4exec switch`` listens on TCP loopback by default and can require TLS, with a client
certificate (mutual TLS) when a CA is given.  Idle StreamChannels are bounded (``max_streams``; one more is
answered RESOURCE_EXHAUSTED) and the thread pool is larger than the bound, so open streams can never starve
unary RPCs.
"""

from __future__ import annotations

import os
import threading
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path

import grpc

from p4exec.p4runtime.handlers import add_to_server
from p4exec.p4runtime.mux import DeviceMux
from p4exec.p4runtime.service import P4RuntimeService

TICK_S = 0.002  # digest timeout resolution (digests configured, or idle-timeout tables)
IDLE_TICK_S = 0.05  # otherwise: only data-plane digests nobody asked for are drained (and dropped)
MAX_MESSAGE = 256 * 1024 * 1024
MAX_STREAMS = 16  # a fabric controller needs one; p4runtime-shell one; tests with several clients a few
UNARY_WORKERS = 16  # threads left for unary RPCs (and Read) when every stream slot is taken
STREAM_METHOD = "/p4.v1.P4Runtime/StreamChannel"


@dataclass(frozen=True)
class TlsConfig:
    """PEM files: the server's certificate and key; with ``ca``, clients must present a certificate it signed."""

    cert: str
    key: str
    ca: str | None = None

    def credentials(self) -> grpc.ServerCredentials:
        root = Path(self.ca).read_bytes() if self.ca else None
        return grpc.ssl_server_credentials([(Path(self.key).read_bytes(), Path(self.cert).read_bytes())],
                                           root_certificates=root, require_client_auth=root is not None)


class _StreamLimit(grpc.ServerInterceptor):
    """At most ``limit`` concurrent StreamChannels; one more is refused at once with RESOURCE_EXHAUSTED
    (each open stream holds a pool thread for its lifetime)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None or handler_call_details.method != STREAM_METHOD or handler.stream_stream is None:
            return handler
        inner, slots, limit = handler.stream_stream, self._slots, self.limit

        def bounded(request_iterator, context):
            if not slots.acquire(blocking=False):
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                              f"this switch serves at most {limit} StreamChannels at once")
            try:
                yield from inner(request_iterator, context)
            finally:
                slots.release()

        return grpc.stream_stream_rpc_method_handler(bounded, request_deserializer=handler.request_deserializer,
                                                     response_serializer=handler.response_serializer)


def unix_path(address: str) -> str | None:
    """The socket path of a ``unix:PATH`` / ``unix://PATH`` address, else None."""
    if address.startswith("unix://"):
        return address[len("unix://"):]
    if address.startswith("unix:"):
        return address[len("unix:"):]
    return None


class P4RuntimeServer:
    """`P4RuntimeServer(device, "127.0.0.1:9559").start()` ... `.stop()`; also `"unix:/run/x/sw.sock"`."""

    def __init__(self, device, address: str = "127.0.0.1:9559", max_workers: int | None = None,
                 tls: TlsConfig | None = None, max_streams: int = MAX_STREAMS, ticker: bool = True,
                 more_devices: list | None = None) -> None:
        """`ticker=False`: no wall-clock thread polls the service (digests, idle timeouts); the owner calls
        `service.poll()` itself — a simulated fabric does so at its control instants, in virtual time.
        `more_devices`: served too, each request going to the device its `device_id` names (see `shared`)."""
        self.device = device
        self.address = address
        self.service = P4RuntimeService(device)
        self.services: dict[int, P4RuntimeService] = {device.device_id: self.service}
        served: P4RuntimeService | DeviceMux = self.service
        if more_devices:
            mux = DeviceMux([self.service, *(P4RuntimeService(d) for d in more_devices)])
            self.services = mux.services
            served = mux
        self._served = served
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers or max_streams + UNARY_WORKERS,
                                       thread_name_prefix="p4rt"),
            interceptors=[_StreamLimit(max_streams)],
            # Pipeline configs (P4 source + P4Info) and big batches exceed gRPC's 4 MB default.
            options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                     ("grpc.max_send_message_length", MAX_MESSAGE)],
        )
        add_to_server(served, self._server)  # Write reads its bytes itself (handlers.py)
        sock = unix_path(address)
        if sock is not None and tls is not None:
            raise ValueError("TLS is for TCP addresses; a Unix socket is protected by its directory")
        self.port = (self._server.add_secure_port(address, tls.credentials()) if tls is not None
                     else self._server.add_insecure_port(address))
        if self.port == 0:
            raise OSError(f"cannot listen on {address}")
        if sock is not None:
            os.chmod(sock, 0o600)  # the directory already keeps others out; the socket too, in case it does not
        elif address.endswith(":0"):  # an OS-chosen port: say which
            self.address = f"{address.rsplit(':', 1)[0]}:{self.port}"
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="p4rt-digest", daemon=True) if ticker else None

    @classmethod
    def shared(cls, devices: list, address: str = "127.0.0.1:0", ticker: bool = False,
               unary_workers: int = 4) -> P4RuntimeServer:
        """One server for every device of a process (an in-process fabric): one gRPC polling thread instead
        of one per device. Each device may hold `MAX_STREAMS` streams; the pool has a thread for each of them
        plus `unary_workers` (idle pool threads block without waking)."""
        first, *rest = devices
        streams = MAX_STREAMS * len(devices)
        return cls(first, address, max_workers=streams + unary_workers, max_streams=streams, ticker=ticker,
                   more_devices=rest)

    def start(self) -> P4RuntimeServer:
        self._server.start()
        if self._ticker is not None:
            self._ticker.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S if self._served.needs_fast_poll() else IDLE_TICK_S):
            self._served.poll()

    def stop(self, grace: float = 1.0) -> None:
        """Stop within about `grace` seconds: streams are woken, RPCs cancelled after grace."""
        self._stop.set()
        self._served.close()
        self._server.stop(grace).wait(grace + 1.0)
        if self._ticker is not None and self._ticker.is_alive():
            self._ticker.join(timeout=1.0)

    def wait(self) -> None:
        self._server.wait_for_termination()

    def __enter__(self) -> P4RuntimeServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
