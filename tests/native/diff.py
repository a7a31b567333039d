"""Seeded random frames through the Python and the native pipeline of one `p4src/` program, each behind its own
P4Runtime server with the fabric controller's entries (difftest/fabric_entries.py): outputs per frame, drops,
counters and registers compared. Used by tests/native/test_differential.py and runnable alone:

    .venv/bin/python tests/native/diff.py ethplus 10000
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from controller.artifacts import build_artifacts  # noqa: E402
from difftest.fabric_entries import small_fabric  # noqa: E402
from difftest.frames import FrameGen  # noqa: E402
from difftest.randomdiff import install, read_state  # noqa: E402
from difftest.targets import EmbeddedTarget  # noqa: E402
from p4exec.native import select  # noqa: E402


@contextmanager
def pipeline_kind(kind: str):
    saved = select.default_pipeline
    select.default_pipeline = lambda: kind  # type: ignore[assignment]
    try:
        yield
    finally:
        select.default_pipeline = saved  # type: ignore[assignment]


def run(program: str, n: int, seed: int = 1, build_dir: Path | None = None, batch: int = 0) -> dict:
    """With `batch`, both pipelines are driven directly (no device): the Python one frame by frame with
    `process`, the native one `batch` frames per `process_batch`, each frame i at time i."""
    view = small_fabric()
    frames = FrameGen(view.topo, view.switch, view.ports, seed).frames(n)
    art = build_artifacts(ROOT / "p4src" / f"{program}.p4", "p4exec", build_dir or ROOT / "build" / "native-diff")
    targets = {}
    for kind in ("python", "native"):
        with pipeline_kind(kind):
            targets[kind] = EmbeddedTarget(art)
    try:
        kinds = {k: type(t.device.program.loaded.pipeline).__name__
                 for k, t in targets.items()}
        for t in targets.values():
            install(t, program, view, "ecmp")
        diffs = []
        outputs = 0
        if batch:
            py = targets["python"].device.program.loaded.pipeline
            nat = targets["native"].device.program.loaded.pipeline
            for s in range(0, n, batch):
                chunk = frames[s:s + batch]
                mine = [(s + j, port, data) for j, f in enumerate(chunk) for port, data in py.process(f.port, f.data, s + j)]
                theirs = [(s + i, port, data) for i, port, data in
                          nat.process_batch([f.port for f in chunk], [f.data for f in chunk],
                                            list(range(s, s + len(chunk))))]
                outputs += len(mine)
                if mine != theirs and len(diffs) < 10:
                    diffs.append(f"batch at {s}: python {mine[:3]} native {theirs[:3]}")
            frames = []
        for i, f in enumerate(frames):
            outs = {}
            for k, t in targets.items():
                t.send(f.port, f.data)
                outs[k] = t.collect(0)
            outputs += len(outs["python"])
            if outs["python"] != outs["native"] and len(diffs) < 10:
                diffs.append(f"frame {i} ({f.kind}, port {f.port}): python {outs['python']} native {outs['native']}")
            elif outs["python"] != outs["native"]:
                diffs.append("...")
        states = {k: read_state(t.conn) for k, t in targets.items()}
        state_diffs = [f"{name}: python {states['python'][name]} native {states['native'].get(name)}"
                       for name in states["python"] if states["python"][name] != states["native"].get(name)]
        return {"frames": n, "outputs": outputs, "diffs": diffs, "state_diffs": state_diffs, "pipelines": kinds,
                "state_cells": sum(len(v) for v in states["python"].values())}
    finally:
        for t in targets.values():
            t.close()


if __name__ == "__main__":
    r = run(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10000)
    print(r["pipelines"], f"{r['frames']} frames, {r['outputs']} outputs, {len(r['diffs'])} packet differences, "
          f"{len(r['state_diffs'])} state differences ({r['state_cells']} non-zero cells)")
    for d in r["diffs"][:10] + r["state_diffs"][:10]:
        print(" ", d[:400])
