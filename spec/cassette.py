"""The cassette: a recording of a model's replies, played back in place of the model (spec/CASSETTE.md).

A cassette holds what a model answered in one recorded run, ask by ask: the tool calls of each
reply (their IDs, tools and arguments), then the final answer. A scripted model plays it as it
plays a job: asked with k tool turns answered, it gives ask k+1's calls. An argument may be a
reference (`Ref`) to an earlier call's result, read from the conversation when the player has
it, else the value the recorded run used. The file is JSON Lines: a header, one line an ask.
`parse` refuses the first bad line, naming it; `read` and `write` are the only I/O.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crashsweep.spec import files
from crashsweep.spec.job import Call, Job

VERSION = 1
HEADER = "crashsweep_cassette"
VARIABLE = "CRASHSWEEP_CASSETTE"
"""The environment variable that names the cassette (an absolute path) a swept process's model plays."""
RESULT = "$result"
ASK_KEYS = ("ask", "calls", "final")
CALL_KEYS = ("args", "id", "tool")
REF_KEYS = (RESULT, "path", "recorded")


class CassetteError(ValueError):
    """A cassette that cannot be used (one line: the file and line, or the ask, and what is wrong)."""


@dataclass(frozen=True, slots=True)
class Ref:
    """An argument read from call `call`'s result: the value at `path` in it as JSON (() the text itself).

    `recorded`: the value the recorded run used, what a replay with no results to read gives.
    """

    call: str
    path: tuple[str | int, ...]
    recorded: Any


@dataclass(frozen=True, slots=True)
class CassetteCall:
    """One call of a recorded reply: its ID, the tool, the arguments in order (JSON values, `Ref`s anywhere)."""

    id: str
    tool: str
    args: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Ask:
    """One ask of the model: the calls it replied with, or (no calls) its final answer's text."""

    calls: tuple[CassetteCall, ...]
    final: str | None = None


@dataclass(frozen=True, slots=True)
class Cassette:
    """The asks of one run in order: asks with calls, then one final ask; checked when made."""

    asks: tuple[Ask, ...]

    def __post_init__(self) -> None:
        made: dict[str, int] = {}
        for number, ask in enumerate(self.asks, start=1):
            try:
                if number > 1 and self.asks[number - 2].final is not None:
                    raise CassetteError(f"comes after the final answer (ask {number - 1})")
                check_ask(ask, number, made)
            except CassetteError as error:
                raise CassetteError(f"ask {number}: {error}") from None
        if not self.asks or self.asks[-1].final is None:
            raise CassetteError(f"ask {len(self.asks)}: {_NO_FINAL}")

    @property
    def turns(self) -> tuple[Ask, ...]:
        """The asks answered with calls (every ask but the final one): the tool turns a job would have."""
        return tuple(ask for ask in self.asks if ask.calls)


_NO_FINAL = 'the cassette ends without its final ask ({"ask": K, "calls": [], "final": TEXT})'


def check_ask(ask: Ask, number: int, made: dict[str, int]) -> None:
    """Refuse an ask that cannot be played after the asks that made the calls in `made` (ID: its ask); then add its own.

    An ask has calls or a final answer, not both; each call a printable ID no earlier call has,
    and a tool; its arguments JSON values whose references name calls of earlier asks.
    """
    if not ask.calls and ask.final is None:
        raise CassetteError('an ask with no calls is the final answer: give it "final" (its text)')
    if ask.calls and ask.final is not None:
        raise CassetteError('an ask with calls has no "final": the final answer is an ask of its own')
    if ask.final is not None and not isinstance(ask.final, str):
        raise CassetteError(f"final {ask.final!r}: expected a string")
    for call in ask.calls:
        for field, value in (("id", call.id), ("tool", call.tool)):
            if not isinstance(value, str) or not value:
                raise CassetteError(f"a call's {field} {value!r}: expected a non-empty string")
            files.printable(f"call {call.id!r}: {field}", value, CassetteError)
        if call.id in made:
            raise CassetteError(f"call ID {call.id!r} is made twice (ask {made[call.id]} and ask {number})")
        if [c.id for c in ask.calls].count(call.id) > 1:
            raise CassetteError(f"call ID {call.id!r} is made twice in this ask")
        for name, value in call.args:
            if not isinstance(name, str):
                raise CassetteError(f"call {call.id!r}: argument name {name!r}: expected a string")
            for where, ref in _refs(value, f"call {call.id!r}: args.{name}"):
                if ref.call not in made:
                    when = "this same ask" if any(c.id == ref.call for c in ask.calls) else "no earlier ask"
                    raise CassetteError(f"{where}: refers to the result of call {ref.call!r}, which {when} made")
    made.update((call.id, number) for call in ask.calls)


