"""What every framework adapter shares: the scripted model, the tracker tools' bodies, keys, the check.

The scripted model plays a crashsweep job file (spec/job.py): asked with k tool turns already
answered, it replies with the calls of turn k+1, or with its final answer after the last one.
Its call IDs are either the job's (`stable`: asking again gives the same IDs, as a model whose
reply was saved before any call went out) or `fresh`: new on every ask, as real providers hand
them out. Fresh IDs are derived from the model's own ledger and a counter, so that runs from
the same disk state get the same IDs (the sweep needs that), and every ask gets new ones.

When $CRASHSWEEP_CASSETTE names a cassette (spec/CASSETTE.md; `sweep --cassette FILE`), the
model plays the cassette's replies instead of the job's: the tools and arguments as recorded,
an argument that refers to an earlier call's result read from the results it is given (else
as recorded). The job stays what the check judges.

The ledger (`model-ledger.jsonl` in the work directory) is the provider's side of the story:
one line per ask, written before the reply is returned, that maps each call ID handed out to
the job's call (or the cassette's). The default check reads it to map the tracker's records
back to the job's calls, with no mapping by hand.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from crashsweep.realsweep.probe.crashpoint import count, crashpoint
from crashsweep.realsweep.process.imported import signature
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.values import Check, Outcome, Scenario
from crashsweep.spec import metrics
from crashsweep.spec.cassette import VARIABLE, Cassette, CassetteError, resolve
from crashsweep.spec.cassette import read as read_cassette
from crashsweep.spec.history import FACTS, Event, History
from crashsweep.spec.job import Job
from crashsweep.spec.job import arguments as arguments  # the scripted model's calls: spec/job.py's, kept here
from crashsweep.spec.job import title as title
from crashsweep.spec.job import tool_name as tool_name
from crashsweep.spec.keys import key

LEDGER = "model-ledger.jsonl"
CALL_IDS = ("stable", "fresh")
TRACKER_URL = "CRASHSWEEP_TRACKER_URL"
WORKDIR = "CRASHSWEEP_WORKDIR"
ARGS = "CRASHSWEEP_ARGS"
"""`crashsweep sweep --target ... --arg key=value` pairs, as a JSON object (see `target_args`)."""
CASSETTE = VARIABLE
"""The cassette the scripted model plays instead of its job (`sweep --cassette FILE`): an absolute path."""


@dataclass(frozen=True)
class ToolCall:
    """One call of a scripted reply: the ID the model handed out, the tool's name and arguments."""

    id: str
    name: str
    args: dict[str, Any]


def agent_parser(module: str) -> argparse.ArgumentParser:
    """The options every built-in agent takes (`builtin.arguments` passes them): --job, --keys, --call-ids.

    `module`: the agent's module, named in its usage line (`python -m MODULE`).
    """
    parser = argparse.ArgumentParser(prog=f"python -m {module}")
    parser.add_argument("--job", help="job file (TOML); default: the built-in triage job")
    parser.add_argument("--keys", choices=("on", "off"), default="on")
    parser.add_argument("--call-ids", choices=CALL_IDS, default="stable")
    return parser


def made_from(args: argparse.Namespace) -> tuple[object, ...]:
    """What a built-in agent made from `agent_parser`'s options depends on: the job file as it is now, keys, call IDs.

    The agents make it once in the zygote (`zygote_warm`); a zygote kept for the next sweep
    (process/zygotes.py) may meet the same job file edited, so the file's modification time and
    size key it beside its path.
    """
    return args.job, None if args.job is None else signature(args.job), args.keys, args.call_ids


def workdir() -> Path:
    """The run's work directory: $CRASHSWEEP_WORKDIR under a sweep, else the current one."""
    return Path(os.environ.get(WORKDIR) or ".")


def target_args() -> dict[str, str]:
    """The `--arg key=value` pairs the sweep passed to this process ({} outside a sweep)."""
    raw = os.environ.get(ARGS)
    if not raw:
        return {}
    args = json.loads(raw)
    return {str(k): str(v) for k, v in args.items()}


def tracker() -> TrackerClient:
    """The tracker at $CRASHSWEEP_TRACKER_URL (default: a `crashsweep tracker serve` on port 8765)."""
    return TrackerClient(os.environ.get(TRACKER_URL) or "http://127.0.0.1:8765")


