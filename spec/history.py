"""One History: what happened in one or more runs, as events every invariant reads (spec/HISTORY.md).

The explorer (a state of the model, spec/projection.py), the real sweep (one scenario's records)
and a recorded run each give a `History`; the invariant values (spec/invariants/) judge it, so a
duplicate in a production trace and a duplicate in a swept scenario are one rule. Events follow
Jepsen's histories: `invoke` (asked), `ok` (done), `fail` (certainly not done), `info` (outcome
unknown). The JSONL form is a header line (the version, what the run must do, which facts the
producer saw) and one event a line; `read` refuses a malformed line with its number.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any

VERSION = 1
"""The JSONL form's version (the header's `crashsweep_history`)."""
TYPES = ("invoke", "ok", "fail", "info")
FS = (
    "model_call",
    "tool_call",
    "effect",
    "result_saved",
    "approval_request",
    "approval_grant",
    "approval_redeem",
    "checkpoint",
    "run_status",
    "tool_run",
)
"""What an event is: a request to the model, a tool call the model asked for, an effect at the
receiver, a tool result saved into the conversation, an approval asked/given/redeemed, a save,
the run's status (`finished`, `stuck`, ...), one attempt of a tool's body (a tool span: started,
returned, raised, or its outcome unknown)."""
FACTS = ("effects", "transcript", "approvals", "status")
"""The families of facts a producer may have seen: the receiver's effects, the conversation sent
to the model, the approvals, how each run ended. An invariant that needs a family the history
lacks is not decided on it (spec/HISTORY.md 3)."""
KEPT = "history.jsonl"
"""A kept scenario's history in its folder (`sweep --keep`), which `audit FOLDER` looks for."""
FINISHED = "finished"
STUCK = "stuck"
FAILED = "failed"
CANCELLED = "cancelled"
DIVERGED = "diverged"
"""A run's statuses: finished; stuck (it can never go on); declared failed or cancelled by its
runtime; diverged (a replay found other steps than the history it replays: Temporal's
nondeterminism)."""
STATUSES = (FINISHED, STUCK, FAILED, CANCELLED, DIVERGED)


def args_digest(arguments: object) -> str:
    """A tool call's arguments as one `args_digest`: "sha256:" and 16 hex digits of their canonical JSON.

    Every producer digests alike, so one call's arguments give one digest whoever recorded them
    (a span's captured text, a session's JSON text, a checkpoint's dict): a JSON text is parsed
    first, then written with sorted keys and no spaces; text that is not JSON is digested as it is.
    """
    if isinstance(arguments, str):
        text = arguments
        try:
            arguments = json.loads(text)
        except ValueError:
            return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


class HistoryError(ValueError):
    """A history that cannot be read: the message names the line and what is wrong with it."""


