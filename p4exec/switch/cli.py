"""`p4exec switch`: command line and process life cycle, flag-compatible with simple_switch_grpc.

BMv2 puts target options after a bare `--` (`... --no-p4 -- --grpc-server-addr A --cpu-port 255`);
we accept both that and the flat form, so Mininet switch classes written for BMv2 work unchanged.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import signal
import sys
import threading
from pathlib import Path

from p4exec.argtypes import IFNAME_MAX, PORT_MAX, U64, integer, new_file, number, real, tcp_or_unix_address
from p4exec.runtime import budget
from p4exec.switch.grpc_link import ALLOW_LOCAL_FLAG, default_address, default_socket_dir, transport_problem
from p4exec.switch.ports import SocketPort, parse_interface
from p4exec.switch.tm import QueueConfig, TrafficManager
from p4exec.textfile import read_text_file

log = logging.getLogger("p4exec.switch")
MAX_PROGRAM_BYTES = 256 << 20  # a compiled JSON of a big program is tens of MB
MAX_DEPTH = 1 << 20  # packets per queue
MAX_RATE = 1e13  # packets/s or bits/s: far above any port
DEFAULT_STATE_BUDGET_MB = budget.DEFAULT_BUDGET / (1 << 20)

LOG_LEVELS = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "off": logging.CRITICAL + 10,
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", help="program: p4exec compiled JSON (p4exec compile -o) or P4 source")
    p.add_argument("-i", "--interface", action="append", default=[], metavar="N@IFACE",
                   help="attach port N to interface IFACE (repeatable)")
    p.add_argument("--device-id", type=integer(0, U64), default=0, help="P4Runtime device id")
    p.add_argument("--grpc-server-addr", type=tcp_or_unix_address, default=None,
                   help="P4Runtime server address: unix:PATH, or HOST:PORT (TCP: TLS, or loopback with "
                        f"{ALLOW_LOCAL_FLAG}); default unix:{default_socket_dir()}/switch-DEVICE_ID.sock")
    p.add_argument(ALLOW_LOCAL_FLAG, action="store_true",
                   help="serve a loopback TCP address without TLS: every local user can then drive the switch")
    p.add_argument("--grpc-cert", default=None, metavar="PEM", help="serve TLS with this certificate (needs --grpc-key)")
    p.add_argument("--grpc-key", default=None, metavar="PEM", help="private key of --grpc-cert")
    p.add_argument("--grpc-ca", default=None, metavar="PEM",
                   help="with TLS: require client certificates signed by this CA (mutual TLS)")
    p.add_argument("--no-grpc", action="store_true", help="do not start the P4Runtime server")
    p.add_argument("--cpu-port", type=integer(0, PORT_MAX), default=None, help="CPU port for packet-in/out")
    p.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR",
                   help="write IFACE_in.pcap / IFACE_out.pcap per port into DIR")
    p.add_argument("--log-console", action="store_true", help="log to stderr")
    p.add_argument("--log-file", type=new_file, default=None, help="log to this file")
    p.add_argument("-L", "--log-level", default="info", choices=sorted(LOG_LEVELS))
    p.add_argument("--seed", type=integer(0, U64), default=0, help="seed for random() in the program")
    p.add_argument("--link-layer", default=None, metavar="JSON",
                   help="the link layer on every port (linklayer/: frame errors, LLR, flow control), as the "
                        "`link_layer` mapping of an experiment spec in JSON; link errors are drawn from --seed")
    p.add_argument("--link-layer-ports", type=integer(0, PORT_MAX), nargs="+", default=None, metavar="PORT",
                   help="run the link layer on these ports only (default: every port); the others send and "
                        "receive plain frames (a host that speaks no LLR, a benchmark's plain side)")
    p.add_argument("--link-name", default="switch", metavar="NAME",
                   help="this switch's node name: its ports' link errors are keyed by NAME:PORT")
    p.add_argument("--pipeline", choices=["python", "native"], default=None,
                   help="run programs on the generated Python or the native C pipeline (default: $P4EXEC_PIPELINE "
                        "or native where a C compiler is present; docs/p4exec-native.md)")
    p.add_argument("--no-p4", action="store_true", help="start without a program (wait for the controller)")
    p.add_argument("--thrift-port", type=integer(0, 65535), default=None, help="accepted for BMv2 compatibility; unused")
    p.add_argument("--queue-depth", type=integer(0, MAX_DEPTH), default=64, help="default egress queue depth, packets")
    p.add_argument("--queue-rate", type=real(0, MAX_RATE), default=0.0, help="default egress rate, packets/s (0 = unlimited)")
    p.add_argument("--queue-rate-bps", type=real(0, MAX_RATE), default=0.0, help="default egress rate, bits/s (0 = unlimited)")
    p.add_argument("--queue-rate-port", action="append", default=[], metavar="P:PPS", help="per-port rate")
    p.add_argument("--queue-depth-port", action="append", default=[], metavar="P:PKTS", help="per-port depth")
    p.add_argument("--priority-queues", type=integer(1, 8), default=1, help="strict-priority queues per port")
    p.add_argument("--rx-ring-mb", type=real(0, 4096), default=16.0,
                   help="memory for the receive rings of all ports together, MB (0: socket buffers, slower)")
    p.add_argument("--stats-file", type=new_file, default=None, help="write per-port accounting JSON here on exit and SIGUSR1")
    p.add_argument("--state-budget-mb", type=number(float, 1 / 1024, 1 << 20, "a size in MiB"), default=DEFAULT_STATE_BUDGET_MB, metavar="MB",
                   help="memory a program's registers, counters and meters may declare, MiB (a bigger "
                        "program is refused with RESOURCE_EXHAUSTED)")


def tls_config(args: argparse.Namespace):
    """The server's TLS settings from --grpc-cert/--grpc-key/--grpc-ca, or None (plain TCP or a Unix socket)."""
    if not (args.grpc_cert or args.grpc_key or args.grpc_ca):
        return None
    if not (args.grpc_cert and args.grpc_key):
        raise SystemExit("p4exec switch: TLS needs both --grpc-cert and --grpc-key")
    from p4exec.p4runtime.server import TlsConfig

    for path in (args.grpc_cert, args.grpc_key, args.grpc_ca):
        if path and not os.path.isfile(path):
            raise SystemExit(f"p4exec switch: cannot read {path}")
    return TlsConfig(args.grpc_cert, args.grpc_key, args.grpc_ca)


