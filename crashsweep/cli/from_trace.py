"""`crashsweep from-trace TRACE --out DIR`: one recorded run becomes a job, a draft design, its points and a cassette.

The run is read whole and judged usable before anything is written (crashsweep.fromtrace;
spec/FROM_TRACE.md): a file that is not one uninterrupted run is one line on stderr and exit 2,
and DIR is left as it was. The four files are written whole, over none but those an earlier from-trace wrote in DIR.
The commands printed after them run as printed (tests/cli/test_from_trace.py runs them).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from crashsweep.cli import prog
from crashsweep.fromtrace import derive, files
from crashsweep.fromtrace.design import fields
from crashsweep.fromtrace.readers import READERS
from crashsweep.fromtrace.recording import Recording, TraceError
from crashsweep.importers.registry import KINDS

EPILOG = (
    "TRACE is one run that finished uninterrupted: OpenTelemetry spans as OTLP JSON (the SDK's or the collector's"
    " file exporter) with the model's replies captured (gen_ai.output.messages), a DBOS system database, a"
    " LangGraph SQLite checkpoint database or a Temporal history JSON (spec/FROM_TRACE.md 2). Exit status: 0 when"
    " the four files are written, 2 for a trace or folder that cannot be used (nothing written)."
)


@click.command(name="from-trace", epilog=EPILOG)
@click.argument("trace", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="the folder to write job.toml, design.toml, points.txt and cassette.jsonl into",
)
def from_trace(trace: Path, out: Path) -> int:
    """Derive a job, a draft design, the crash points and a cassette of the model's replies from one recorded run."""
    try:
        _usable_out(out)
        recording = _recording(trace)
        written = files.texts(recording)
    except TraceError as error:
        click.echo(f"crashsweep: error: {error}", err=True)
        return 2
    files.write(out, written)
    click.echo(summary(recording, out))
    return 0


def _usable_out(out: Path) -> None:
    """DIR may be missing, or a folder whose files of the four names from-trace wrote; else TraceError (one line)."""
    if out.exists() and not out.is_dir():
        raise TraceError(f"--out {out}: not a folder")
    theirs = [name for name in files.NAMES if (out / name).exists() and not _ours(out, name)]
    if theirs:
        raise TraceError(
            f"--out {out}: already holds {', '.join(theirs)}, not written by from-trace: it writes over "
            "nothing else (choose another folder or remove them)"
        )


def _ours(out: Path, name: str) -> bool:
    """Whether DIR's file `name` is from-trace's (its first line says so; a cassette, when the job beside it is)."""
    if name == "cassette.jsonl":
        return (out / "job.toml").exists() and _ours(out, "job.toml")
    try:
        with open(out / name, encoding="utf-8") as handle:
            return files.MADE_BY in handle.readline()
    except (OSError, UnicodeDecodeError):
        return False


def _recording(trace: Path) -> Recording:
    """The run, or TraceError naming what TRACE is when it is a record of another kind."""
    if trace.is_dir() or not trace.exists():
        raise TraceError(f"{trace}: {'a folder' if trace.is_dir() else 'no such file'}: TRACE is one file of records")
    try:
        with open(trace, "rb") as handle:
            head = handle.read(65_536)
    except OSError as error:
        raise TraceError(f"{trace}: cannot be read ({error.strerror})") from None
    kind = next((k for k in KINDS if k.recognises(trace, head)), None)
    if kind is None:
        return READERS["otlp"](trace)  # spans or nothing: the OTLP reader says what is wrong where
    if kind.name not in READERS:
        raise TraceError(
            f"{trace}: a {kind.name} record ({kind.summary}): from-trace reads {', '.join(READERS)}; "
            "`crashsweep audit` judges this record"
        )
    return READERS[kind.name](trace)


def summary(recording: Recording, out: Path) -> str:
    """What was derived, and the commands that explore and sweep it (each runs as printed).

    A run of a loop that traces its saves and calls the tracker's tools (the reference loop's)
    is swept as the draft design; any other program is swept as itself, given the cassette.
    """
    job = derive.job(recording)
    found = fields(recording)
    undecided = [f.name for f in found if not f.decided]
    points = derive.points(recording)
    where = {name: str(out / name) for name in files.NAMES}
    lines = [
        f"{recording.path.name}: one run, {recording.spans} {recording.records}",
        f"  job.toml        job {job.name}: {len(job.turns)} turns, {len(job.calls)} calls, "
        f"{len(job.writes)} writes, {len(job.gated)} gated",
        f"  design.toml     {_count(len(found) - len(undecided), 'field')} read from {recording.records}, "
        f"{len(undecided)} not decided" + (f" ({', '.join(undecided)})" if undecided else ""),
        f"  points.txt      {_count(len(points), 'crash point')} passed",
        f"  cassette.jsonl  {_count(len(recording.replies), 'model reply', 'model replies')}",
        "explore the draft:  "
        + shlex.join([*prog.current(), "explore", "--design", where["design.toml"], "--job", where["job.toml"]]),
    ]
    traced = recording.records == "spans" and recording.of("save")  # the reference loop's own trace
    if traced and job.calls and all(c.tool in derive.TRACKER_TOOLS for c in job.calls):
        sweep = [*prog.current(), "sweep", "--design", where["design.toml"], "--job", where["job.toml"]]
        lines.append("sweep it for real:  " + shlex.join([*sweep, "--points", "from:" + where["points.txt"]]))
    else:
        lines.append(
            f"sweep your program: add --cassette {shlex.quote(where['cassette.jsonl'])} and --points "
            f"{shlex.quote('from:' + where['points.txt'])} to its `crashsweep sweep` command"
        )
    return "\n".join(lines)


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"
