"""Run under mpiexec by tests/mpi/test_coupled.py: `ethlab run SPEC --out OUT` on the ranks it is given, with
one change to the window engine to show what it does not depend on or what it refuses.

    coupled_driver.py shuffle SPEC OUT     each rank receives its boundary frames in a random order
    coupled_driver.py long SPEC OUT        the lookahead is claimed 20x longer than the cut allows
"""

from __future__ import annotations

import random
import sys

from ethlab.cli import main
from vfabric import cut, window


def shuffled_inbox() -> None:
    insert = window.WindowEngine.insert
    rng = random.Random(12345)

    def shuffled(self: window.WindowEngine, frames: list) -> None:
        frames = list(frames)
        rng.shuffle(frames)
        insert(self, frames)

    window.WindowEngine.insert = shuffled  # type: ignore[method-assign]


def long_lookahead() -> None:
    honest = cut.link_lookahead_ns
    cut.link_lookahead_ns = lambda rate, delay, pipeline: 20 * honest(rate, delay, pipeline)


if __name__ == "__main__":
    what, spec, out = sys.argv[1:4]
    {"shuffle": shuffled_inbox, "long": long_lookahead}[what]()
    sys.exit(main(["run", spec, "--out", out]))
