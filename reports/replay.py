"""How to re-run a counterexample: the `crashsweep replay` command line and a pytest snippet.

The command carries everything the path code depends on (variant, depth, job file, tracker,
faults and call IDs);
the snippet is a complete test module that replays the same path with the model's own step
function and asserts the violation, word for word.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence

from crashsweep.reports.counterexample import Counterexample


def _lit(text: str) -> str:
    """A Python string literal of `text` (a JSON string is one, in double quotes)."""
    return json.dumps(text, ensure_ascii=False)


PROGRAM = ("crashsweep",)
"""How a user runs crashsweep when it is installed; the CLI passes the name the user typed."""


def replay_command(cx: Counterexample, *, pytest: bool = False, program: Sequence[str] = PROGRAM) -> str:
    """The command line that replays `cx` (with `--pytest`, the one that prints the snippet).

    `program` is the command that runs crashsweep, as words: `crashsweep` when installed,
    `bin/crashsweep` in a checkout, `python -m crashsweep`.
    """
    return command_line(
        cx.variant,
        cx.depth,
        cx.tracker,
        cx.code,
        job_file=cx.job_file,
        design_file=cx.design_file,
        faults=cx.faults,
        fresh_ids=cx.fresh_ids,
        upgrade=cx.upgrade,
        invariant=cx.invariant if cx.named else None,
        pytest=pytest,
        program=program,
    )


def command_line(
    variant: str,
    depth: int,
    tracker: str,
    code: str,
    *,
    job_file: str | None = None,
    design_file: str | None = None,
    faults: Sequence[str] = (),
    fresh_ids: bool = False,
    upgrade: str | None = None,
    invariant: str | None = None,
    pytest: bool = False,
    program: Sequence[str] = PROGRAM,
) -> str:
    """The replay command of path `code` from what it depends on (a row's fields, where no counterexample is built).

    `replay_command` is this with a counterexample's fields: one spelling for every command printed.
    `invariant`: the one replay is to judge, given only when it is not the first the path's end
    violates (replay judges that one unless told).
    """
    which = ["--design", design_file] if design_file is not None else ["--variant", variant]
    words = [*program, "replay", *which, "--depth", str(depth)]
    if job_file is not None:
        words += ["--job", job_file]
    words += ["--tracker", tracker]
    if faults:
        words += ["--faults", ",".join(faults)]
    if fresh_ids:
        words += ["--call-ids", "fresh"]
    if upgrade is not None:
        words += ["--upgrade-to", upgrade]
    words += ["--path", code]
    if invariant is not None:
        words += ["--invariant", invariant]
    if pytest:
        words.append("--pytest")
    return shlex.join(words)


def function_name(cx: Counterexample) -> str:
    """A test function name for `cx`, such as test_save_after_reply_violates_no_duplicate."""
    what = f"violates_{cx.invariant}" if cx.violated and cx.invariant else "keeps_every_invariant"
    return re.sub(r"\W+", "_", f"test_{cx.variant}_{what}".replace("-", "_")).strip("_")


def _file(given: str, kind: str) -> str:
    """The Python expression of the file a replay names: an absolute path as it is, else found as the CLI finds it.

    A shipped job's or design's name (or docs path) is looked up in the installed package, so the
    test runs on any machine (crashsweep.cli.shipped.find: a file of that path comes first).
    """
    if given.startswith("/"):
        return f"Path({_lit(given)})"
    return f"find({_lit(given)}, {_lit(kind)})"


def _finds(cx: Counterexample) -> bool:
    """Whether the snippet of `cx` looks a file up by name (`_file`)."""
    return any(given is not None and not given.startswith("/") for given in (cx.job_file, cx.design_file))


def pytest_snippet(cx: Counterexample) -> str:
    """A runnable pytest module that replays `cx` and asserts what its end shows."""
    if cx.job_file is None:
        job_import, job = ["from crashsweep.spec.job import TRIAGE"], "TRIAGE"
    else:
        job_import, job = ["from crashsweep.spec.job import load_job"], f"load_job({_file(cx.job_file, 'job')})"
    design = _lit(cx.variant)
    upgrade_file = cx.upgrade is not None and cx.upgrade.endswith(".toml")  # else a design's name
    if cx.design_file is not None:
        design = f"load_design({_file(cx.design_file, 'design')}).design"
    paths = upgrade_file or any(given is not None and given.startswith("/") for given in (cx.job_file, cx.design_file))
    stdlib = ["from pathlib import Path", ""] if paths else []
    head = [
        f'"""Replays crashsweep\'s path {cx.code} of {cx.variant} (depth {cx.depth}, tracker {cx.tracker})."""',
        "",
        *stdlib,
        *(["from crashsweep.cli.shipped import find"] if _finds(cx) else []),
        "from crashsweep.explorer import replay",
        *job_import,
        "from crashsweep.spec.tracker import TRACKERS",
        "from crashsweep.variants import model",
        *(["from crashsweep.variants.design_file import load_design"] if cx.design_file or upgrade_file else []),
        "",
        "",
        f"def {function_name(cx)}() -> None:",
    ]
    environment = ""
    if cx.faults:
        environment += f", faults=({''.join(_lit(kind) + ', ' for kind in cx.faults).rstrip()})"
    if cx.fresh_ids:
        environment += ", fresh_ids=True"
    if cx.upgrade is not None:
        then = f"load_design(Path({_lit(cx.upgrade)})).design" if upgrade_file else _lit(cx.upgrade)
        environment += f", upgrade={then}"
    body = [
        f"loop = model({design}, {job}, TRACKERS[{_lit(cx.tracker)}]{environment})",
        f"path = replay(loop, {cx.depth}, {_lit(cx.code)})",
        f"assert path.crashes == {cx.crashes}",
    ]
    if cx.violated and cx.invariant is not None:
        head.append(f'    """Replaying the path ends in a violation of {cx.invariant}."""')
        body += [f"invariant = next(p for p in loop.properties if p.name == {_lit(cx.invariant)})"]
        if cx.invariant_kind == "at_end":
            body.append("assert loop.is_finished(path.end)")
        body += [
            "assert not invariant.check(path.end)",
            "assert invariant.explain is not None",
            f"assert invariant.explain(path.end) == {_lit(cx.violation)}",
        ]
    else:
        head.append('    """Replaying the path violates no invariant."""')
        body += [
            "for invariant in loop.properties:",
            '    if invariant.kind == "always" or (invariant.kind == "at_end" and loop.is_finished(path.end)):',
            "        assert invariant.check(path.end), invariant.name",
        ]
    return "\n".join(head + [f"    {line}" for line in body]) + "\n"
