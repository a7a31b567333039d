"""`p4exec compile` and `p4exec stf` as the Makefile and tests use them (subprocess: exit codes, no tracebacks)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from p4exec.cli import main

DATA = Path(__file__).parent / "data"
BASIC = DATA / "basic_l3.p4"
P4EXEC = Path(sys.executable).parent / "p4exec"


def test_compile_writes_json_and_p4info(tmp_path) -> None:
    out, info = tmp_path / "o.json", tmp_path / "o.p4info.txtpb"
    assert main(["compile", str(BASIC), "-o", str(out), "--p4runtime-files", str(info)]) == 0
    blob = json.loads(out.read_text())
    assert blob["program"].count("MyIngress") >= 1 and "p4info" in blob
    text = info.read_text()
    assert 'name: "MyIngress.ipv4_lpm"' in text and 'name: "hdr.ipv4.dstAddr"' in text
    assert "match_type: LPM" in text


def test_compile_error_exit_1_located_no_traceback(tmp_path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text(BASIC.read_text().replace("hdr.ipv4.ttl = hdr.ipv4.ttl - 1;", "hdr.ipv4.ttl = hdr.ipv4.ttl - 16w1;"))
    res = subprocess.run([str(P4EXEC), "compile", str(bad), "-o", str(tmp_path / "x.json")], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    assert f"{bad}:" in res.stderr and "error: operands of '-' have different types bit<8> and bit<16>" in res.stderr


def test_stf_pass_and_fail_diff(tmp_path, capsys) -> None:
    prog = tmp_path / "p.p4"
    prog.write_text(BASIC.read_text())
    frame = ("00aabbccddee0011223344550800" "4500001400000000401100000a0000010a000105")
    from p4exec.runtime.hashes import csum16
    ip = bytearray(bytes.fromhex(frame[28:]))
    ip[10:12] = csum16(bytes(ip)).to_bytes(2, "big")
    frame = frame[:28] + ip.hex()
    good = tmp_path / "good.stf"
    good.write_text(f"""
add MyIngress.ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 MyIngress.ipv4_forward(dstAddr:0x0a0b0c0d0e0f, port:2)
packet 1 {frame}
expect 2 0a0b0c0d0e0f 00aabbccddee 0800 45 ** **** **** **** 3f
""")
    assert main(["stf", str(prog), str(good)]) == 0
    assert "PASS" in capsys.readouterr().out
    bad = tmp_path / "bad.stf"
    bad.write_text(good.read_text().replace("expect 2 0a0b", "expect 3 0a0b"))
    assert main(["stf", str(prog), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "port 3: expected packet #1 did not arrive" in out
    assert "port 2: unexpected packet #1" in out and "FAIL" in out
    wrong = tmp_path / "wrong.stf"
    wrong.write_text(good.read_text().replace("**** 3f", "**** 40"))
    assert main(["stf", str(prog), str(wrong)]) == 1
    out = capsys.readouterr().out
    assert "packet #1 differs" in out and "expected" in out and "actual" in out and "^" in out


def test_help_lists_subcommands(capsys) -> None:
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "compile" in out and "stf" in out


def test_stf_bad_statements_fail_with_locations(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.stf"
    bad.write_text("add NoSuchTable k:1 a()\nmeter_set_rates MyIngress.nometer 0 1:1\n")
    assert main(["stf", str(BASIC), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:1:1: error: no table 'NoSuchTable'" in out
    assert f"{bad}:2:1: error: no meter" in out
