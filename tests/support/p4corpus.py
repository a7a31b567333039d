"""The conformance corpus of tests/p4: which files are its programs and in which order.

One definition, so the STF runs (both pipelines), the p4c reference test and the fuzzers all see the same
programs: a corpus program is named `NN_topic.p4` or `NNN_topic.p4` (a number of two or three digits, then a
topic), and they come in numeric order, so `100_x` follows `99_y` rather than `10_z`."""

from __future__ import annotations

import re
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "p4"
_NAME = re.compile(r"(\d{2,3})_\w+\.p4")


def corpus_programs(corpus: Path = CORPUS) -> list[Path]:
    """The corpus programs under `corpus`, numbered names only (include/ and negative/ are not in it)."""
    found = [(int(m.group(1)), p.name, p) for p in corpus.glob("*.p4") if (m := _NAME.fullmatch(p.name))]
    return [p for _, _, p in sorted(found)]
