"""p4exec compiler: semantic checks, P4Info and code generation (P4_16 source -> Python)."""
from __future__ import annotations


def load_device_config(data: bytes):
    """(P4Info, program bound to a DeviceState) from `p4exec compile` JSON bytes or plain P4 source."""
    from p4exec.compiler.program import load_device_config as _load

    return _load(data)


def load_untrusted_device_config(data: bytes):
    """As `load_device_config`, for a config a client sent: P4 source is compiled in a bounded worker process
    that may include only the standard headers (`p4exec.compiler.worker`)."""
    from p4exec.compiler.worker import load_untrusted_device_config as _load

    return _load(data)


def compile_file(path: str, include_dirs=None):
    from p4exec.compiler.program import compile_file as _cf

    return _cf(path, include_dirs)


def compile_source(text: str, filename: str = "<input>", include_dirs=None):
    from p4exec.compiler.program import compile_source as _cs

    return _cs(text, filename, include_dirs)


__all__ = ["load_device_config", "load_untrusted_device_config", "compile_file", "compile_source"]
