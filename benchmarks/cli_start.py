"""Benchmark: how much CPU a crashsweep command costs before it does its work, against the floor.

Each command runs as a user runs it (`python -m crashsweep ...`), --repeat times, each time in
a process of its own; its figure is the least CPU time (user and system, the child's) of those
runs, the one least disturbed by other work on the machine. The commands: `--version` (the
command line alone), `explore` of a small design at depth 1 (its search takes milliseconds),
`compare` at depth 1, and the help of `sweep` and of the whole group (which imports every
command). Beside them, two floors: the interpreter alone (`python -c pass`), and the imports a
command of the model side cannot do without (click, rich, the explorer, the designs, the row's
table), which is as low as `explore` can go.

    .venv/bin/python benchmarks/cli_start.py [--repeat 7]

Figures depend on the machine and its load: run it on a quiet machine, and once.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys

COMMANDS = (
    ("--version",),
    ("explore", "--variant", "save-after-reply", "--depth", "1"),
    ("compare", "--depth", "1"),
    ("sweep", "--help"),
    ("--help",),
)
MODEL_SIDE = (
    "import click, rich.console, crashsweep.variants, crashsweep.explorer.search, "
    "crashsweep.reports.table, crashsweep.reports.summary"
)
FLOORS = (("the interpreter alone", ("-c", "pass")), ("the model side's imports alone", ("-c", MODEL_SIDE)))


def least_cpu(argv: list[str], repeat: int) -> float:
    """The least CPU seconds (user + system) of `repeat` runs of `argv`, each a process of its own."""
    best = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))
    return best


def main() -> int:
    """Print each command's least CPU seconds, then the floors'."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each command (the least is printed)")
    args = parser.parse_args()
    if not 1 <= args.repeat <= 1000:
        parser.error("--repeat must be 1 to 1000")
    print(f"least CPU seconds of {args.repeat} run(s) each, every run a process of its own")
    for words in COMMANDS:
        seconds = least_cpu([sys.executable, "-m", "crashsweep", *words], args.repeat)
        print(f"  {seconds:6.3f} s  crashsweep {' '.join(words)}")
    for label, argv in FLOORS:
        print(f"  {least_cpu([sys.executable, *argv], args.repeat):6.3f} s  {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
