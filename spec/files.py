"""Reading a user's input file (a job, a design): one reader, so every kind is refused alike.

A user's file is read only when it is a regular file of at most `MAX_BYTES` of UTF-8 (a
leading byte-order mark, which some editors write, is dropped), and parsed as TOML with a
nesting too deep for the parser refused as such. It is opened without blocking and checked
before it is read, so a FIFO hangs nothing, a device such as /dev/zero fills no memory, and a
huge file is refused at once. Each problem is one line naming the file, raised as the
caller's own error class (JobError, PolicyError), so each command reports it as it reports
its other bad input.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
import unicodedata
from pathlib import Path
from typing import Any

MAX_BYTES = 16 << 20
"""The largest input file read (16 MiB), bounded by what the explorer can hold of a job.

A call takes about 60 bytes of a job's TOML, so 16 MiB is some 280,000 calls: a 100,000-call
job (6 MB) is read, and past the bound the search of a job, at depth 1 some 20 to 35 stored
states a call, outgrows the memory of a machine of 16 GB. A design file is a short script,
far below; a device, a FIFO or an endless file is refused before anything is read.
"""
BYTES_PER_CALL = 60
"""About how many bytes of TOML a call of a job takes (a generated job's `[calls]` line and its ID)."""


def read_text(path: Path, what: str, error: type[Exception]) -> str:
    """The text of the `what` file at `path` ("job file", "design file"); `error` for any problem."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as problem:
        raise error(f"{path}: cannot read {what}: {problem.strerror or problem}") from None
    mode = os.fstat(handle).st_mode
    if not stat.S_ISREG(mode):
        os.close(handle)
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a device, FIFO or socket)"
        raise error(f"{path}: cannot read {what}: it is {kind}")
    with os.fdopen(handle, "rb") as file:
        data = file.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise error(f"{path}: {what} larger than {MAX_BYTES // 1024} KiB; {_why_bounded(what)}")
    try:
        return data.decode("utf-8-sig")  # "-sig": a byte-order mark some editors write is dropped
    except UnicodeDecodeError as problem:
        line = data[: problem.start].count(b"\n") + 1  # the line of the first byte that is not UTF-8
        raise error(f"{path}:{line}: not UTF-8 text") from None


def _why_bounded(what: str) -> str:
    """Why a file of `what` ("job file", "design file") past MAX_BYTES is refused."""
    kind = what.split()[0]
    if kind == "points":
        return "no run passes that many points"
    if kind != "job":
        return f"a {kind} is a short script"
    calls = MAX_BYTES // BYTES_PER_CALL
    return f"that is over some {calls:,} calls, more than the explorer can hold in memory"


def read_toml(path: Path, what: str, error: type[Exception]) -> dict[str, Any]:
    """The TOML table of the `what` file at `path`, read as `read_text` reads it; `error` for any problem."""
    text = read_text(path, what, error)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as problem:
        raise error(f"{path}: not valid TOML: {' '.join(str(problem).split())}") from None
    except RecursionError:
        raise error(f"{path}: not usable TOML: nested too deeply") from None


NAME_MAX = 100
"""The longest name a job or design may have: names become file names (`view`'s folder, at most
255 bytes) and table rows."""


UNSEEN = ("Cc", "Cs", "Cf", "Zl", "Zp")
"""Unicode categories a name may not hold: control characters (NUL, a newline...) break every report;
format characters and line or paragraph separators (U+202E that reverses the text after it, U+2028,
the zero-width U+200B..U+200D, U+2060, U+FEFF) are invisible or reorder it, so that two names that
look alike differ, or a name reads as another."""


def printable(where: str, value: str, error: type[Exception]) -> str:
    """`value`, unless it holds a control, invisible or text-reordering character (`UNSEEN`)."""
    bad = next((char for char in value if unicodedata.category(char) in UNSEEN), None)
    if bad is not None:
        what = "control" if unicodedata.category(bad) in ("Cc", "Cs") else "invisible or reordering"
        raise error(f"{where}: contains the {what} character U+{ord(bad):04X}; use printable text")
    return value


def name(where: str, value: object, error: type[Exception]) -> str:
    """A job's or design's name: a non-empty, printable string of at most NAME_MAX characters."""
    if not isinstance(value, str) or not value.strip():
        raise error(f"{where}: expected a non-empty string")
    if len(value) > NAME_MAX:
        raise error(f"{where}: {len(value)} characters long; a name has at most {NAME_MAX}")
    return printable(where, value, error)


def toml_value(value: object) -> str:
    """`value` written as TOML: a string, boolean or number as JSON writes it, a list, a table inline.

    The one writer of a design file's values (`design show`, the frontier's cheapest.toml), so
    whatever a policy holds, the file written reads back as the same policy.
    """
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + " }"
    return json.dumps(value)