@dataclass(frozen=True, slots=True)
class Event:
    """One event: who wrote it (run, incarnation, seq), its type and f, and what it is about."""

    run: str
    incarnation: int
    seq: int
    type: str
    f: str
    call: str = ""
    """The logical call (the job's call, e.g. create_a), the same across retries and restarts."""
    call_id: str = ""
    """The model's ID of the tool call, when the producer has one."""
    tool: str = ""
    args_digest: str = ""
    """The arguments' digest or version ("v2": the second version of the call's arguments)."""
    key: str = ""
    effect_id: str = ""
    approval: str = ""
    """An approval's entry, `call@version#number` (spec/entries.py): the one given, or the one an effect carried."""
    status: str = ""
    detail: str = ""
    """Words for a person: why a request was refused, why a run is stuck."""
    src: str = ""
    """Where the event came from: "model", "tracker", "checkpoint", "session", or a place in a
    recorded file ("traces.jsonl:span 5b8e...", "checkpoints.sqlite:checkpoint 1ef...")."""
    time: float = 0.0
    """When it happened, in seconds since the epoch, where the producer knows (0: not known);
    importers merge several sources of one run by it (spec/HISTORY.md 7)."""

    def to_json(self) -> dict[str, Any]:
        """The event as one JSON object: its fields, the empty ones left out."""
        data: dict[str, Any] = {"run": self.run, "incarnation": self.incarnation, "seq": self.seq}
        data |= {"type": self.type, "f": self.f}
        for name in _OPTIONAL:
            value = getattr(self, name)
            if value:
                data[name] = value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Event:
        """The event of one JSON object; HistoryError (without a line number) for what is wrong.

        Written for speed (an audit reads a million events): one pass over the object's fields,
        checks by exact type (JSON gives no subclasses), the message worked out only on error.
        """
        if not data.keys() <= _ALLOWED:
            raise HistoryError(f"unknown field {sorted(data.keys() - _ALLOWED)[0]!r}")
        if not data.keys() >= _REQUIRED:
            missing = [name for name in ("run", "incarnation", "seq", "type", "f") if name not in data]
            raise HistoryError(f"missing field {missing[0]!r}")
        for name, value in data.items():
            kind = _KINDS.get(name)
            if kind is not None and type(value) is not kind:
                _refuse(name, value)
        if data["type"] not in _TYPES:
            raise HistoryError(f"type {data['type']!r}: expected one of {', '.join(TYPES)}")
        if data["f"] not in _FS:
            raise HistoryError(f"f {data['f']!r}: expected one of {', '.join(FS)}")
        if data["incarnation"] < 0 or data["seq"] < 0:
            _refuse("incarnation" if data["incarnation"] < 0 else "seq", -1)
        given = dict(data)
        given.pop("v", None)
        if "time" in given:
            when = given["time"]
            if type(when) is int:
                given["time"] = when = float(when)
            if type(when) is not float or not 0 <= when < float("inf"):
                raise HistoryError(f"time {when!r}: expected seconds since the epoch, 0 or more")
        return cls(**given)


def _refuse(name: str, value: object) -> None:
    """The HistoryError for field `name` of the wrong type (or a negative count)."""
    if name in ("incarnation", "seq"):
        raise HistoryError(f"{name} {value!r}: expected a whole number, 0 or more")
    if name != "time":
        raise HistoryError(f"{name} {value!r}: expected a string")


_NAMES = frozenset(f.name for f in fields(Event))
_OPTIONAL = tuple(f.name for f in fields(Event) if f.name not in ("run", "incarnation", "seq", "type", "f"))
_STRINGS = ("run", "type", "f", *(name for name in _OPTIONAL if name != "time"))
_ALLOWED = _NAMES | {"v"}
_REQUIRED = frozenset({"run", "incarnation", "seq", "type", "f"})
_KINDS: dict[str, type] = {name: str for name in _STRINGS} | {"incarnation": int, "seq": int}
"""The exact JSON type of each field (`time` is checked apart: an int or a float)."""
_TYPES = frozenset(TYPES)
_FS = frozenset(FS)


@dataclass(frozen=True, slots=True)
class History:
    """Events in the order they happened, and what the run must do and which facts were seen.

    `expected`: the writes the run must apply once finished (no-loss); `gated`: the writes that
    need a person's approval (approved-exactly); `facts`: the families of facts the producer
    recorded (FACTS); `unseen`: for a family it could not see, why (the row's "not decided").
    """

    events: tuple[Event, ...] = ()
    expected: tuple[str, ...] = ()
    gated: tuple[str, ...] = ()
    facts: frozenset[str] = frozenset(FACTS)
    unseen: Mapping[str, str] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.events, self.expected, self.gated, self.facts, tuple(sorted(self.unseen.items()))))

    def of(self, f: str) -> tuple[Event, ...]:
        """The events that are `f`, in order."""
        return tuple(event for event in self.events if event.f == f)

    def missing(self, needs: Iterable[str]) -> str | None:
        """Why this history cannot decide what needs the facts `needs`; None when it can."""
        for fact in needs:
            if fact not in self.facts:
                return self.unseen.get(fact, f"the history has no {fact}")
        return None

    def header(self) -> dict[str, Any]:
        """The JSONL form's first line."""
        data: dict[str, Any] = {"crashsweep_history": VERSION, "expected": list(self.expected)}
        data |= {"gated": list(self.gated), "facts": sorted(self.facts)}
        if self.unseen:
            data["unseen"] = dict(sorted(self.unseen.items()))
        return data

    def to_jsonl(self) -> str:
        """The history as JSONL: its header, then one event a line."""
        lines = [self.header(), *({"v": VERSION, **event.to_json()} for event in self.events)]
        return "".join(json.dumps(line, sort_keys=False) + "\n" for line in lines)


