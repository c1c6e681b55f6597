"""`python -m crashsweep` and the `crashsweep` script: run the command line.

The command line's modules are imported inside `run`, so that Ctrl-C while they load (half a
second: networkx, click, hypothesis...) is one line and exit 130, not a traceback.
"""

from __future__ import annotations

import sys


def run(module: str | None = None) -> int:
    """Import and run crashsweep.cli.main's main; `module` is the interpreter under `python -m`.

    The command begins when this process started (crashsweep.cli.clock): a sweep's reported
    seconds include the interpreter's start and these imports.
    """
    try:
        from crashsweep.cli.clock import process_started

        began = process_started()
        from crashsweep.cli.main import main
    except KeyboardInterrupt:
        sys.stderr.write("crashsweep: interrupted; nothing was written\n")
        return 130
    return main(module=module, began=began)


if __name__ == "__main__":
    raise SystemExit(run(module=sys.executable))
