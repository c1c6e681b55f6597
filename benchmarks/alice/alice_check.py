"""The check of the ALICE workload (workload.py): the run is done when the database holds every row, whole.

The engine is the one whose file is in the work folder (SQLite's is the same in both journal
modes: the check reads it as the rollback engine, after the run, when no process writes). The
rows the final database holds are the applied writes; ROWS are expected.
"""

from __future__ import annotations

from pathlib import Path

from workload import ENGINES, FILES, ROWS, held

from crashsweep import Outcome, Scenario


def check(scenario: Scenario) -> Outcome:
    """ROWS writes expected, one per row; applied: the rows the final database holds, whole and in order."""
    folder = Path(scenario.workdir)
    engine = next((name for name, file in FILES.items() if (folder / file).exists()), None)
    count = 0
    if engine is not None:
        try:
            store = ENGINES[engine](str(folder))
            count = held(store)
            store.close()
        except (Exception, SystemExit):  # a database its engine cannot open or holds corrupt: no row applied
            count = 0
    return Outcome.of([f"row {i}" for i in range(count)], [f"row {i}" for i in range(ROWS)])
