"""`p4exec switch`: the software switch process (AF_PACKET ports, traffic manager, pcap, P4Runtime).

`register(subparsers)` adds the `switch` and `queue` commands to the `p4exec` CLI.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `p4exec switch` and `p4exec queue`; each sets `func(args) -> int` as its default."""
    from p4exec.switch import cli, queue_cmd

    sw = subparsers.add_parser("switch", help="run a software switch (simple_switch_grpc flags)")
    cli.add_arguments(sw)
    sw.set_defaults(func=cli.run)
    q = subparsers.add_parser("queue", help="set/read an egress queue of a running switch over P4Runtime")
    queue_cmd.add_arguments(q)
    q.set_defaults(func=queue_cmd.run)
