"""The four files from-trace writes, as text: job.toml, design.toml, points.txt, cassette.jsonl.

Each is what its reader takes back unchanged: `--job` reads job.toml, `--design` design.toml,
`--points from:FILE` points.txt and `--cassette` cassette.jsonl (spec/FROM_TRACE.md section 4).
Comments say where each value came from; `write` puts all four in a folder, each written whole
(a temporary file renamed into place); the command writes over no file but its own.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from crashsweep.fromtrace import derive
from crashsweep.fromtrace.design import fields, unknown_writes
from crashsweep.fromtrace.recording import Recording
from crashsweep.spec import cassette
from crashsweep.spec.files import toml_value

NAMES = ("job.toml", "design.toml", "points.txt", "cassette.jsonl")
MADE_BY = "derived by `crashsweep from-trace`"
"""In the first line of each file but the cassette: a later from-trace may write over them."""
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(name: str) -> str:
    return name if _BARE.match(name) else json.dumps(name)


def _head(recording: Recording, what: str) -> list[str]:
    return [
        f"# {what}, {MADE_BY} from run {recording.run}",
        f"# ({recording.path.name}: {recording.spans} {recording.records}, {len(recording.replies)} model replies, "
        f"{len(recording.tools)} tool runs).",
    ]


def job_toml(recording: Recording) -> str:
    """The job the run played, a comment per call saying how its `writes` was read."""
    job = derive.job(recording)
    lines = _head(recording, "The job")
    lines += [
        f"name = {json.dumps(job.name)}",
        f"turns = {toml_value([[c.id for c in t] for t in job.turns])}",
        "",
        "[calls]",
    ]
    asked = {a.id: a for r in recording.replies for a in r.calls}
    for call in job.calls:
        table: dict[str, object] = {"tool": call.tool, "writes": call.writes}
        if call.approval:
            table["approval"] = True
        if call.args is not None:
            table["args"] = dict(call.args)
        _, decided, why = derive.writes(recording, asked[call.id])
        note = f"writes: {why}" if decided else f"writes NOT DECIDED: {why}"
        lines.append(f"{_key(call.id)} = {toml_value(table)}  # {note}")
    return "\n".join(lines) + "\n"


def design_toml(recording: Recording) -> str:
    """The draft design: every field with the spans it was read from, or NOT DECIDED and its choices."""
    found = fields(recording)
    undecided = [f.name for f in found if not f.decided]
    lines = _head(recording, "A draft design")
    lines += [
        "# A field marked NOT DECIDED is one this run could not show: the draft takes the value the",
        "# rules name (spec/FROM_TRACE.md); choose among the choices listed before relying on a verdict.",
        f"name = {json.dumps(recording.agent + '-from-trace' if recording.agent else 'from-trace')}",
        f"summary = {json.dumps('derived from one recorded run; not decided: ' + (', '.join(undecided) or 'none'))}",
    ]
    for field in found:
        lines.append(f"{field.name} = {toml_value(field.value)}")
        if field.decided:
            lines.append(f"  # read from: {field.why}")
        else:
            choices = ", ".join(toml_value(c) for c in field.choices)
            lines.append(f"  # NOT DECIDED: {field.why}; one of {choices}")
    unknown = unknown_writes(recording)
    if unknown:
        lines.append(f"# job.toml assumes these calls write (nothing in the trace says): {', '.join(unknown)}")
    return "\n".join(lines) + "\n"


def points_txt(recording: Recording) -> str:
    """The crash points the run passed, `NAME#PASS` a line, for `sweep --points from:FILE`."""
    named = derive.points(recording)
    lines = _head(recording, f"The {len(named)} crash points the run passed")
    if not named:
        lines.append(f"# none: the {recording.records} record no crash points; see spec/FROM_TRACE.md 2")
    return "\n".join([*lines, *named]) + "\n"


def replies(recording: Recording) -> cassette.Cassette:
    """The model's replies as a cassette; an argument equal to a value of an earlier reply's result refers to it."""
    found: dict[tuple[type, Any], cassette.Ref] = {}  # each value's first place: the earliest call, the shallowest
    asks = []
    for reply in recording.replies:
        calls = []
        for asked in reply.calls:
            arguments = asked.arguments if isinstance(asked.arguments, dict) else {}
            args = tuple((k, found.get((type(v), v), v) if _referable(v) else v) for k, v in arguments.items())
            calls.append(cassette.CassetteCall(asked.id, asked.tool, args))
        asks.append(cassette.Ask(tuple(calls), reply.final))
        for asked in reply.calls:  # the model reads these results before its next reply, not in this one
            ran = recording.ran(asked.id)
            if ran is not None and ran.result is not None:
                for path, value in _leaves(_parsed(ran.result), ()):
                    if _referable(value):
                        found.setdefault((type(value), value), cassette.Ref(asked.id, path, value))
    return cassette.Cassette(tuple(asks))


def _referable(value: Any) -> bool:
    """A value an argument may take from a result: a whole number, or a string of 2 or more characters."""
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and len(value) >= 2)


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _leaves(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """(path, scalar) of every scalar in a JSON value, shallowest first."""
    if isinstance(value, dict):
        items: list[tuple[str | int, Any]] = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        yield path, value
        return
    for key, item in items:
        if not isinstance(item, dict | list):
            yield (*path, key), item
    for key, item in items:
        if isinstance(item, dict | list):
            yield from _leaves(item, (*path, key))


def texts(recording: Recording) -> dict[str, str]:
    """The four files' names and texts."""
    return {
        "job.toml": job_toml(recording),
        "design.toml": design_toml(recording),
        "points.txt": points_txt(recording),
        "cassette.jsonl": cassette.dumps(replies(recording)),
    }


def write(folder: Path, written: Mapping[str, str]) -> None:
    """Each file into `folder` (made if missing), whole: a temporary file, fsynced, renamed into place."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in written.items():
        temporary = folder / f".{name}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, folder / name)
