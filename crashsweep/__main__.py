"""`python -m crashsweep` runs the command line (and prints commands that start it the same way)."""

import sys

from crashsweep.cli import main

raise SystemExit(main(module=sys.executable))
