"""`python -m p4exec.switch ...` runs the switch (same flags as `p4exec switch`)."""

from __future__ import annotations

import sys

from p4exec.switch.cli import main

sys.exit(main())
