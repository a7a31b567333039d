"""Every spec in experiments/ run in virtual time gives the records pinned in records.json, byte for byte.

Why: the host, switch, fault and trial models are being restructured so that each exists once for both clocks;
this pins today's behaviour so a restructuring proves itself behaviour-preserving. A change that is meant to
alter the records regenerates the pin (`python tests/snapshots/test_virtual_records.py --write`) and says why in
its commit message.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIN = Path(__file__).with_name("records.json")
RECORDS = ("metrics.json", "flows.csv", "links.csv")
# A spec whose first line is `# snapshot: skip` is too long for the suite's budget (it says why); its
# determinism is tested where it belongs (e.g. tests/linklayer for experiments/llr.yaml).
SPECS = sorted(p.stem for p in (ROOT / "experiments").glob("*.yaml")
               if not p.read_text().startswith("# snapshot: skip"))


def record_digests(spec_name: str, out: Path) -> dict[str, str]:
    """Run one spec in virtual time into `out`; sha256 of each record file, keyed by its path under runs/."""
    from ethlab.experiment.runner import run_experiment
    from ethlab.experiment.spec import load_spec

    spec = load_spec(str(ROOT / "experiments" / f"{spec_name}.yaml"))
    spec.clock = "virtual"
    spec.repetitions = 1  # every variant once: the suite's time budget; a repetition only changes the seed
    outcome = run_experiment(spec, out, plots=False)
    assert outcome.state == "complete", f"{spec_name}: {outcome.state}: {outcome.error}"
    digests = {}
    for path in sorted(out.glob("runs/*/*/*")):
        if path.name in RECORDS:
            digests[str(path.relative_to(out / "runs"))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


@pytest.mark.parametrize("spec_name", SPECS)
def test_virtual_records_match_the_pin(spec_name: str, tmp_path: Path) -> None:
    pinned = json.loads(PIN.read_text())
    assert spec_name in pinned, f"{spec_name} has no pinned records: run this file with --write"
    got = record_digests(spec_name, tmp_path)
    assert got, f"{spec_name}: the run wrote no records"
    differ = sorted(k for k in set(got) | set(pinned[spec_name]) if got.get(k) != pinned[spec_name].get(k))
    assert not differ, f"{spec_name}: records differ from the pin: {differ[:8]}"


if __name__ == "__main__":
    import tempfile

    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/snapshots/test_virtual_records.py --write")
    table = {}
    for name in SPECS:
        with tempfile.TemporaryDirectory() as tmp:
            table[name] = record_digests(name, Path(tmp))
            print(f"{name}: {len(table[name])} records", flush=True)
    PIN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