class ScriptedModel:
    """The job's model: `reply(k)` is turn k+1's calls, or None (the final answer) after the last turn.

    Under $CRASHSWEEP_CASSETTE the turns are the cassette's (read when first asked, not when
    made: a model made at import time is made in the sweep's fork server, before any process's
    environment is set).
    """

    def __init__(self, job: Job, call_ids: str = "stable", folder: Path | None = None) -> None:
        if call_ids not in CALL_IDS:
            raise ValueError(f"call IDs {call_ids!r}: expected stable or fresh")
        for call in job.calls:
            arguments(job, call)  # a comment with nothing to comment on fails here, not mid-run
        self.job, self.call_ids, self.folder = job, call_ids, folder
        self._played: tuple[str, Cassette] | None = None

    @property
    def ledger(self) -> Path:
        """The ledger's path, in the run's work directory when the model was made without a folder.

        Found when asked, not when made: a model made at import time (as a tutorial's module
        does) is imported once by the sweep's fork server, before any work directory exists.
        """
        return (self.folder if self.folder is not None else workdir()) / LEDGER

    @property
    def cassette(self) -> Cassette | None:
        """The cassette $CRASHSWEEP_CASSETTE names (read once), or None: the job is played."""
        value = os.environ.get(CASSETTE)
        if not value:
            return None
        if self._played is None or self._played[0] != value:
            if not os.path.isabs(value):
                raise CassetteError(f"${CASSETTE} {value!r}: expected an absolute path")
            self._played = (value, read_cassette(Path(value)))
        return self._played[1]

    def reply(self, turns_done: int, results: Mapping[str, str] | None = None) -> list[ToolCall] | None:
        """Answer an ask with `turns_done` tool turns answered; the ask and its IDs go to the ledger first.

        `results`: the tool's answer text by call ID, for the conversation so far: a cassette's
        arguments that refer to an earlier call's result are read from it (else as recorded).
        """
        count(metrics.MODEL_CALLS)
        lines = self.ledger.read_text(encoding="utf-8").splitlines() if self.ledger.exists() else []
        asks, played = len(lines), self.cassette
        if played is None:
            turn = self.job.turns[turns_done] if turns_done < len(self.job.turns) else ()
            ids = [call.id for call in turn]
            calls = [ToolCall(self._id(c.id, asks), tool_name(c), arguments(self.job, c)) for c in turn]
        else:
            recorded = played.turns[turns_done].calls if turns_done < len(played.turns) else ()
            known = None if results is None else _by_recorded_id(results, lines)
            ids = [call.id for call in recorded]
            calls = [ToolCall(self._id(c.id, asks), c.tool, resolve(c.args, known)) for c in recorded]
        line = json.dumps(
            {"ask": asks + 1, "turn": turns_done, "ids": {c.id: i for c, i in zip(calls, ids, strict=True)}}
        )
        fd = os.open(self.ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode("utf-8"))  # one write(2): a kill cannot leave half a line
        finally:
            os.close(fd)
        return calls or None

    def final(self, default: str) -> str:
        """The final answer's text: the cassette's when one is played, else `default`."""
        played = self.cassette
        final = played.asks[-1].final if played is not None else None
        return final if final is not None else default

    def _id(self, call_id: str, asks: int) -> str:
        if self.call_ids == "stable":
            return call_id
        return "call_" + hashlib.sha256(f"{asks}:{call_id}".encode()).hexdigest()[:16]


def _by_recorded_id(results: Mapping[str, str], ledger: list[str]) -> dict[str, str]:
    """`results` keyed by the cassette's call IDs: each ID handed out mapped back by the ledger's lines."""
    ids: dict[str, str] = {}
    for line in ledger:
        if line.strip():
            ids.update(json.loads(line)["ids"])
    return {ids.get(call_id, call_id): text for call_id, text in results.items()}


def ledger_ids(folder: Path) -> dict[str, str]:
    """Every call ID the scripted model handed out in `folder`'s run, mapped to the job's call."""
    path = folder / LEDGER
    ids: dict[str, str] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                ids.update(json.loads(line)["ids"])
    return ids


