"""crashsweep in a test suite: a design explored, or a target swept, as a test that fails with the counterexample.

What the pytest plugin (crashsweep/pytest_plugin.py, installed with crashsweep as entry point
`pytest11`) runs, imported only when a test uses it:

- the marker `@pytest.mark.crashsweep(VARIANT, design=FILE, job=FILE, tracker=..., depth=...,
  faults=(...), call_ids=...)` explores the design before the test body runs and fails the test
  when an invariant is violated or never exercised;
- the fixture `crashsweep` offers the same as calls: `crashsweep.check(...)` (explore, and fail
  the test unless every invariant holds), `crashsweep.explore(...)` (the row and counterexamples,
  to assert on), `crashsweep.check_sweep(...)` and `crashsweep.sweep(...)` (a real sweep of a
  design, a framework's example agent or your program, with `target="module:function"` and
  `check="module:function"`).

The arguments are the command line's options, checked by the command line's own parameters
(crashsweep.cli.main.explore's, crashsweep.cli.sweep.sweep's: their types, bounds, callbacks
and did-you-mean), so both take and refuse the same values and `depth` defaults alike (DEPTH).
A bad call raises `UsageError` (a ValueError and a TypeError) in one line, before any work:
an unknown keyword (with the close one), a value of the wrong Python type (`depth="2"`), or one
the command line refuses (`depth=10**20`, an unknown variant).

A failed test's message is the shortest counterexample's headline, the command that replays it
(`crashsweep replay --path ...`, or for a sweep `crashsweep sweep ... --crash ...`) and, for an
exploration, its whole trace. `state_machine(...)` is fuzz's hypothesis machine for a test
suite: its failure is the shrunk run step by step, then that run's `crashsweep replay` command.
Both run in the test's process. A sweep is the command line's own run of `crashsweep sweep
--format junit` (as `python -m crashsweep` would run it in the test's working directory), read
from its JUnit report, so the commands it prints are the ones crashsweep prints. The sweeps of
one test session share their zygotes (crashsweep.realsweep.process.zygotes): a program swept
more than once in a session, such as an agent whose framework takes seconds to import, is
imported once, and its zygote is stopped when the session ends (the plugin's
pytest_unconfigure calls `session_ended`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import os
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
import pytest

from crashsweep.cli import artifacts, runs
from crashsweep.cli import fuzz as cli_fuzz
from crashsweep.cli import main as cli_main
from crashsweep.cli import options as cli_options
from crashsweep.cli import sweep as cli_sweep
from crashsweep.cli.variant_names import did_you_mean
from crashsweep.explorer.model import ModelDefinitionError
from crashsweep.realsweep import api
from crashsweep.reports import trace
from crashsweep.reports.counterexample import Counterexample, shortest
from crashsweep.reports.describe import plural
from crashsweep.reports.replay import PROGRAM, replay_command
from crashsweep.reports.summary import Summary
from crashsweep.spec.job import JobError
from crashsweep.spec.policy import PolicyError

if TYPE_CHECKING:
    from crashsweep.explorer.stateful import ModelMachine  # imported by fuzz's machine on call: hypothesis is slow

DEPTH = 2
"""The default depth: the command line's (`explore --depth`, `sweep --depth`), held equal by a test."""

P = ParamSpec("P")
R = TypeVar("R")


class UsageError(ValueError, TypeError):
    """A bad call of crashsweep.testing (or of the marker): one line naming the argument and why.

    A ValueError and a TypeError both, so that either `except` catches it, whether the value or
    its type is wrong.
    """


OPTIONS = {
    "variant": "--variant",
    "design": "--design",
    "target": "--target",
    "check": "--check",
    "framework": "--framework",
    "job": "--job",
    "tracker": "--tracker",
    "depth": "--depth",
    "faults": "--faults",
    "call_ids": "--call-ids",
    "max_states": "--max-states",
    "crashes": "--crashes",
    "steps": "--steps",
}
"""Each keyword argument that is a command-line option, and that option."""

