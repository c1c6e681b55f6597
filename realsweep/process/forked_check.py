"""A user's check run where the program's modules are already imported: in a child of the sweep's zygote.

`crashsweep sweep --target M:F --check M:G` names a check that usually lives in the agent's own
module, beside its framework's import (the OpenAI Agents SDK took one user 9-18 s to import).
The sweep's zygote (zygote.py) has imported that module already, so the CLI does not: it holds
a `ForkedCheck(spec)`, which asks the zygote to fork a child that runs the check and hands back
its Outcome. The child is a fresh fork of the zygote, which never ran the program nor a check,
so each check starts from the module as imported, not from what an earlier check left in it.

Inside a runner that forks from a zygote (`Runner.checked` says which: `forking`) the check
runs in such a child; elsewhere (`--spawn exec`, a command target, no zygote, a caller outside
a runner) it is loaded once in this process and called here, as before.

The child is told its scenario in a small JSON file in the scenario's folder (beside its work
directory), with the caller's environment and current directory, and the caller's sys.path
before the zygote's, so that the check finds and sees what it would have in the caller. It
writes the Outcome back as a pickle; a check that raises leaves its traceback in the child's
output, and its exception (or its type's name and message when it cannot be pickled) for the
caller to raise again, so that the sweep says "...: the check failed: TYPE: message" as it
does of a check that raised in its own process.
"""

from __future__ import annotations

import contextvars
import functools
import json
import os
import pickle
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crashsweep.realsweep.probe.entry import load
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.values import Crash, Outcome, Scenario

if TYPE_CHECKING:  # not at run time: the zygote loads this module, and zygote.py imports what it need not
    from crashsweep.realsweep.process.zygote import Zygote

CHILD = "crashsweep.realsweep.process.forked_check:child"
"""The entry point of the child the zygote forks for a check (the zygote protocol's `entry`)."""

REQUEST, OUTCOME, ERROR, OUTPUT = "check.json", "check-outcome.pickle", "check-error.pickle", "check-output.txt"
"""The child's files, in the scenario's folder (the parent of its work directory)."""

_zygote: contextvars.ContextVar[Callable[[], Zygote] | None] = contextvars.ContextVar("zygote", default=None)
"""How to reach the zygote of the runner whose check is being called (None: it forks none, or no runner)."""


@contextmanager
def forking(zygote: Callable[[], Zygote] | None) -> Iterator[None]:
    """Within it, a ForkedCheck runs in a child of `zygote()` (None: in this process).

    `Runner.checked` sets it around its call of the check, through any wrapper of the check.
    """
    token = _zygote.set(zygote)
    try:
        yield
    finally:
        _zygote.reset(token)


def _current() -> Zygote | None:
    """The zygote the check is to fork from, None for none (see the module docstring)."""
    told = _zygote.get()
    return None if told is None else told()


@dataclass(frozen=True, slots=True)
class ForkedCheck:
    """The check `spec` ("module:function") names, run in a child of the sweep's zygote where there is one.

    A Check (Scenario -> Outcome) that travels by pickle (to a Ray worker) as its spec alone.
    """

    spec: str

    def __call__(self, scenario: Scenario) -> Outcome:
        zygote = _current()
        if zygote is None:
            return _loaded(self.spec)(scenario)  # type: ignore[no-any-return]
        return _forked(zygote, self.spec, scenario)


@functools.cache
def _loaded(spec: str) -> Callable[..., Any]:
    """The check loaded in this process, once (its module imported: the price a fork avoids)."""
    return load(spec)


def _forked(zygote: Zygote, spec: str, scenario: Scenario) -> Outcome:
    """Run the check of `scenario` in a child of `zygote`; its Outcome, or its exception raised again."""
    folder = scenario.workdir.parent
    for name in (OUTCOME, ERROR):
        (folder / name).unlink(missing_ok=True)
    told = {
        "check": spec,
        "crashes": [[crash.index, crash.point, crash.occurrence] for crash in scenario.crashes],
        "workdir": str(scenario.workdir),
        "tracker": None if scenario.tracker is None else scenario.tracker.base_url,
        "path": sys.path,
    }
    (folder / REQUEST).write_text(json.dumps(told), encoding="utf-8")
    # No timeout, as a check called in this process has none; a halted sweep's zygote kills the child.
    status = zygote.run([str(folder / REQUEST)], Path.cwd(), os.environ, folder / OUTPUT, threading.TIMEOUT_MAX, CHILD)
    if status == 0 and (folder / OUTCOME).exists():
        outcome: Outcome = _returned(pickle.loads((folder / OUTCOME).read_bytes()))
        return outcome
    raise _raised(folder, status)


class CheckFailed(Exception):
    """A forked check's exception that could not travel back: its type's name and its message."""


class _Other:
    """What a check returned that is no Outcome, by its type's name (the runner refuses it by that name)."""


def _named(base: type, name: str) -> type:
    """A subclass of `base` named `name`: the sweep names an error or a value by its type's name."""
    return type(name, (base,), {"__module__": __name__})


def _returned(value: object) -> Any:
    """The child's Outcome, or a stand-in of the type's name of what else the check returned."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "not an Outcome":
        return _named(_Other, str(value[1]))()
    return value


def _raised(folder: Path, status: int) -> Exception:
    """The exception the forked check raised, from its ERROR file; a CheckFailed if it left none."""
    from crashsweep.realsweep.process.output import said

    saved = folder / ERROR
    if not saved.exists():  # it died, or exited, without a word of ours
        return CheckFailed(f"the check's process exited with status {status}: {said(folder / OUTPUT)}")
    name, message, pickled = pickle.loads(saved.read_bytes())
    try:
        error = pickle.loads(pickled) if pickled else None
    except Exception:  # its type is not importable here, or does not unpickle
        error = None
    if not isinstance(error, Exception) or type(error).__name__ != name or str(error) != message:
        error = _named(CheckFailed, name)(message)
    error.add_note(f"in the check's forked process:\n{(folder / OUTPUT).read_text(errors='replace').rstrip()}")
    return error


def child() -> int:
    """The forked child's entry point: run the check of the scenario in sys.argv[1]; 0 once its Outcome is saved."""
    path = Path(sys.argv[1])
    folder = path.parent
    told = json.loads(path.read_text(encoding="utf-8"))
    sys.path[:] = [*told["path"], *(entry for entry in sys.path if entry not in told["path"])]  # the caller's first
    crashes = tuple(Crash(index, point, occurrence) for index, point, occurrence in told["crashes"])
    tracker = None if told["tracker"] is None else TrackerClient(told["tracker"])
    scenario = Scenario(crashes, Path(told["workdir"]), tracker)
    try:
        outcome: object = load(told["check"])(scenario)
    except Exception as error:
        import traceback

        traceback.print_exc()
        _save(folder / ERROR, (type(error).__name__, str(error), _pickled(error)))
        return 1
    _save(folder / OUTCOME, outcome if isinstance(outcome, Outcome) else ("not an Outcome", type(outcome).__name__))
    return 0


def _pickled(error: Exception) -> bytes:
    """`error` pickled, or b"" when it cannot be (its name and message travel anyway)."""
    try:
        return pickle.dumps(error)
    except Exception:
        return b""


def _save(file: Path, value: object) -> None:
    """Write `value` pickled to `file`, whole or not at all (a temporary file renamed)."""
    partial = file.with_name(file.name + ".partial")
    partial.write_bytes(pickle.dumps(value))
    os.replace(partial, file)
