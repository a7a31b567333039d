"""Test modules import grpc before the project's packages (import order): p4exec first, so gRPC's fork
handlers are off in the test process as they are in the CLI's (p4exec/__init__.py says why)."""

import p4exec  # noqa: F401