def normalize_argv(argv: list[str]) -> list[str]:
    """Drop BMv2's bare `--` separator between generic and target options."""
    return [a for a in argv if a != "--"]


def _pairs(items: list[str], what: str, high: float) -> list[tuple[int, float]]:
    """PORT:VALUE flags: a port of v1model's range and a finite value in [0, high]."""
    out = []
    for item in items:
        try:
            port, value = item.split(":", 1)
            num, val = int(port), float(value)
        except ValueError:
            raise SystemExit(f"p4exec switch: bad {what} {item!r} (want PORT:VALUE)") from None
        if not 0 <= num <= PORT_MAX or not math.isfinite(val) or not 0 <= val <= high:
            raise SystemExit(f"p4exec switch: bad {what} {item!r} (port 0..{PORT_MAX}, value 0..{high:g})")
        out.append((num, val))
    return out


def setup_logging(args: argparse.Namespace) -> None:
    level = LOG_LEVELS[args.log_level]
    handlers: list[logging.Handler] = []
    if args.log_console:
        handlers.append(logging.StreamHandler(sys.stderr))
    if args.log_file:
        handlers.append(logging.FileHandler(args.log_file))
    if not handlers:
        handlers.append(logging.StreamHandler(sys.stderr))
        level = max(level, logging.WARNING)
    fmt = logging.Formatter("%(asctime)s p4exec-switch %(levelname)s %(message)s")
    root = logging.getLogger("p4exec")
    root.handlers.clear()
    for h in handlers:
        h.setFormatter(fmt)
        root.addHandler(h)
    root.setLevel(level)
    root.propagate = False


def build_ports(specs: list[str], ring_mb: float = 16.0) -> list[SocketPort]:
    """Ports from `-i` flags; the ring budget is shared (a big switch gets smaller rings per port)."""
    ports: list[SocketPort] = []
    used: set[int] = set()
    for spec in specs:
        try:
            num, iface = parse_interface(spec, max(used, default=0) + 1)
        except ValueError:
            raise SystemExit(f"p4exec switch: bad -i {spec!r} (want N@IFACE)") from None
        if not 0 <= num <= PORT_MAX or not iface or len(iface) > IFNAME_MAX or "/" in iface:
            raise SystemExit(f"p4exec switch: bad -i {spec!r} (port 0..{PORT_MAX}, an interface name of "
                             f"1..{IFNAME_MAX} characters)")
        if num in used:
            raise SystemExit(f"p4exec switch: port {num} given twice")
        used.add(num)
        ports.append(SocketPort(num, iface))
    if ports:
        # Rings are preallocated (and count in RSS); below 1 MB per port they hold too few frames to be worth
        # it, so big switches read from socket buffers instead, whose memory the kernel only uses when busy.
        per_port = int(ring_mb * (1 << 20) / len(ports))
        per_port = 0 if per_port < (1 << 20) else min(per_port, 8 << 20)
        for p in ports:
            p.ring_bytes = per_port
    return ports


