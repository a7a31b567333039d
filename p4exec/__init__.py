"""p4exec: our P4_16 v1model compiler, runtime, switch process and P4Runtime server.

gRPC's fork handlers are switched off here, before any of the project's modules imports grpc (the
variable is read when grpc is first imported): no process of the project uses gRPC across a fork — vfabric's
partition workers only simulate, and the switch fork server forks before gRPC has started — so the handlers
can only hurt. With them on, a partition worker forked while the controller's and the in-process servers'
threads were busy once hung inside gRPC's after-fork handler in the child. A user's own setting is kept.
"""

from __future__ import annotations

import os
import sys

_OFF = ("0", "false", "no", "off")
if "grpc" not in sys.modules:
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
# whether forking is safe while gRPC threads run: grpc was (or will be) imported with its fork handlers off
GRPC_FORK_HANDLERS_OFF = os.environ.get("GRPC_ENABLE_FORK_SUPPORT", "").strip().lower() in _OFF
