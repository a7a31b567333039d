"""`ethlab topo list|show` and `ethlab clean --list` through the real CLI entry point."""

from __future__ import annotations

import subprocess
import sys

from ethlab.cli import main
from topologies.catalog import REGISTRY


def test_topo_list(capsys):
    assert main(["topo", "list"]) == 0
    out = capsys.readouterr().out
    for name in REGISTRY:
        assert name in out
    assert "--gpus 64" in out and "--planes 8" in out and "--hosts-per-segment 2" in out
    assert "ethlab's model" in out


def test_topo_show_with_params_and_png(tmp_path, capsys):
    png = tmp_path / "e.png"
    yml = tmp_path / "e.yaml"
    assert main(["topo", "show", "erack", "--gpus", "16", "--planes=4", "--png", str(png), "--yaml", str(yml)]) == 0
    out = capsys.readouterr().out
    assert "gpus=16 planes=4" in out
    assert "│        4 │                16 │    64 │      4 │     1 │" in out  # switches hosts links planes tiers
    assert "│ plane │        4 │         16 │    64 │" in out  # role, switches, ports used, radix
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 300_000
    assert "name: erack" in yml.read_text()


def test_topo_show_path_diversity_for_clos(capsys):
    assert main(["topo", "show", "leafspine", "--spines", "3"]) == 0
    out = capsys.readouterr().out
    assert "│     0 │        5 │         12 │  2–4 │            1–3 │" in out


def test_topo_show_yaml_file(capsys):
    import topologies

    path = f"{topologies.__path__[0]}/data/dualplane.yaml"
    assert main(["topo", "show", path]) == 0
    assert "dualplane" in capsys.readouterr().out


def test_errors_are_one_line_and_exit_1(capsys):
    assert main(["topo", "show", "upn", "--bogus", "3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ethlab: error: upn: unknown parameter 'bogus'") and "Traceback" not in err
    assert main(["topo", "show", "erack", "--gpus"]) == 1
    assert "needs a value" in capsys.readouterr().err
    assert main(["topo", "show", "erack", "--gpus", "65"]) == 1
    assert "radix is 64" in capsys.readouterr().err


def test_clean_list_and_nothing_to_clean(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ETHLAB_STATE_DIR", str(tmp_path))
    assert main(["clean", "--list"]) == 0
    assert "ethlab runs" in capsys.readouterr().out
    assert main(["clean"]) == 0
    assert "nothing to clean" in capsys.readouterr().out


def test_console_script(tmp_path):
    exe = f"{sys.prefix}/bin/ethlab"
    r = subprocess.run([exe, "topo", "show", "line", "--n", "2"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "line  n=2" in r.stdout


def test_help_lists_every_command(capsys):
    import pytest

    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "topo" in out and "clean" in out and "doctor" in out