PathLike = (str, os.PathLike)
TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "variant": ((str,), "a design's name (str)"),
    "design": (PathLike, "a design file (str or Path)"),
    "target": ((str,), "module:function or a command line (str)"),
    "check": ((str,), "module:function (str)"),
    "framework": ((str,), "a framework's name (str)"),
    "job": (PathLike, "a job file (str or Path)"),
    "tracker": ((str,), "a tracker kind (str)"),
    "depth": ((int,), "a whole number (int)"),
    "faults": ((str, list, tuple), "fault kinds (a str, or a list or tuple of str)"),
    "call_ids": ((str,), "stable or fresh (str)"),
    "max_states": ((int,), "a whole number (int)"),
    "crashes": ((int,), "a whole number (int)"),
    "steps": ((int,), "a whole number (int)"),
    "args": ((Mapping,), "a mapping of str keys"),
    "options": ((list, tuple), "command-line words (a list or tuple of str)"),
}
"""What Python type each keyword takes (the command line then checks its value as it checks its option)."""


def _refuse_type(keyword: str, value: object) -> None:
    """UsageError unless `value` is of the Python type `keyword` takes (a bool is no number; items too)."""
    __tracebackhide__ = True
    types, wanted = TYPES[keyword]
    items: Sequence[object] = ()
    if isinstance(value, list | tuple):
        items = value
    elif isinstance(value, Mapping):
        items = list(value)
    wrong = isinstance(value, bool) or not isinstance(value, types) or any(not isinstance(i, str) for i in items)
    if wrong:
        raise UsageError(f"crashsweep: {keyword}={value!r} ({type(value).__name__}): expected {wanted}")


def _checked_call(function: Callable[P, R]) -> Callable[P, R]:
    """`function` whose arguments are checked before it runs: names (with the close one), then types.

    An unknown keyword is said with the closest known one (a misspelt `depht`); the values are
    then the command line's to check (`_parsed`).
    """
    signature = inspect.signature(function)
    known = [name for name in signature.parameters if name != "self"]

    @functools.wraps(function)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        __tracebackhide__ = True
        for name in kwargs:
            if name not in signature.parameters:
                raise UsageError(
                    f"crashsweep: {function.__name__}() takes no keyword {name!r}{did_you_mean(name, known)}"
                    f" (it takes {', '.join(known)})"
                )
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise UsageError(f"crashsweep: {function.__name__}(): {error}") from None
        for name, value in bound.arguments.items():
            if value is not None:
                _refuse_type(name, value)
        return function(*args, **kwargs)

    return checked


def _words(given: Mapping[str, object]) -> list[str]:
    """The command-line words of the keyword arguments given (None: the option left out)."""
    words: list[str] = []
    for keyword, value in given.items():
        if value is None or (keyword == "faults" and not value):
            continue
        if isinstance(value, list | tuple):
            shown = ",".join(value)
        else:
            shown = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
        words += [OPTIONS[keyword], shown]
    return words


def _parsed(command: click.Command, words: list[str]) -> click.Context:
    """The command's context for `words`, parsed and checked by its own parameters; UsageError in one line."""
    __tracebackhide__ = True
    try:
        return command.make_context(command.name, list(words))  # click consumes the list it parses
    except click.BadParameter as error:
        option = error.param.opts[0] if error.param is not None and error.param.opts else ""
        keyword = next((name for name, flag in OPTIONS.items() if flag == option), option or "argument")
        close = ""
        if error.param is not None and isinstance(error.param.type, click.Choice):
            close = did_you_mean(_value_of(words, option), [str(choice) for choice in error.param.type.choices])
        message = error.message.rstrip(".") if close else error.message
        raise UsageError(f"crashsweep: {keyword}: {message}{close}") from None
    except click.ClickException as error:
        raise UsageError(f"crashsweep: {error.format_message()}") from None


def _value_of(words: Sequence[str], option: str) -> str:
    """The value given to `option` last in `words` ("" when none)."""
    places = [i for i, word in enumerate(words[:-1]) if word == option]
    return words[places[-1] + 1] if places else ""


@contextmanager
def _input_errors() -> Iterator[None]:
    """Errors of what the arguments name (a bad job or design file) as UsageError, as the command line says them."""
    __tracebackhide__ = True
    try:
        yield
    except click.UsageError as error:
        raise UsageError(f"crashsweep: {error.format_message()}") from None
    except (JobError, PolicyError, ModelDefinitionError) as error:
        raise UsageError(f"crashsweep: {error}") from None


