"""`python -m p4sim.switch ...` runs the switch (same flags as `p4sim switch`)."""

from __future__ import annotations

import sys

from p4sim.switch.cli import main

sys.exit(main())