class TrackerTools:
    """The bodies of the tracker tools: each sends one request, then passes a crash point.

    `run` and `call` are the framework's IDs (thread and tool call; workflow and the model's
    call), recorded with the effect; with `keys`, the write carries the key derived from
    `key_parts` (the same on every attempt of the call, different for every other call).
    """

    def __init__(self, keys: bool, client: TrackerClient | None = None) -> None:
        self.keys = keys
        self._client = client

    @property
    def client(self) -> TrackerClient:
        """The given client, or the run's tracker ($CRASHSWEEP_TRACKER_URL), found when first used.

        Tools made at import time are imported once by the sweep's fork server, before any
        scenario's tracker exists.
        """
        return self._client if self._client is not None else tracker()

    def key(self, *parts: str) -> str | None:
        """The idempotency key of the call identified by `parts` (None when keys are off)."""
        if not self.keys:
            return None
        run, *rest = parts
        return key(run, "/".join(rest))

    def create_issue(self, title: str, *, run: str, call: str, key_parts: Iterable[str]) -> str:
        """File an issue; the tool's answer."""
        number = self.client.create_issue(title, run=run, call=call, key=self.key(*key_parts))
        crashpoint(f"tracker filed {title}")
        return f"filed issue #{number}"

    def comment(self, issue_title: str, body: str, *, run: str, call: str, key_parts: Iterable[str]) -> str:
        """Comment on the first issue titled `issue_title`; the tool's answer."""
        found = [item for item in self.client.search(issue_title) if item["title"] == issue_title]
        if not found:
            return f"error: no issue titled {issue_title!r}"
        number = self.client.comment(int(found[0]["number"]), run=run, call=call, body=body, key=self.key(*key_parts))
        crashpoint(f"tracker commented {body}")
        return f"commented #{number} on issue #{found[0]['number']}"

    def search(self, query: str) -> str:
        """The issues matching `query`, as the model would read them."""
        items: list[dict[str, Any]] = self.client.search(query)
        return json.dumps([{"number": i["number"], "title": i["title"]} for i in items])


class CallTools(Protocol):
    """Tracker tools an engine's step or activity runs, each given the framework's ID of the call."""

    def create_issue(self, call_id: str, title: str) -> str: ...

    def comment(self, call_id: str, issue_title: str, body: str) -> str: ...

    def search(self, call_id: str, query: str) -> str: ...


def play(tools: CallTools, call: dict[str, Any]) -> str:
    """Run one call of a scripted reply (a `ToolCall` as a dict) on the tracker tool it names."""
    args = call["args"]
    if call["name"] == "create_issue":
        return tools.create_issue(call["id"], args["title"])
    if call["name"] == "comment":
        return tools.comment(call["id"], args["issue_title"], args["body"])
    return tools.search(call["id"], args["query"])


Conversation = Callable[[Path], tuple[Event, ...]]
"""Reads the conversation an agent saved in a scenario's final work folder as History events
(transcripts.py says which); () when it saved none."""


def check(job: Job, conversation: Conversation | None = None, unseen: Mapping[str, str] | None = None) -> Check:
    """The default check: the tracker's records, mapped back to the job's calls by the model's ledger.

    With `conversation`, the history also holds the conversation it reads from the work folder
    (well-formed-transcript is decided on it); `unseen`: the families of facts the stack's check
    cannot see, and why (transcripts.UNDECIDED). Without either, the effects alone are seen.
    """

    def outcome(scenario: Scenario) -> Outcome:
        assert scenario.tracker is not None, "the framework adapters write to the tracker"
        ids = ledger_ids(scenario.workdir)
        effects = [ids.get(record["call"], record["call"]) for record in scenario.tracker.records()]
        if conversation is None and unseen is None:
            return Outcome.of(effects, job.writes)
        hidden = dict(unseen or {})
        if conversation is None:
            hidden.setdefault("transcript", "the check was given no reader of the saved conversation")
        events = conversation(scenario.workdir) if conversation is not None else ()
        history = History(events, job.writes, job.gated, frozenset(FACTS) - set(hidden), hidden)
        return Outcome.of(effects, job.writes, history)

    return outcome
