"""The VM recipe is checked by the real tools, since nobody boots a VM in CI."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_vagrantfile_is_valid_ruby() -> None:
    result = run("ruby", "-c", "Vagrantfile")
    assert result.returncode == 0, result.stderr
    assert "Syntax OK" in result.stdout


def test_vagrantfile_uses_the_provisioning_script() -> None:
    text = (ROOT / "Vagrantfile").read_text()
    assert 'path: "scripts/provision.sh"' in text


def test_provision_script_parses_and_is_shellcheck_clean() -> None:
    assert run("bash", "-n", "scripts/provision.sh").returncode == 0
    result = run("shellcheck", "scripts/provision.sh")
    assert result.returncode == 0, result.stdout + result.stderr


def test_provision_script_installs_packages_and_never_builds_the_toolchain() -> None:
    text = (ROOT / "scripts/provision.sh").read_text()
    for package in ("p4lang-bmv2", "p4lang-p4c", "mininet"):
        assert package in text
    assert "ETHLAB_P4LANG_PACKAGES" in (ROOT / "Vagrantfile").read_text()  # the VM asks for the packages
    for build_step in ("cmake", "configure", "git clone", "./autogen", "make -j", "ninja"):
        assert build_step not in text  # ethlab never builds BMv2 or p4c
    for tool in ("simple_switch_grpc", "p4c-bm2-ss"):
        assert tool in text