def write(history: History, path: Path) -> None:
    """Write `history` to `path` whole or not at all (a temporary file, then a rename)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(history.to_jsonl(), encoding="utf-8")
    tmp.replace(path)


MAX_LINE = 16 * 1024 * 1024
"""The longest line a reader takes, in bytes: a longer one is refused, not read into memory."""


def read(path: Path) -> History:
    """The history in the JSONL file `path`; HistoryError naming the file and line of the first bad line."""
    try:
        with path.open("rb") as file:
            return _parse(_lines(file))
    except OSError as error:
        raise HistoryError(f"{path}: cannot be read ({error.strerror or error})") from None
    except HistoryError as error:
        raise HistoryError(f"{path}:{error}") from None


def _lines(file: IO[bytes]) -> Iterator[str]:
    """The file's lines as text, each read with a cap: HistoryError "LINE: ..." for one too long or not UTF-8."""
    number = 0
    while line := file.readline(MAX_LINE + 1):
        number += 1
        if len(line) > MAX_LINE:
            raise HistoryError(f"{number}: a line longer than {MAX_LINE // (1024 * 1024)} MiB: not an event")
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise HistoryError(f"{number}: not UTF-8 (byte {error.start + 1})") from None


def parse(text: str) -> History:
    """The history of JSONL `text`; HistoryError "LINE: what is wrong" for the first bad line."""
    return _parse(iter(text.splitlines()))


def _parse(lines: Iterator[str]) -> History:
    first = next(lines, "")
    if not first.strip():
        raise HistoryError('1: expected the header line {"crashsweep_history": 1, ...}')
    header = _header(_object(first, 1))
    events: list[Event] = []
    last = 0
    for number, line in enumerate(lines, 2):
        if not line.strip():
            continue
        data = _object(line, number)
        if data.get("v", VERSION) != VERSION:
            raise HistoryError(f"{number}: version {data['v']!r}: this reader knows version {VERSION}")
        try:
            event = Event.from_json(data)
        except (HistoryError, TypeError) as error:
            raise HistoryError(f"{number}: {error}") from None
        if event.seq and event.seq <= last:
            raise HistoryError(f"{number}: seq {event.seq} after seq {last}: events go in order (two histories mixed?)")
        last = event.seq or last
        events.append(event)
    return History(tuple(events), **header)


def _object(line: str, number: int) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise HistoryError(f"{number}: not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(data, dict):
        raise HistoryError(f"{number}: expected a JSON object, got {type(data).__name__}")
    return data


def _header(data: dict[str, Any]) -> dict[str, Any]:
    """The History's fields of the header line; HistoryError "1: ..." when it is not one."""
    version = data.get("crashsweep_history")
    if version != VERSION:
        raise HistoryError(f'1: expected the header {{"crashsweep_history": {VERSION}, ...}}, got {version!r}')
    lists = {}
    for name in ("expected", "gated", "facts"):
        value = data.get(name, [] if name != "facts" else list(FACTS))
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise HistoryError(f"1: {name} must be a list of strings")
        lists[name] = value
    unknown = sorted(set(lists["facts"]) - set(FACTS))
    if unknown:
        raise HistoryError(f"1: fact {unknown[0]!r}: expected some of {', '.join(FACTS)}")
    unseen = data.get("unseen", {})
    if not isinstance(unseen, dict) or not all(isinstance(v, str) for v in unseen.values()):
        raise HistoryError("1: unseen must map a fact to why it was not seen")
    return {
        "expected": tuple(lists["expected"]),
        "gated": tuple(lists["gated"]),
        "facts": frozenset(lists["facts"]),
        "unseen": dict(unseen),
    }