def run(args: argparse.Namespace) -> int:
    """Run the switch until SIGTERM/SIGINT, then end the process (returns only a failure to start)."""
    from p4exec.switch.dataplane import DataPlane
    from p4exec.switch.device import SwitchDevice

    setup_logging(args)
    budget.set_budget(int(args.state_budget_mb * (1 << 20)))
    tls = None if args.no_grpc else tls_config(args)  # a bad flag ends here, before any port is opened
    if args.grpc_server_addr is None:
        args.grpc_server_addr = default_address(args.device_id)
    problem = None if args.no_grpc else transport_problem(args.grpc_server_addr, tls is not None,
                                                           args.grpc_allow_local_users)
    if problem is not None:
        print(f"p4exec switch: {problem}", file=sys.stderr)
        return 2
    tm = TrafficManager(QueueConfig(args.queue_depth, args.queue_rate, args.queue_rate_bps), args.priority_queues)
    for port, pps in _pairs(args.queue_rate_port, "--queue-rate-port", MAX_RATE):
        tm.configure(port, rate_pps=pps)
    for port, depth in _pairs(args.queue_depth_port, "--queue-depth-port", MAX_DEPTH):
        tm.configure(port, depth=int(depth))
    if args.pcap is not None:
        try:  # here, so a bad directory is an error line rather than a traceback from the data plane
            Path(args.pcap).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            print(f"p4exec switch: --pcap {args.pcap}: {err.strerror or err}", file=sys.stderr)
            return 2
    dp = DataPlane(build_ports(args.interface, args.rx_ring_mb), tm, args.cpu_port, args.pcap)
    if args.link_layer:
        problem = enable_link_layer(dp, args.link_layer, args.link_name, args.seed, args.link_layer_ports)
        if problem:
            print(f"p4exec switch: --link-layer: {problem}", file=sys.stderr)
            return 2
    device = SwitchDevice(dp, device_id=args.device_id, seed=args.seed)

    if args.config and not args.no_p4:
        try:
            prog = device.load_config(None, read_text_file(args.config, MAX_PROGRAM_BYTES, "program").encode())
        except OSError as exc:
            print(f"p4exec switch: {exc}", file=sys.stderr)
            return 1
        except Exception as exc:  # noqa: BLE001 - P4Error and friends: message, no traceback
            print(f"p4exec switch: cannot load {args.config}: {exc}", file=sys.stderr)
            return 1
        device.commit(prog)
        log.info("program %s loaded", args.config)
    else:
        log.info("no program: waiting for SetForwardingPipelineConfig")

    dp.open_ports()
    server = None
    if not args.no_grpc:
        from p4exec.switch.grpc_link import start_p4runtime

        try:
            server = start_p4runtime(device, args.grpc_server_addr, tls=tls)
        except Exception as exc:  # noqa: BLE001
            print(f"p4exec switch: cannot start P4Runtime server on {args.grpc_server_addr}: {exc}", file=sys.stderr)
            dp.close()
            return 1
        log.info("P4Runtime server on %s, device id %d", args.grpc_server_addr, args.device_id)

    def on_stop(signum: int, _frame: object) -> None:
        log.info("signal %d: stopping", signum)
        dp.stop()

    def on_usr1(_signum: int, _frame: object) -> None:
        if args.stats_file:
            dp.post(lambda: write_stats(args.stats_file, device))

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGUSR1, on_usr1)
    print(f"p4exec switch ready: {len(dp.ports)} ports, grpc {'off' if server is None else args.grpc_server_addr}",
          file=sys.stderr, flush=True)
    try:
        dp.run()
    finally:
        stopper = None
        if server is not None:
            stopper = threading.Thread(target=_stop_server, args=(server,), daemon=True)
            stopper.start()
        dp.close()
        if args.stats_file:
            write_stats(args.stats_file, device)
        log.info("stopped: %s", json.dumps(dp.acct.snapshot()["total"]))
        if stopper is not None:
            stopper.join(0.5)
    # gRPC's worker threads can hold interpreter exit for seconds; everything is closed and written, so
    # leave now to keep shutdown bounded (Mininet and the tests wait for us).
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def enable_link_layer(dp: object, raw: str, name: str, seed: int, ports: list[int] | None = None) -> str | None:
    """Turn the link layer on at every port of `dp` (or at `ports`); what is wrong with `raw` or `ports`, or
    None."""
    from linklayer import LinkLayerConfig, LinkLayerError

    try:
        cfg = LinkLayerConfig.parse(json.loads(raw))
    except (ValueError, LinkLayerError) as err:
        return str(err)
    if ports is not None:
        unknown = sorted(set(ports) - set(dp.ports))  # type: ignore[attr-defined]
        if unknown:
            return f"--link-layer-ports: no such port {', '.join(map(str, unknown))} (ports: " \
                   f"{', '.join(map(str, sorted(dp.ports)))})"  # type: ignore[attr-defined]
    if cfg.active:
        dp.enable_link_layer(cfg, name, seed, ports)  # type: ignore[attr-defined]
    return None


def _stop_server(server: object) -> None:
    try:
        server.stop(0.2)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001
        log.exception("stopping the P4Runtime server")


def write_stats(path: str, device: object) -> None:
    snap = device.stats()  # type: ignore[attr-defined]
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(snap, indent=1))
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="p4exec switch", description="p4exec software switch (simple_switch_grpc flags)")
    add_arguments(parser)
    args = parser.parse_args(normalize_argv(sys.argv[1:] if argv is None else argv))
    if args.pipeline:
        from p4exec.native import select

        select.set_default(args.pipeline)
    return run(args)
