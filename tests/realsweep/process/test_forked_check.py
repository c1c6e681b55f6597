"""A check named by its spec runs in a child of the sweep's zygote, where the program's modules are imported."""

from __future__ import annotations

import os
import pickle
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashsweep.realsweep.process.forked_check import ForkedCheck
from crashsweep.realsweep.sweep import Outcome, Scenario, SweepError, SweepOptions, Target, sweep

PROGRAM = textwrap.dedent(
    """
    import os
    from pathlib import Path
    import fc_marker  # what the framework's import stands for: never imported in the sweep's own process
    from crashsweep import Outcome, crashpoint

    def run():
        crashpoint("started")
        Path("done").write_text("1")
        crashpoint("wrote")

    def check(scenario):
        if "ONLY_IN_PROGRAM" in os.environ:  # the program's environment, which the caller's lacks
            raise RuntimeError("the check saw the program's environment")
        mode = os.environ.get("FC_MODE", "")
        if mode == "raise":
            raise KeyError("records")
        if mode == "local":
            class Unsendable(Exception):
                pass
            raise Unsendable("not picklable")
        if mode == "dict":
            return {"dups": 0}
        if "FC_PIDS" in os.environ:
            Path(os.environ["FC_PIDS"]).write_text(str(os.getpid()))
        done = (scenario.workdir / "done").exists()
        return Outcome(applied=int(done), missing=1 - int(done), dups=len(scenario.crashes))
    """
)


@pytest.fixture
def program(tmp_path: Path) -> Iterator[Path]:
    """The program module fc_program (run and check) and the marker module it imports, in `tmp_path`."""
    (tmp_path / "fc_program.py").write_text(PROGRAM)
    (tmp_path / "fc_marker.py").write_text("LOADED = True\n")
    yield tmp_path
    for name in ("fc_program", "fc_marker"):
        sys.modules.pop(name, None)


def _target(folder: Path) -> Target:
    return Target.entry_point("fc_program:run", path=[str(folder)])


def _options(tmp_path: Path, **changes: object) -> SweepOptions:
    given: dict[str, object] = {"depth": 1, "timeout": 30, "workers": 2, "tracker": None, "every": True, **changes}
    return SweepOptions(**given)  # type: ignore[arg-type]


@pytest.mark.parametrize("dedup", [True, False])
def test_the_check_runs_in_a_fork_of_the_zygote_and_this_process_never_imports_it(
    program: Path, tmp_path: Path, dedup: bool
) -> None:
    """Both sweeps (merging, every scenario): every scenario checked, and neither module imported here.

    The zygote was started with ONLY_IN_PROGRAM set (the target's environment); the check sees the
    caller's environment instead, as it would have in the caller's process.
    """
    target = Target.entry_point("fc_program:run", path=[str(program)])
    target = Target(target.argv, {**target.env, "ONLY_IN_PROGRAM": "1"}, target.label, target.fork, target.fork_argv)
    result = sweep(target, ForkedCheck("fc_program:check"), _options(tmp_path, dedup=dedup))
    assert result.baseline.outcome == Outcome(applied=1)
    assert [s.outcome.dups for s in result.scenarios] == [1, 1]
    assert "fc_program" not in sys.modules
    assert "fc_marker" not in sys.modules


def test_a_check_that_raises_names_the_scenario_as_one_that_raised_here(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's words, the error's type and message; the child's traceback comes along as a note."""
    monkeypatch.setenv("FC_MODE", "raise")
    check = ForkedCheck("fc_program:check")
    with pytest.raises(SweepError, match=r"^the uninterrupted run: the check failed: KeyError: 'records'$") as raised:
        sweep(_target(program), check, _options(tmp_path, dedup=False))
    assert isinstance(raised.value.__cause__, KeyError)
    assert "Traceback" in "".join(raised.value.__cause__.__notes__)
    with pytest.raises(SweepError, match=r"^scenario \(uninterrupted\): the check failed: KeyError: 'records'$"):
        sweep(_target(program), check, _options(tmp_path, dedup=True))


def test_an_exception_that_cannot_travel_back_is_said_by_its_type_and_message(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A class local to the check does not unpickle here: its name and message stand in for it."""
    monkeypatch.setenv("FC_MODE", "local")
    with pytest.raises(SweepError, match=r"the check failed: Unsendable: not picklable$"):
        sweep(_target(program), ForkedCheck("fc_program:check"), _options(tmp_path, dedup=False))


def test_a_check_that_returns_no_outcome_is_refused_by_its_type(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FC_MODE", "dict")
    with pytest.raises(SweepError, match=r"^the check returned dict, not crashsweep.realsweep.sweep.Outcome$"):
        sweep(_target(program), ForkedCheck("fc_program:check"), _options(tmp_path, dedup=False))


def test_each_check_is_a_process_of_its_own(program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check's process ID is neither this process's nor the zygote's (a fresh fork per check)."""
    monkeypatch.setenv("FC_PIDS", str(tmp_path / "pid.txt"))
    sweep(_target(program), ForkedCheck("fc_program:check"), _options(tmp_path / "root", depth=1, dedup=False))
    assert int((tmp_path / "pid.txt").read_text()) != os.getpid()


def test_without_a_zygote_the_check_is_loaded_here_once(program: Path, tmp_path: Path) -> None:
    """--spawn exec: no zygote, so the check runs in this process, as a check always did; the same verdicts."""
    sys.path.insert(0, str(program))
    try:
        result = sweep(_target(program), ForkedCheck("fc_program:check"), _options(tmp_path, spawn="exec"))
    finally:
        sys.path.remove(str(program))
    assert result.baseline.outcome == Outcome(applied=1)
    assert [s.outcome.dups for s in result.scenarios] == [1, 1]
    assert "fc_marker" in sys.modules


def test_a_forked_check_travels_by_pickle_as_its_spec() -> None:
    """As the Ray engine sends it to its workers."""
    check = ForkedCheck("fc_program:check")
    assert pickle.loads(pickle.dumps(check)) == check


def test_outside_a_sweep_the_check_is_called_here(program: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(program))
    (program / "work").mkdir()
    (program / "work" / "done").write_text("1")
    assert ForkedCheck("fc_program:check")(Scenario((), program / "work", None)) == Outcome(applied=1)
