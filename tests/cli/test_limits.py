"""The count options' bounds: above what the machine has, one line and exit 2, before any work."""

from __future__ import annotations

import pytest

from crashsweep.cli import limits
from crashsweep.cli.main import main

HUGE = str(10**20)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["frontier", "--workers", HUGE], f"{HUGE} is above {4 * limits.cores()}: each worker"),
        (["frontier", "--workers", str(4 * limits.cores() + 1)], "each worker is a process"),
        (["sweep", "--variant", "agent-loop", "--workers", HUGE], "each worker is a process"),
        (["conform", "--workers", HUGE], "each worker is a process"),
        (["explore", "--variant", "agent-loop", "--max-states", HUGE], "holds fewer states"),
        (["frontier", "--max-states", HUGE], "holds fewer states"),
        (["explore", "--variant", "agent-loop", "--depth", HUGE], f"above {limits.MODEL_DEPTH}: every crash more"),
        (["explore", "--variant", "agent-loop", "--depth", "101"], "a search that deep cannot finish"),
        (["frontier", "--depth", HUGE], "a search that deep cannot finish"),
        (["view", "--variant", "agent-loop", "--depth", HUGE], "a search that deep cannot finish"),
        (["sweep", "--variant", "agent-loop", "--depth", "13"], f"above {limits.REAL_DEPTH}: every crash more"),
        (["conform", "--depth", HUGE], "a sweep that deep cannot finish"),
        (["sweep", "--variant", "agent-loop", "--timeout", "1e300"], "above 604800 s (a week)"),
        (["sweep", "--variant", "agent-loop", "--timeout", "nan"], "nan is below 1"),
        (["sweep", "--variant", "agent-loop", "--workers", "many"], "'many' is not a whole number"),
    ],
)
def test_a_count_above_the_machines_bound_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert message in err


def test_the_bounds_come_from_the_machine() -> None:
    """Workers: 4 per core; states: memory over 64 bytes; the bound itself is accepted."""
    assert limits.workers().most == limits.WORKERS_PER_CORE * limits.cores()
    assert limits.workers().convert(str(limits.workers().most), None, None) == limits.workers().most
    memory = limits.memory()
    assert memory is None or limits.max_states().most == memory // limits.BYTES_PER_STATE
