"""The fabric controller (P4Runtime over gRPC)."""

import p4exec  # noqa: F401 - sets gRPC's fork mode before this package's modules import grpc
