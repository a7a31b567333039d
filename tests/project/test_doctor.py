"""`ethlab doctor` reports the BMv2 toolchain it finds, with versions, and whether the BMv2 tests run.
Version parsing is checked with stand-ins printing what BMv2 1.15.0 and p4c 1.2.4.17 print; the real
toolchain, where it is on PATH, must be reported with its own versions."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from ethlab import doctor
from tests.support.bmv2 import needs_bmv2
from tests.support.controller import install_fake_tool


def _by_name() -> dict[str, doctor.Check]:
    return {c.name: c for c in doctor.bmv2_checks()}


def test_versions_as_the_tools_print_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_tool(tmp_path, monkeypatch, "simple_switch_grpc", "#!/bin/sh\necho 1.15.0-c0ff3aba\n")
    install_fake_tool(tmp_path, monkeypatch, "p4c-bm2-ss",
                      "#!/bin/sh\necho p4c-bm2-ss\necho 'Version 1.2.4.17 (SHA: fe82ab9ccf BUILD: Release)'\n")
    assert doctor.tool_version("simple_switch_grpc") == "1.15.0-c0ff3aba"
    assert doctor.tool_version("p4c-bm2-ss") == "1.2.4.17"
    checks = _by_name()
    assert checks["simple_switch_grpc"].detail.startswith("1.15.0-c0ff3aba (")
    assert "tested with" not in checks["p4c-bm2-ss"].detail
    assert checks["BMv2 target"].ok and "BMv2 tests run" in checks["BMv2 target"].detail


def test_other_versions_say_what_was_tested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_tool(tmp_path, monkeypatch, "simple_switch_grpc", "#!/bin/sh\necho 1.14.0\n")
    assert "1.14.0" in _by_name()["simple_switch_grpc"].detail
    assert "tested with 1.15.0" in _by_name()["simple_switch_grpc"].detail


def test_absent_toolchain_is_optional_and_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    checks = _by_name()
    for tool in ("simple_switch_grpc", "p4c-bm2-ss"):
        assert not checks[tool].ok and not checks[tool].required and "on PATH" in checks[tool].fix
    assert not checks["BMv2 target"].ok and "BMv2 tests skip" in checks["BMv2 target"].detail
    assert doctor.tool_version("simple_switch_grpc") is None


@pytest.mark.parametrize("tool", ["simple_switch_grpc", "p4c-bm2-ss"])
@needs_bmv2[0]
@needs_bmv2[1]
def test_the_installed_toolchain_is_reported(tool: str) -> None:
    version = doctor.tool_version(tool)
    assert version is not None and re.fullmatch(r"\d+\.\d+\.\d+[\w.-]*", version)
    check = _by_name()[tool]
    assert check.ok and version in check.detail and str(shutil.which(tool)) in check.detail


def test_native_pipeline_row_follows_the_c_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a compiler: native is the default; without: an optional row saying p4exec runs Python."""
    from ethlab.doctor import native_check

    monkeypatch.setenv("CC", sys.executable)  # any executable stands for a compiler here
    found = native_check()
    assert found.ok and "default" in found.detail
    monkeypatch.setenv("CC", "/nonexistent/cc")
    missing = native_check()
    assert not missing.ok and not missing.required and "Python pipeline" in missing.detail
