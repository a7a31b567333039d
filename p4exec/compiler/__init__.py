"""p4exec compiler: semantic checks, P4Info and code generation (P4_16 source -> Python).

`p4exec.v1model.loader` turns what it produces into a runnable LoadedProgram.
"""
from __future__ import annotations


def compile_file(path: str, include_dirs=None):
    from p4exec.compiler.program import compile_file as _cf

    return _cf(path, include_dirs)


def compile_source(text: str, filename: str = "<input>", include_dirs=None):
    from p4exec.compiler.program import compile_source as _cs

    return _cs(text, filename, include_dirs)


__all__ = ["compile_file", "compile_source"]