@dataclass(frozen=True)
class Explored:
    """An exploration's row and the shortest counterexample of each violated invariant."""

    row: Summary
    counterexamples: tuple[Counterexample, ...]

    @property
    def holds(self) -> bool:
        """Every invariant holds and every witness was seen."""
        return self.row.holds

    @property
    def shortest(self) -> Counterexample | None:
        """The shortest of the counterexamples (fewest steps; the model's order breaks ties), or None."""
        return min(self.counterexamples, key=lambda cx: len(cx.steps), default=None)

    def failure(self, program: Sequence[str] = PROGRAM) -> str:
        """Why the design fails: its shortest counterexample and replay command, or what was never exercised."""
        row = self.row
        head = f"{row.variant} (job {row.job}, tracker {row.tracker}, depth {row.depth})"
        cx = self.shortest
        if cx is None:
            unseen = ", ".join(f"{v.name} (witness {v.witness!r})" for v in row.invariants if not v.witnessed)
            return f"{head}: NEVER EXERCISED: {unseen}: the check proves nothing"
        size = plural(cx.crashes, "move" if cx.faults else "crash")
        return (
            f"{head}: {cx.invariant} VIOLATED: shortest counterexample: {size}, "
            f"{plural(len(cx.steps), 'step')}, path {cx.code}\n"
            f"replay: {replay_command(cx, program=program)}\n\n{trace.text(cx, program=program)}"
        )


@dataclass(frozen=True)
class Swept:
    """A real sweep's verdicts, read from its JUnit report: each failure's message and text (the re-run command)."""

    status: int
    failures: tuple[tuple[str, str], ...]
    report: str

    @property
    def holds(self) -> bool:
        """Every invariant the sweep decides held in every scenario."""
        return self.status == 0 and not self.failures


@_checked_call
def explore(
    variant: str | None = None,
    *,
    design: str | Path | None = None,
    job: str | Path | None = None,
    tracker: str = "keyed",
    depth: int = DEPTH,
    faults: Sequence[str] | str = (),
    call_ids: str = "stable",
    max_states: int = runs.DEFAULT_MAX_STATES,
) -> Explored:
    """Explore the design named `variant`, or the design file `design`, as `crashsweep explore` does.

    Each argument is checked as explore's option of the same name (a shipped job's or design's
    name works too); a bad one raises UsageError before anything is explored.
    """
    __tracebackhide__ = True
    if (variant is None) == (design is None):
        raise UsageError("crashsweep: give a variant name or design=FILE (one of them)")
    given: dict[str, object] = {"variant": variant, "design": design, "job": job, "tracker": tracker}
    given |= {"depth": depth, "faults": faults, "call_ids": call_ids, "max_states": max_states}
    context = _parsed(cli_main.explore, _words(given))
    params = context.params
    design_path: Path | None = params["design_path"]
    job_path: Path | None = params["job_path"]
    with context, _input_errors():
        chosen = cli_options.chosen_design(params["variant"], design_path)
        choices = cli_options.choices_of(params["depth"], job_path, params["tracker"], params["max_states"])
    exploration, row = runs.run(chosen, choices)
    found = shortest(
        exploration,
        variant=row.variant,
        job=row.job,
        job_file=None if job_path is None else artifacts.job_file(job_path),
        tracker=row.tracker,
        design_file=None if design_path is None else artifacts.job_file(design_path),
    )
    return Explored(row, tuple(found))


def check(variant: str | None = None, **options: Any) -> Explored:
    """Explore (the arguments of `explore`) and fail the running test unless every invariant holds."""
    explored = explore(variant, **options)
    if not explored.holds:
        pytest.fail(explored.failure(), pytrace=False)
    return explored


