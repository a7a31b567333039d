"""Transport of the P4Runtime server: TLS / mutual TLS for the standalone switch, Unix sockets, and a bound on
StreamChannels so idle streams never starve unary RPCs (issue 15, items 1 and 6). Real gRPC throughout."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4exec.p4runtime import P4RuntimeServer
from p4exec.p4runtime.server import MAX_STREAMS, TlsConfig
from p4exec.switch.inprocess import InProcessDevice
from tests.support.p4rt_client import Client

CAPS = p4runtime_pb2.CapabilitiesRequest()


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A throw-away CA, a server certificate for localhost/127.0.0.1 and a client certificate."""
    d = tmp_path_factory.mktemp("pki")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=ethlab-test-ca",
             cwd=d)
    (d / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for who, cn in (("server", "localhost"), ("client", "controller"), ("rogue", "rogue")):
        _openssl("req", *ec, "-keyout", f"{who}.key", "-out", f"{who}.csr", "-subj", f"/CN={cn}", cwd=d)
        ca = ["-CA", "ca.pem", "-CAkey", "ca.key"] if who != "rogue" else ["-signkey", "rogue.key"]
        _openssl("x509", "-req", "-in", f"{who}.csr", *ca, "-CAcreateserial", "-out", f"{who}.pem", "-days", "2",
                 "-extfile", "san.ext", cwd=d)
    return {p.stem + p.suffix.replace(".", "_"): p for p in d.iterdir()}


def _caps(target: str, creds: grpc.ChannelCredentials | None) -> str:
    ch = grpc.secure_channel(target, creds) if creds is not None else grpc.insecure_channel(target)
    with ch:
        return p4runtime_pb2_grpc.P4RuntimeStub(ch).Capabilities(CAPS, timeout=5).p4runtime_api_version


def _client_creds(pki, who: str | None) -> grpc.ChannelCredentials:
    root = pki["ca_pem"].read_bytes()
    if who is None:
        return grpc.ssl_channel_credentials(root_certificates=root)
    return grpc.ssl_channel_credentials(root_certificates=root, private_key=pki[f"{who}_key"].read_bytes(),
                                        certificate_chain=pki[f"{who}_pem"].read_bytes())


def test_mutual_tls_refuses_clients_without_the_right_certificate(pki) -> None:
    tls = TlsConfig(str(pki["server_pem"]), str(pki["server_key"]), str(pki["ca_pem"]))
    with P4RuntimeServer(InProcessDevice(device_id=1, cpu_port=255, ports=(1,)), "127.0.0.1:0", tls=tls) as srv:
        target = f"localhost:{srv.port}"
        assert _caps(target, _client_creds(pki, "client"))
        for creds in (None, _client_creds(pki, None), _client_creds(pki, "rogue")):
            with pytest.raises(grpc.RpcError) as ei:
                _caps(target, creds)
            assert ei.value.code() == grpc.StatusCode.UNAVAILABLE


def test_switch_command_serves_tls_with_its_flags(pki) -> None:
    """`p4exec switch --grpc-cert/--grpc-key/--grpc-ca`: the real process, checked from a client."""
    port = _free_port()
    cmd = [sys.executable, "-m", "p4exec.switch", "--no-p4", "--grpc-server-addr", f"127.0.0.1:{port}",
           "--grpc-cert", str(pki["server_pem"]), "--grpc-key", str(pki["server_key"]),
           "--grpc-ca", str(pki["ca_pem"])]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline() if proc.stderr else ""
        while line and "ready" not in line:
            line = proc.stderr.readline() if proc.stderr else ""
        assert "ready" in line, line
        assert _caps(f"localhost:{port}", _client_creds(pki, "client"))
        with pytest.raises(grpc.RpcError):
            _caps(f"127.0.0.1:{port}", None)  # plain text to a TLS port
    finally:
        proc.terminate()
        proc.wait(10)


def test_switch_command_rejects_half_a_tls_configuration(pki) -> None:
    r = subprocess.run([sys.executable, "-m", "p4exec.switch", "--no-p4", "--grpc-cert", str(pki["server_pem"])],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "--grpc-key" in r.stderr and "Traceback" not in r.stderr


def test_unix_socket_server_is_private(tmp_path) -> None:
    sock = tmp_path / "sw.sock"
    with P4RuntimeServer(InProcessDevice(device_id=1, cpu_port=255, ports=(1,)), f"unix:{sock}"):
        assert (os.stat(sock).st_mode & 0o777) == 0o600
        assert _caps(f"unix:{sock}", None)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_idle_streams_never_starve_unary_rpcs(server) -> None:
    """32 idle StreamChannels used to take every pool thread; now streams beyond the bound are refused with
    RESOURCE_EXHAUSTED and unary RPCs are answered throughout."""
    clients = [Client(server.address, election_id=i + 1) for i in range(32)]
    try:
        answers = [c.connect() for c in clients]  # the arbitration answer, or the stream's error
        refused = [a for a in answers if isinstance(a, grpc.RpcError)]
        accepted = [a for a in answers if not isinstance(a, grpc.RpcError)]
        assert len(accepted) == MAX_STREAMS and len(refused) == 32 - MAX_STREAMS
        assert all(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED for e in refused)
        # unary RPCs still answered while every stream slot is held
        assert _caps(server.address, None)
        get = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1)
        clients[0].stub.GetForwardingPipelineConfig(get, timeout=5)
    finally:
        for c in clients:
            c.close()
    # closed streams give their slots back
    deadline = time.monotonic() + 10
    while True:
        late = Client(server.address, election_id=99)
        try:
            msg = late.connect()
            if not isinstance(msg, grpc.RpcError):
                break
        finally:
            late.close()
        assert time.monotonic() < deadline, "stream slots were not released"
        time.sleep(0.2)


def _switch(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "p4exec.switch", "--no-p4", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _ready(proc: subprocess.Popen) -> str:
    line = proc.stderr.readline() if proc.stderr else ""
    while line and "ready" not in line:
        line = proc.stderr.readline() if proc.stderr else ""
    return line


def test_standalone_default_is_a_private_unix_socket() -> None:
    """docs/security.md: without flags a standalone switch listens on a Unix socket only its user can open,
    no TCP port; another local user (nobody) is refused; p4runtime-shell users give --grpc-addr unix:PATH."""
    from p4exec.switch.grpc_link import default_address, default_socket_dir
    from tests.topologies.test_security import as_nobody, tcp_listeners

    device = 40000 + os.getpid() % 20000
    address = default_address(device)
    proc = _switch("--device-id", str(device))
    try:
        assert address in _ready(proc)
        path = address[len("unix:"):]
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(default_socket_dir()).st_mode) == 0o700
        assert tcp_listeners(proc.pid) == []
        assert _caps(address, None)
        r = as_nobody(f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({path!r}); print('connected')")
        assert "connected" not in r.stdout and "PermissionError" in r.stderr, (r.stdout, r.stderr)
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("address,extra,refused", [
    ("127.0.0.1:{port}", (), True),                                   # loopback, not said: refused
    ("0.0.0.0:{port}", ("--grpc-allow-local-users",), True),          # beyond loopback needs TLS
    ("127.0.0.1:{port}", ("--grpc-allow-local-users",), False),       # said explicitly: served
])
def test_tcp_without_tls_needs_loopback_and_an_explicit_flag(address: str, extra: tuple, refused: bool) -> None:
    addr = address.format(port=_free_port())
    proc = _switch("--grpc-server-addr", addr, *extra)
    try:
        if refused:
            _out, err = proc.communicate(timeout=60)
            assert proc.returncode != 0 and "Traceback" not in err
            assert ("--grpc-allow-local-users" in err) if addr.startswith("127.") else ("needs TLS" in err), err
        else:
            assert "ready" in _ready(proc)
            assert _caps(addr, None)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)
