"""P4RuntimeServer: serve one device over gRPC (loopback by default), with bounded stop."""

from __future__ import annotations

import threading
from concurrent import futures

import grpc

from p4exec.p4runtime.handlers import add_to_server
from p4exec.p4runtime.service import P4RuntimeService

TICK_S = 0.002  # digest timeout resolution (digests configured, or idle-timeout tables)
IDLE_TICK_S = 0.05  # otherwise: only data-plane digests nobody asked for are drained (and dropped)
MAX_MESSAGE = 256 * 1024 * 1024


class P4RuntimeServer:
    """`P4RuntimeServer(device, "127.0.0.1:9559").start()` ... `.stop()`."""

    def __init__(self, device, address: str = "127.0.0.1:9559", max_workers: int = 32) -> None:
        self.device = device
        self.address = address
        self.service = P4RuntimeService(device)
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="p4rt"),
            # Pipeline configs (P4 source + P4Info) and big batches exceed gRPC's 4 MB default.
            options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                     ("grpc.max_send_message_length", MAX_MESSAGE)],
        )
        add_to_server(self.service, self._server)  # Write reads its bytes itself (handlers.py)
        self.port = self._server.add_insecure_port(address)
        if self.port == 0:
            raise OSError(f"cannot listen on {address}")
        if address.endswith(":0"):  # an OS-chosen port: say which
            self.address = f"{address.rsplit(':', 1)[0]}:{self.port}"
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="p4rt-digest", daemon=True)

    def start(self) -> P4RuntimeServer:
        self._server.start()
        self._ticker.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S if self.service.needs_fast_poll() else IDLE_TICK_S):
            self.service.poll()

    def stop(self, grace: float = 1.0) -> None:
        """Stop within about `grace` seconds: streams are woken, RPCs cancelled after grace."""
        self._stop.set()
        self.service.close()
        self._server.stop(grace).wait(grace + 1.0)
        if self._ticker.is_alive():
            self._ticker.join(timeout=1.0)

    def wait(self) -> None:
        self._server.wait_for_termination()

    def __enter__(self) -> P4RuntimeServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