@_checked_call
def sweep(
    variant: str | None = None,
    *,
    design: str | Path | None = None,
    target: str | None = None,
    check: str | None = None,
    framework: str | None = None,
    args: Mapping[str, object] | None = None,
    job: str | Path | None = None,
    tracker: str = "keyed",
    depth: int = DEPTH,
    options: Sequence[str] = (),
) -> Swept:
    """Sweep for real (`crashsweep sweep`): a design, a framework's agent, or `target` checked by `check`.

    `options` are further `crashsweep sweep` options as words (e.g. ["--workers", "2"]). Every
    word is checked first by the sweep command's own parameters: a bad one raises UsageError
    before any process starts. A refusal of the sweep itself (exit 2) or an internal error
    fails the test with crashsweep's line: `check` is refused, or run in forks of the sweep's
    zygote, by the command line itself (crashsweep/cli/user_check.py), so exactly as it says.
    """
    __tracebackhide__ = True
    given: dict[str, object] = {"variant": variant, "design": design, "target": target, "check": check}
    given |= {"framework": framework, "job": job, "depth": depth, "tracker": tracker}
    words = _words(given)
    words += [word for key, value in (args or {}).items() for word in ("--arg", f"{key}={value}")]
    words += [*options, "--format", "junit"]
    _parsed(cli_sweep.sweep, words)
    status, report, said = _command(["sweep", *words])
    parsed = None
    if status in (0, 1):
        with contextlib.suppress(ET.ParseError):  # no report: the command stopped before one (a module exited)
            parsed = ET.fromstring(report)
    if parsed is None:
        last = said.strip().splitlines()
        pytest.fail(f"crashsweep sweep exited {status}: {last[-1] if last else ''}", pytrace=False)
    failures = tuple((element.get("message", ""), element.text or "") for element in parsed.iter("failure"))
    return Swept(status, failures, report)


_SESSION: list[ExitStack] = []
"""The test session's block of shared zygotes, from its first sweep to `session_ended` (at most one)."""


def _command(argv: list[str]) -> tuple[int, str, str]:
    """Run `python -m crashsweep ARGV`'s command line in this process: (exit status, stdout, stderr).

    As `python -m` does, the working directory comes first on sys.path while it runs (a target
    or check named `module:function` is found there), and only then. Ctrl-C (status 130) stops
    the test session, as it stops a command and the session that started it.
    """
    if not _SESSION:
        stack = ExitStack()
        stack.enter_context(api.shared_zygotes())
        _SESSION.append(stack)
    here = os.getcwd()
    added = here not in sys.path
    if added:
        sys.path.insert(0, here)
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            status = cli_main.main(argv, module=sys.executable)
    except SystemExit as exited:  # a module of the user's the command imported exited: the command would, too
        code = exited.code
        status = 0 if code is None else code if isinstance(code, int) else 1  # as the interpreter would exit
        if status == 1 and not isinstance(code, int):
            err.write(f"{code}\n")
    finally:
        if added and here in sys.path:
            sys.path.remove(here)
    if status == 130:
        raise KeyboardInterrupt(err.getvalue().strip())
    return status, out.getvalue(), err.getvalue()


def session_ended() -> None:
    """Stop the zygotes the session's sweeps kept (the plugin calls this when the session ends)."""
    while _SESSION:
        _SESSION.pop().close()


def check_sweep(variant: str | None = None, **options: Any) -> Swept:
    """Sweep (the arguments of `sweep`) and fail the running test unless every invariant it decides held."""
    swept = sweep(variant, **options)
    if not swept.holds:
        pytest.fail("\n".join(f"{message}\n{text}" for message, text in swept.failures), pytrace=False)
    return swept


@_checked_call
def state_machine(
    variant: str | None = None,
    *,
    design: str | Path | None = None,
    job: str | Path | None = None,
    tracker: str = "keyed",
    faults: Sequence[str] | str = (),
    call_ids: str = "stable",
    crashes: int = 8,
    steps: int = 150,
) -> type[ModelMachine[Any]]:
    """The hypothesis state machine `crashsweep fuzz` runs (a ModelMachine): `TestX = state_machine(...).TestCase`.

    Each argument is checked as fuzz's option of the same name. A failure raises the explorer's
    PropertyViolation, its message the run step by step and then the `crashsweep replay` command
    of the (shrunk) path, as fuzz prints it.
    """
    __tracebackhide__ = True
    if (variant is None) == (design is None):
        raise UsageError("crashsweep: give a variant name or design=FILE (one of them)")
    given: dict[str, object] = {"variant": variant, "design": design, "job": job, "tracker": tracker}
    given |= {"faults": faults, "call_ids": call_ids, "crashes": crashes, "steps": steps}
    context = _parsed(cli_fuzz.fuzz, _words(given))
    params = context.params
    with context, _input_errors():
        loop, read = cli_fuzz.fuzzed(params["variant"], params["design_path"], params["job_path"], params["tracker"])
    return cli_fuzz.machine(
        loop, read, params["job_path"], params["tracker"], params["design_path"], crashes=params["crashes"],
        steps=params["steps"],
    )  # fmt: skip
