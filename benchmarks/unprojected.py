"""Benchmark: the merged search against the full graph on the generated jobs, cell by cell.

The issue's independent check of the state key (spec/SEMANTICS.md section 11): where the full
graph (`projection=False`, one node per world) still finishes, the merged search must give the
same figures (scenarios per move count, summed measures and counters, path lengths, verdicts).
The test suite holds every cell but the two whose full graphs hold millions of worlds
(tests/explorer/test_unprojected_agreement.py, tests/at_scale/test_unprojected_agreement.py);
this script runs any cell, those two by default, and prints one line each:

    .venv/bin/python benchmarks/unprojected.py [--cells save-after-reply:200:2,save-once-per-turn:200:2]

Exit 0 when every cell agrees, 1 when one does not (its figures printed), 2 for a bad option.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scaling import generated

from crashsweep.explorer.search import Exploration, explore
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import DESIGNS, model

HEAVY = "save-after-reply:200:2,save-once-per-turn:200:2"
"""The cells the test suite leaves to this script: a minute of CPU each, most of it the full graph's."""


def figures(exploration: Exploration[Any]) -> tuple[object, ...]:
    """What the two searches must share: the counts and each verdict (holds, and of which kind)."""
    verdicts = {name: (verdict.kind, verdict.holds) for name, verdict in exploration.verdicts.items()}
    counts = exploration.counts
    return counts.scenarios, counts.measures, counts.counters, counts.steps, verdicts


def cell(design: str, calls: int, depth: int) -> tuple[bool, str]:
    """Both searches of one cell; whether they agree, and the line that says so."""
    loop = model(design, generated(calls, 4), KEYED)
    started = time.process_time()
    merged = explore(loop, depth)
    full = explore(loop, depth, projection=False)
    same = figures(merged) == figures(full) and merged.states <= full.states
    scenarios = sum(merged.counts.scenarios.values())
    line = (
        f"{design} {calls} calls depth {depth}: {'agree' if same else 'DIFFER'}, {scenarios:,} scenarios, "
        f"{merged.states:,} merged states against {full.states:,}, {time.process_time() - started:.1f} s CPU"
    )
    if not same:
        line += f"\n  merged: {figures(merged)}\n  full:   {figures(full)}"
    return same, line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit 2."""
        self.exit(2, f"unprojected.py: {message}\n")


def parse_cells(text: str, parser: _Parser) -> list[tuple[str, int, int]]:
    """DESIGN:CALLS:DEPTH,... as tuples; a bad one refused in one line."""
    cells = []
    for item in text.split(","):
        design, _, rest = item.partition(":")
        calls, _, depth = rest.partition(":")
        if design not in DESIGNS or not calls.isdigit() or not depth.isdigit() or int(calls) < 1:
            parser.error(f"--cells {item!r}: expected DESIGN:CALLS:DEPTH with a shipped design")
        cells.append((design, int(calls), int(depth)))
    return cells


def main() -> int:
    """Run each cell; 0 when all agree."""
    parser = _Parser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cells", default=HEAVY, help="DESIGN:CALLS:DEPTH, comma-separated")
    args = parser.parse_args()
    agreed = True
    for design, calls, depth in parse_cells(args.cells, parser):
        same, line = cell(design, calls, depth)
        print(line, flush=True)
        agreed = agreed and same
    return 0 if agreed else 1


if __name__ == "__main__":
    sys.exit(main())