def _refs(value: Any, where: str) -> Iterator[tuple[str, Ref]]:
    """The references in an argument's value, each with where it is; CassetteError for a value JSON cannot hold."""
    if isinstance(value, Ref):
        _check_ref(value, where)
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or key == RESULT:
                raise CassetteError(f"{where}: key {key!r}: an object's keys are strings, and {RESULT} marks a Ref")
            yield from _refs(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _refs(item, f"{where}[{index}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise CassetteError(f"{where}: {value!r} is not a JSON number")
    elif value is not None and not isinstance(value, str | int | float | bool):
        raise CassetteError(f"{where}: {type(value).__name__} is not a JSON value")


def _check_ref(ref: Ref, where: str) -> None:
    if not isinstance(ref.call, str) or not ref.call:
        raise CassetteError(f"{where}: {RESULT} {ref.call!r}: expected a call ID")
    for step in ref.path:
        if isinstance(step, bool) or not isinstance(step, str | int):
            raise CassetteError(f"{where}: path step {step!r}: expected an object's key or a list's index")
    try:
        json.dumps(ref.recorded, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise CassetteError(f"{where}: recorded: not a JSON value ({error})") from None


def dumps(cassette: Cassette) -> str:
    """The cassette as JSON Lines: the header, then one line an ask (the format's keys sorted, arguments in order)."""
    lines = [json.dumps({HEADER: VERSION})]
    for number, ask in enumerate(cassette.asks, start=1):
        calls = [{"args": {k: _encode(v) for k, v in c.args}, "id": c.id, "tool": c.tool} for c in ask.calls]
        data: dict[str, Any] = {"ask": number, "calls": calls}
        if ask.final is not None:
            data["final"] = ask.final
        lines.append(json.dumps(data, allow_nan=False))
    return "".join(line + "\n" for line in lines)


def _encode(value: Any) -> Any:
    if isinstance(value, Ref):
        return {RESULT: value.call, "path": list(value.path), "recorded": value.recorded}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def parse(text: str, name: str) -> Cassette:
    """The cassette of JSON Lines `text`; CassetteError "NAME:LINE: what is wrong" for the first bad line."""
    lines = [(number, line) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise CassetteError(f'{name}:1: empty: expected the header line {{"{HEADER}": {VERSION}}}')
    try:
        _header(*lines[0])
        asks: list[Ask] = []
        made: dict[str, int] = {}
        for number, line in lines[1:]:
            if asks and asks[-1].final is not None:
                raise CassetteError(f"{number}: an ask after the final answer (ask {len(asks)})")
            data = _object(line, number)
            try:
                ask = _ask(data, len(asks) + 1)
                check_ask(ask, len(asks) + 1, made)
            except CassetteError as error:
                raise CassetteError(f"{number}: {error}") from None
            asks.append(ask)
        if not asks or asks[-1].final is None:
            raise CassetteError(f"{lines[-1][0]}: {_NO_FINAL}")
    except CassetteError as error:
        raise CassetteError(f"{name}:{error}") from None
    return Cassette(tuple(asks))


def _header(number: int, line: str) -> None:
    data = _object(line, number)
    if HEADER not in data:
        raise CassetteError(f'{number}: expected the header line {{"{HEADER}": {VERSION}}} first')
    if data[HEADER] != VERSION or isinstance(data[HEADER], bool):
        raise CassetteError(f"{number}: version {data[HEADER]!r}: this reader knows version {VERSION}")
    if len(data) > 1:
        raise CassetteError(f"{number}: unknown key {sorted(set(data) - {HEADER})[0]!r} in the header")


def _object(line: str, number: int) -> dict[str, Any]:
    try:
        data = json.loads(line, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise CassetteError(f"{number}: not JSON ({error.msg} at column {error.colno})") from None
    except ValueError as error:
        raise CassetteError(f"{number}: not JSON ({error})") from None
    except RecursionError:
        raise CassetteError(f"{number}: not usable JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise CassetteError(f"{number}: expected a JSON object, got {type(data).__name__}")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unknown(data: Mapping[str, Any], known: tuple[str, ...], what: str) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise CassetteError(f"{what}: unknown key {unknown[0]!r} (known: {', '.join(known)})")


def _ask(data: dict[str, Any], expected: int) -> Ask:
    """The ask of one line's object (numbered `expected`); CassetteError without the line for what is wrong."""
    _unknown(data, ASK_KEYS, "an ask")
    if "ask" not in data:
        raise CassetteError(f'missing key "ask" (its number, {expected})')
    number = data["ask"]
    if number != expected or isinstance(number, bool):
        raise CassetteError(f"ask {number!r}: expected ask {expected} (asks are numbered 1, 2, ... in order)")
    raw = data.get("calls")
    if not isinstance(raw, list):
        raise CassetteError('"calls": expected a list of calls ([] for the final answer)')
    return Ask(tuple(_call(item, index) for index, item in enumerate(raw)), data.get("final"))


def _call(raw: object, index: int) -> CassetteCall:
    if not isinstance(raw, dict):
        raise CassetteError(f'calls[{index}]: expected an object {{"id": ..., "tool": ..., "args": {{...}}}}')
    _unknown(raw, CALL_KEYS, f"calls[{index}]")
    for key in ("id", "tool"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise CassetteError(f'calls[{index}]: "{key}": expected a non-empty string')
    args = raw.get("args", {})
    if not isinstance(args, dict):
        raise CassetteError(f"call {raw['id']!r}: args: expected an object of the arguments")
    where = f"call {raw['id']!r}: args"
    return CassetteCall(raw["id"], raw["tool"], tuple((k, _decode(v, f"{where}.{k}")) for k, v in args.items()))


def _decode(value: Any, where: str) -> Any:
    """A JSON value with each {"$result": ...} object made a Ref."""
    if isinstance(value, dict):
        if RESULT not in value:
            return {k: _decode(v, f"{where}.{k}") for k, v in value.items()}
        _unknown(value, REF_KEYS, f"{where} (a reference)")
        missing = [key for key in REF_KEYS if key not in value]
        if missing:
            raise CassetteError(f'{where} (a reference): missing key "{missing[0]}"')
        path = value["path"]
        if not isinstance(path, list):
            raise CassetteError(f"{where}: path: expected a list of keys and indexes ([] for the result's text)")
        return Ref(value[RESULT], tuple(path), value["recorded"])
    if isinstance(value, list):
        return [_decode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def read(path: Path) -> Cassette:
    """The cassette in the file `path`; one-line CassetteError naming the file (and line) for any problem."""
    return parse(files.read_text(path, "cassette", CassetteError), str(path))


def write(path: Path, cassette: Cassette) -> None:
    """Write `cassette` to `path` whole or not at all (a temporary file beside it, then a rename)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(dumps(cassette))
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def resolve(args: tuple[tuple[str, Any], ...], results: Mapping[str, str] | None) -> dict[str, Any]:
    """A call's arguments with each Ref replaced: by its value in `results` (call ID: the tool's answer text).

    A Ref to a call `results` lacks (or with no `results`) takes its recorded value. A path that
    leads nowhere in a live result is a CassetteError naming the call and the path.
    """
    return {name: _resolved(value, results) for name, value in args}


def _resolved(value: Any, results: Mapping[str, str] | None) -> Any:
    if isinstance(value, Ref):
        if results is None or value.call not in results:
            return copy.deepcopy(value.recorded)
        return _at(value, results[value.call])
    if isinstance(value, dict):
        return {k: _resolved(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, results) for v in value]
    return value


def _at(ref: Ref, text: str) -> Any:
    """The value at `ref.path` in the result `text` read as JSON (the text itself for the empty path)."""
    if not ref.path:
        return text
    where = f"call {ref.call!r}'s result, path {list(ref.path)}"
    try:
        data = json.loads(text)
    except ValueError:
        raise CassetteError(f"{where}: the result is not JSON ({text[:60]!r})") from None
    for step in ref.path:
        found = isinstance(data, dict) and isinstance(step, str) and step in data
        if found or (isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data)):
            data = data[step]
        else:
            raise CassetteError(f"{where}: nothing at {step!r} (in {json.dumps(data)[:60]})")
    return data


def to_job(cassette: Cassette, name: str, writes: Callable[[CassetteCall], bool]) -> Job:
    """The job whose turns are the cassette's: each call's ID, tool, `writes(call)` and arguments as recorded.

    A Ref becomes its recorded value; a list or object argument is kept as it is (a job file's
    arguments are strings, numbers and booleans: whoever writes one must say what it does with it).
    """
    turns = tuple(
        tuple(Call(c.id, c.tool, writes(c), args=tuple(resolve(c.args, None).items())) for c in ask.calls)
        for ask in cassette.turns
    )
    return Job(name, turns)
