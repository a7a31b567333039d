"""The BMv2 compile step without p4c: the command line handed to p4c-bm2-ss and how its errors are reported.

p4c-bm2-ss is not installable here, so a stand-in script on PATH records its arguments and either writes
the outputs (a copy of p4exec's P4Info) or fails the way p4c does (diagnostic shapes from p4c's own
error-reporter tests: `file(line): [--Werror=kind] error: msg`, `file(line):syntax error, ...`, then the
source line and a `^^^` marker)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.artifacts import build_artifacts, p4c_diagnostics
from ethlab.up_cmd import one_line
from tests.support.controller import install_fake_tool

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "p4src" / "basic_l3.p4"

FAKE_P4C = """#!/bin/sh
printf '%s\\n' "$@" > "$FAKE_P4C_ARGS"
if [ -n "$FAKE_P4C_FAIL" ]; then cat "$FAKE_P4C_FAIL" >&2; exit 1; fi
out=""; info=""
while [ $# -gt 0 ]; do
  case "$1" in -o) out="$2"; shift;; --p4runtime-files) info="$2"; shift;; esac; shift
done
echo '{"program": "fake"}' > "$out"
for f in $(echo "$info" | tr ',' ' '); do
  case "$f" in *.bin) cp "$FAKE_P4C_P4INFO_BIN" "$f";; *.txt) cp "$FAKE_P4C_P4INFO" "$f";; *) exit 3;; esac
done
"""


@pytest.fixture
def fake_p4c(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_fake_tool(tmp_path, monkeypatch, "p4c-bm2-ss", FAKE_P4C)
    p4exec = build_artifacts(PROGRAM, "p4exec", build_dir=tmp_path / "p4exec")
    monkeypatch.setenv("FAKE_P4C_ARGS", str(tmp_path / "args"))
    monkeypatch.setenv("FAKE_P4C_P4INFO", str(p4exec.p4info_path))
    binary = tmp_path / "p4info.bin"
    unknown = b"\xe2\x12\x03new"  # field 300, length-delimited: what a newer P4Info might carry
    binary.write_bytes(p4exec.p4info.SerializeToString() + unknown)
    monkeypatch.setenv("FAKE_P4C_P4INFO_BIN", str(binary))
    return tmp_path


def test_bmv2_compile_command_and_outputs(fake_p4c: Path) -> None:
    art = build_artifacts(PROGRAM, "bmv2", build_dir=fake_p4c / "out")
    args = (fake_p4c / "args").read_text().splitlines()
    assert args[:4] == ["--arch", "v1model", "--std", "p4-16"]
    assert args[args.index("-o") + 1] == str(fake_p4c / "out" / "basic_l3.bmv2.json")
    # p4c chooses the P4Info format by suffix; .txt is text in every release (.txtpb only in recent ones)
    out = fake_p4c / "out"
    assert args[args.index("--p4runtime-files") + 1] == f"{out}/basic_l3.bmv2.p4info.txt,{out}/basic_l3.bmv2.p4info.bin"
    assert args[-1] == str(PROGRAM)
    assert art.device_config == b'{"program": "fake"}\n'  # the BMv2 JSON is what the pipeline push carries
    assert art.p4info.tables and art.target == "bmv2"
    # loaded from the binary copy: a field our p4runtime package does not know is kept and sent on to PI
    assert art.p4info.SerializeToString().endswith(b"\xe2\x12\x03new")


def test_p4c_errors_become_file_line_col(fake_p4c: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = fake_p4c / "stderr"
    stderr.write_text("p4src/x.p4(12): [--Werror=not-found] error: foo: declaration not found\n"
                      "        foo();\n"
                      "        ^^^\n"
                      "[--Werror=overlimit] error: 1 errors encountered, aborting compilation\n")
    monkeypatch.setenv("FAKE_P4C_FAIL", str(stderr))
    with pytest.raises(RuntimeError) as info:
        build_artifacts(PROGRAM, "bmv2", build_dir=fake_p4c / "out")
    assert "p4src/x.p4:12:9: error: foo: declaration not found" in str(info.value)
    assert one_line(info.value).endswith("p4src/x.p4:12:9: error: foo: declaration not found")


def test_p4c_diagnostic_shapes() -> None:
    syntax = ("/aa/test.p4(5):syntax error, unexpected BIT\n"
              "cons bit\n"
              "     ^^^\n")
    assert p4c_diagnostics(syntax).splitlines()[0] == "/aa/test.p4:5:6: error: syntax error, unexpected BIT"
    warning = "a.p4(3): [--Wwarn=unused] warning: x: unused\n"
    assert p4c_diagnostics(warning) == "a.p4:3:1: warning: x: unused"
    located = "a.p4:3:5: error: already located"
    assert p4c_diagnostics(located) == located


def test_preprocessor_fatal_error_is_the_telling_line() -> None:
    # p4c runs cpp first; a missing include is `file:line:col: fatal error: ...` (already located)
    err = RuntimeError("compiling p4src/ethplus.p4 for bmv2 failed:\n"
                       "p4src/ethplus.p4:25:10: fatal error: include/nope.p4: No such file or directory\n"
                       "compilation terminated.")
    assert one_line(err).endswith("p4src/ethplus.p4:25:10: fatal error: include/nope.p4: No such file or directory")


def test_a_newer_compiler_invalidates_cached_outputs(fake_p4c: Path) -> None:
    build_artifacts(PROGRAM, "bmv2", build_dir=fake_p4c / "out")
    args = fake_p4c / "args"
    args.unlink()
    build_artifacts(PROGRAM, "bmv2", build_dir=fake_p4c / "out")
    assert not args.exists()  # cached: the compiler did not run
    later = (fake_p4c / "out" / "basic_l3.bmv2.json").stat().st_mtime + 10
    os.utime(fake_p4c / "bin" / "p4c-bm2-ss", (later, later))  # p4c upgraded
    build_artifacts(PROGRAM, "bmv2", build_dir=fake_p4c / "out")
    assert args.exists()
