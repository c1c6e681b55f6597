"""One History: what happened in one or more runs, as events every invariant reads (spec/HISTORY.md).

The explorer (a state of the model, spec/projection.py), the real sweep (one scenario's records)
and a recorded run each give a `History`; the invariant values (spec/invariants/) judge it, so a
duplicate in a production trace and a duplicate in a swept scenario are one rule. Events follow
Jepsen's histories: `invoke` (asked), `ok` (done), `fail` (certainly not done), `info` (outcome
unknown). The JSONL form is a header line (the version, what the run must do, which facts the
producer saw) and one event a line; `read` refuses a malformed line with its number.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

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
)
"""What an event is: a request to the model, a tool call the model asked for, an effect at the
receiver, a tool result saved into the conversation, an approval asked/given/redeemed, a save,
the run's status (`finished`, `stuck`, ...)."""
FACTS = ("effects", "transcript", "approvals", "status")
"""The families of facts a producer may have seen: the receiver's effects, the conversation sent
to the model, the approvals, how each run ended. An invariant that needs a family the history
lacks is not decided on it (spec/HISTORY.md 3)."""
KEPT = "history.jsonl"
"""A kept scenario's history in its folder (`sweep --keep`), which `audit FOLDER` looks for."""
FINISHED = "finished"
STUCK = "stuck"


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
    """Where the event came from: "model", "tracker", "checkpoint", "session", a file's name."""

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
        """The event of one JSON object; HistoryError (without a line number) for what is wrong."""
        unknown = sorted(set(data) - _NAMES - {"v"})
        if unknown:
            raise HistoryError(f"unknown field {unknown[0]!r}")
        for name in ("run", "incarnation", "seq", "type", "f"):
            if name not in data:
                raise HistoryError(f"missing field {name!r}")
        if data["type"] not in TYPES:
            raise HistoryError(f"type {data['type']!r}: expected one of {', '.join(TYPES)}")
        if data["f"] not in FS:
            raise HistoryError(f"f {data['f']!r}: expected one of {', '.join(FS)}")
        for name in ("incarnation", "seq"):
            if not isinstance(data[name], int) or isinstance(data[name], bool) or data[name] < 0:
                raise HistoryError(f"{name} {data[name]!r}: expected a whole number, 0 or more")
        for name in _STRINGS:
            if name in data and not isinstance(data[name], str):
                raise HistoryError(f"{name} {data[name]!r}: expected a string")
        return cls(**{name: data[name] for name in _NAMES if name in data})


_NAMES = frozenset(f.name for f in fields(Event))
_OPTIONAL = tuple(f.name for f in fields(Event) if f.name not in ("run", "incarnation", "seq", "type", "f"))
_STRINGS = ("run", "type", "f", *_OPTIONAL)


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


def read(path: Path) -> History:
    """The history in the JSONL file `path`; HistoryError naming the file and line of the first bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise HistoryError(f"{path}: cannot be read ({error})") from None
    try:
        return parse(text)
    except HistoryError as error:
        raise HistoryError(f"{path}:{error}") from None


def parse(text: str) -> History:
    """The history of JSONL `text`; HistoryError "LINE: what is wrong" for the first bad line."""
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise HistoryError('1: expected the header line {"crashsweep_history": 1, ...}')
    header = _header(_object(lines[0], 1))
    events: list[Event] = []
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        data = _object(line, number)
        if data.get("v", VERSION) != VERSION:
            raise HistoryError(f"{number}: version {data['v']!r}: this reader knows version {VERSION}")
        try:
            events.append(Event.from_json(data))
        except (HistoryError, TypeError) as error:
            raise HistoryError(f"{number}: {error}") from None
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
