"""Tests of crashsweep.spec.files: one reader for a user's job and design files, refusing alike.

Each case runs through both public readers (spec.job.load_job, spec.policy.read_design_file):
before one reader served both, a design file read a symlink to /dev/zero until memory ran out,
hung on a FIFO, read a 60 MB file, raised RecursionError on deep nesting, refused a UTF-8 BOM
with an unclear message and took a newline or NUL in its name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from crashsweep.spec.files import MAX_BYTES, NAME_MAX
from crashsweep.spec.job import JobError, load_job
from crashsweep.spec.policy import PolicyError, read_design_file

JOB = 'name = "one"\nturns = [["w"]]\n\n[calls]\nw = { tool = "create_issue", writes = true }\n'
DESIGN = (
    'name = "mine"\nstartup_save = true\nreply_save = "before-first-send"\nresult_saves = "each-call"\n'
    'markers = "none"\nkeys = "run-call"\nlock = "none"\nladder = []\non_tool_error = "retry"\n'
)
Reader = Callable[[Path], object]
READERS: list[tuple[str, Reader, type[Exception], str]] = [
    ("job", load_job, JobError, JOB),
    ("design", read_design_file, PolicyError, DESIGN),
]
readers = pytest.mark.parametrize(("read", "error", "good"), [r[1:] for r in READERS], ids=[r[0] for r in READERS])


@readers
def test_a_good_file_is_read(tmp_path: Path, read: Reader, error: type[Exception], good: str) -> None:
    path = tmp_path / "f.toml"
    path.write_text(good, encoding="utf-8")
    read(path)


@readers
def test_a_byte_order_mark_is_dropped(tmp_path: Path, read: Reader, error: type[Exception], good: str) -> None:
    path = tmp_path / "f.toml"
    path.write_text(good, encoding="utf-8")
    plain = read(path)
    path.write_bytes(b"\xef\xbb\xbf" + good.encode("utf-8"))
    assert read(path) == plain


@readers
def test_anything_but_a_small_regular_file_is_refused(
    tmp_path: Path, read: Reader, error: type[Exception], good: str
) -> None:
    """A directory, a FIFO with no writer (it would block), a link to /dev/zero (endless), a 60 MB file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.toml"
    zero.symlink_to("/dev/zero")
    huge = tmp_path / "huge.toml"
    huge.write_bytes(good.encode("utf-8") + b"#" * (60 << 20) + b"\n")
    cases = [(tmp_path, "it is a directory"), (fifo, "not a regular file"), (zero, "not a regular file")]
    for path, message in [*cases, (huge, f"larger than {MAX_BYTES // 1024} KiB")]:
        with pytest.raises(error, match=message):
            read(path)


@readers
def test_a_file_at_the_limit_is_read(tmp_path: Path, read: Reader, error: type[Exception], good: str) -> None:
    path = tmp_path / "limit.toml"
    path.write_bytes(good.encode("utf-8") + b"#" * (MAX_BYTES - len(good) - 1) + b"\n")
    assert path.stat().st_size == MAX_BYTES
    read(path)


@readers
def test_deep_nesting_is_one_line(tmp_path: Path, read: Reader, error: type[Exception], good: str) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(good + "deep = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(error, match="nested too deeply"):
        read(path)


@readers
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a\\nb", "name: contains the control character U+000A"),
        ("a\\u0000b", "name: contains the control character U+0000"),
        ("evil\\u202Etxt.exe", "name: contains the invisible or reordering character U+202E"),
        ("a\\u2028b", "name: contains the invisible or reordering character U+2028"),
        ("a\\u200Bb", "name: contains the invisible or reordering character U+200B"),
        ("a\\u200Db", "name: contains the invisible or reordering character U+200D"),
        ("a\\u2060b", "name: contains the invisible or reordering character U+2060"),
        ("a\\uFEFFb", "name: contains the invisible or reordering character U+FEFF"),
        ("x" * (NAME_MAX + 1), f"name: {NAME_MAX + 1} characters long; a name has at most {NAME_MAX}"),
        ("  ", "name: expected a non-empty string"),
    ],
)
def test_a_bad_name_is_refused(
    tmp_path: Path, read: Reader, error: type[Exception], good: str, name: str, message: str
) -> None:
    """A newline or NUL would split a table row; a name longer than a file name allows breaks `view`."""
    path = tmp_path / "named.toml"
    path.write_text(re.sub(r'^name = ".*"$', lambda _: f'name = "{name}"', good, count=1, flags=re.M), encoding="utf-8")
    with pytest.raises(error, match=re.escape(message)) as caught:
        read(path)
    assert "\n" not in str(caught.value)


def test_a_name_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "long.toml"
    path.write_text(DESIGN.replace('"mine"', '"' + "x" * NAME_MAX + '"'), encoding="utf-8")
    assert read_design_file(path)[0] == "x" * NAME_MAX


def test_a_design_file_value_is_written_as_toml_that_reads_back() -> None:
    """toml_value: strings, booleans, lists and inline tables (a retry stack) round-trip through tomllib."""
    import tomllib

    from crashsweep.spec.files import toml_value

    values = {
        "name": 'a "quoted" name',
        "startup_save": False,
        "ladder": ["lookup", "person"],
        "retries": [
            {"scope": "call", "on": "error", "attempts": 3},
            {"scope": "run", "on": "timeout", "attempts": "unbounded"},
        ],
    }
    text = "\n".join(f"{key} = {toml_value(value)}" for key, value in values.items())
    assert tomllib.loads(text) == values


def _long_job(calls: int) -> str:
    """A job of `calls` calls in turns of four, every third a read: the benchmark's generated job as TOML."""
    ids = [f"c{n:06d}" for n in range(1, calls + 1)]
    turns = ",\n".join("  [" + ", ".join(f'"{c}"' for c in ids[i : i + 4]) + "]" for i in range(0, calls, 4))
    lines = (
        f'{c} = {{ tool = "{"search_issues" if n % 3 == 0 else "create_issue"}", writes = {str(n % 3 != 0).lower()} }}'
        for n, c in enumerate(ids, start=1)
    )
    return f'name = "long"\nturns = [\n{turns}\n]\n\n[calls]\n' + "\n".join(lines) + "\n"


def test_a_job_of_a_hundred_thousand_calls_is_read(tmp_path: Path) -> None:
    """The bound is what the explorer can hold, not a short script: a 100,000-call job (6 MB) is read whole."""
    path = tmp_path / "long.toml"
    path.write_text(_long_job(100_000), encoding="utf-8")
    assert 6 << 20 < path.stat().st_size < MAX_BYTES
    job = load_job(path)
    assert len(job.calls) == 100_000
    assert len(job.writes) == 100_000 - 100_000 // 3


def test_a_job_past_the_bound_says_why(tmp_path: Path) -> None:
    """Past the bound, the message says it is more than the explorer can hold (a design: a short script)."""
    path = tmp_path / "huge.toml"
    path.write_bytes(JOB.encode("utf-8") + b"#" * MAX_BYTES + b"\n")
    with pytest.raises(JobError, match=r"larger than \d+ KiB; that is over some [\d,]+ calls, more than the explorer"):
        load_job(path)
    with pytest.raises(PolicyError, match=r"larger than \d+ KiB; a design is a short script"):
        read_design_file(path)
