import sys

from traffic.cli import main

sys.exit(main())
