"""`python -m crashsweep` runs the command line."""

from crashsweep.cli import main

raise SystemExit(main())
