"""Sweeping the reference loop: its target command, its check, and its row in the explorer's shape.

The target is `python -S -m crashsweep.realsweep.reference.loop --variant V [--job FILE] --tracker T`
(or `--design FILE` instead of `--variant V`, the loop composed from a design file's policies):
`-S` skips site-packages, which the loop does not need (it imports only the standard library,
this package and spec/), and saves a sizeable part of each process's start; the package's
own folder goes on PYTHONPATH instead. (Not with $CRASHSWEEP_OTLP set: the processes record
their spans with OpenTelemetry's SDK, tracing.py.) The modules the loop imports are
byte-compiled once before the sweep, so that no process compiles them again. The check counts, per write of the
job, the records the tracker holds for it (over every run): dups, missing, applied.
Its state key (`state_key`, used by a deduplicating sweep unless another is given) blanks the
process ID in the lock file, the only part of its world that differs between two processes
that started from the same world.
"""

from __future__ import annotations

import compileall
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from crashsweep.realsweep.faults.nemesis import Nemesis, NemesisError
from crashsweep.realsweep.probe import checkpoint
from crashsweep.realsweep.reference import parts as loop_parts
from crashsweep.realsweep.reference import tracing
from crashsweep.realsweep.reference.loop import DESIGNS
from crashsweep.realsweep.sweep import (
    Check,
    Outcome,
    Scenario,
    SweepError,
    SweepOptions,
    SweepResult,
    Target,
    sweep,
)
from crashsweep.realsweep.sweep import Progress as SweepProgress
from crashsweep.realsweep.tracker.service import package_pythonpath
from crashsweep.realsweep.world import World
from crashsweep.spec.history import Event, History
from crashsweep.spec.job import TRIAGE, Job
from crashsweep.spec.loading import reload_how
from crashsweep.spec.policy import CONVERSATION, PolicyError, read_design_file
from crashsweep.spec.retries import Stack

UNSUPPORTED = ("approval",)
"""Job options the built-in designs of the reference loop do not implement (a design file's composed
loop has the approval gate: approvals.py)."""
SERVICE_MODES = {"keyed": "keyed", "keyless": "keyless", "keyless-lookup": "keyless"}


Version = tuple[str, "Path | None"]
"""A version of the reference loop: its design's name, and the design file when it comes from one."""


def target(
    variant: str, job_path: Path | None, tracker: str, design_path: Path | None = None, upgrade: Version | None = None
) -> Target:
    """The command that runs one process of the reference loop of design `variant` (or of the design file).

    `upgrade`: the version every restart runs (spec/RETRIES.md section 2), the same program
    with another design.
    """
    if upgrade is not None:
        upgraded = target(upgrade[0], job_path, tracker, upgrade[1])
        first = target(variant, job_path, tracker, design_path)
        return replace(first, label=f"{first.label} -> {upgrade[0]} at restarts", upgrade=upgraded)
    if design_path is not None:
        args = ["--design", str(design_path.resolve()), "--tracker", tracker]
    elif variant not in DESIGNS:
        raise ValueError(f"unknown variant {variant!r} (known: {', '.join(DESIGNS)})")
    else:
        args = ["--variant", variant, "--tracker", tracker]
    if job_path is not None:
        args += ["--job", str(job_path.resolve())]
    site = () if os.environ.get(tracing.OTLP) else ("-S",)  # traced: the SDK is in site-packages
    argv = (sys.executable, *site, "-m", "crashsweep.realsweep.reference.loop", *args)
    env = {"PYTHONPATH": package_pythonpath()}
    return Target(
        argv, env, f"reference loop {variant}", fork="crashsweep.realsweep.reference.loop:main", fork_argv=tuple(args)
    )


def check(job: Job) -> Check:
    """The check of the reference loop on `job`: the tracker's records, per write of the job, and their approvals.

    Its history (spec/HISTORY.md) holds every record as an effect (a gated write's with the
    approval it was sent under and its arguments' version), and the conversation the loop saved
    last (the checkpoint: a model call before each turn, the turn's calls and their results).
    """

    def outcome(scenario: Scenario) -> Outcome:
        assert scenario.tracker is not None, "the reference loop needs a tracker"
        records = scenario.tracker.records()
        found = Outcome.of((record["call"] for record in records), job.writes)
        events = [*_effects(records, job), *_conversation(scenario.workdir / loop_parts.CHECKPOINT_FILE, job)]
        return replace(found, history=History(tuple(events), job.writes, job.gated))

    return outcome


def _effects(records: list[dict[str, Any]], job: Job) -> list[Event]:
    gated = set(job.gated)
    return [
        Event(
            str(record.get("run", "")), 0, n, "ok", "effect", call=record["call"], effect_id=f"#{n}",
            approval=record.get("approval") or "" if record["call"] in gated else "",
            args_digest=f"v{loop_parts.record_version(record)}" if record["call"] in gated else "", src="tracker",
        )
        for n, record in enumerate(records, 1)
    ]  # fmt: skip


def _conversation(path: Path, job: Job) -> list[Event]:
    """The saved conversation: each turn's model call, its tool calls and saved results; the last call once done.

    A turn `trim-context` cut keeps what the conversation keeps of it (spec/projection.py): its
    results alone once its reply left (a result with no call of it: well-formed-transcript is
    broken), nothing once all of it left.
    """
    try:
        saved = checkpoint.load(path)
    except checkpoint.CheckpointError:  # a power cut's unreadable checkpoint: the loop sent nothing from it
        return []
    if not isinstance(saved, dict):
        return []
    run, events = str(saved.get("run", "")), []
    for turn in saved.get("turns", []):
        kept = turn.get("trimmed", 0)
        if kept == 2:
            continue
        if not kept:
            events.append(Event(run, 0, 0, "invoke", "model_call", src="checkpoint"))
        for call in job.turns[turn["index"] - 1]:
            if not kept:
                events.append(Event(run, 0, 0, "invoke", "tool_call", call=call.id, tool=call.tool, src="checkpoint"))
            if call.id in turn.get("results", {}):
                events.append(Event(run, 0, 0, "ok", "result_saved", call=call.id, src="checkpoint"))
    if saved.get("done"):
        events.append(Event(run, 0, 0, "invoke", "model_call", src="checkpoint"))
    return events


def precompile() -> None:
    """Byte-compile this package and spec/ so that each loop process loads them compiled."""
    here = Path(__file__).absolute().parent  # as imported; spec/ is its sibling, checked out or installed
    for folder in (here, here.parent / "spec"):
        compileall.compile_dir(folder, quiet=2, maxlevels=0)


def run(
    variant: str,
    job: Job,
    job_path: Path | None,
    tracker: str,
    options: SweepOptions,
    progress: SweepProgress | None = None,
    design_path: Path | None = None,
    nemesis: Nemesis | None = None,
    upgrade: Version | None = None,
) -> SweepResult:
    """Sweep the reference loop of `variant` (or of the design file) on `job` against a tracker of kind `tracker`.

    `nemesis`: the faults and call IDs (spec/FAULTS.md) the loop and the tracker suffer;
    `upgrade`: the version every restart runs (spec/RETRIES.md section 2).
    """
    refuse(job, tracker, design_path, nemesis, upgrade)
    if job_path is None and job != TRIAGE:  # the loop reads its job from the file; without one it plays triage
        raise SweepError(f"job {job.name!r} has no file: the reference loop reads its job from one (give its path)")
    precompile()
    options = replace(options, tracker=SERVICE_MODES[tracker], state_key=options.state_key or state_key)
    chosen = target(variant, job_path, tracker, design_path, upgrade)
    moving = with_layers(nemesis or Nemesis(), design_path, upgrade)
    if moving.every_scenario:  # a timeout's new attempt beside the old one: every scenario of one move
        options = replace(options, dedup=False, snapshots=False)
    return sweep(chosen, check(job), options, progress, moving)


def with_layers(nemesis: Nemesis, design_path: Path | None, upgrade: Version | None = None) -> Nemesis:
    """`nemesis` with the moves of the design's retry layers (faults/retry.py, faults/timeout.py), if it has any."""
    layers = retry_layers(design_path, upgrade)
    if not layers:
        return nemesis
    return replace(nemesis, retries=True, timeouts=any(layer.on == "timeout" for layer in layers))


def retry_layers(design_path: Path | None, upgrade: Version | None = None) -> Stack:
    """The retry layers of the design file (or, else, of the upgrade's): none for a built-in design."""
    for path in (design_path, None if upgrade is None else upgrade[1]):
        if path is not None:
            _, _, policy = read_design_file(path)
            if policy.retries:
                return policy.retries
    return ()


def state_key(world: World) -> World:
    """The world with the lock file's process ID blanked (and its temp file's): nothing reads it back.

    No process reads the lock file (the `file` lock policy, spec/FAULTS.md 7.1): it records a holder for a person.
    One a kill left part-written (`--points syscalls` crashes between a file's open and its write) is kept
    as its bytes: it names no process ID to blank.
    """
    for name in (loop_parts.LOCK_FILE, loop_parts.LOCK_FILE + checkpoint.TMP_SUFFIX):
        data = world.file(name)
        if data is not None:
            try:
                lock = json.loads(data)
            except ValueError:  # part-written (json.JSONDecodeError, or not UTF-8)
                continue
            lock["pid"] = 0
            world = world.with_file(name, json.dumps(lock, sort_keys=True).encode("utf-8"))
    return world


def refuse(
    job: Job,
    tracker: str,
    design_path: Path | None,
    nemesis: Nemesis | None,
    upgrade: Version | None = None,
    depth: int | None = None,
) -> None:
    """SweepError, before any process starts, for what the reference loop cannot run (`depth`: at that depth)."""
    if tracker not in SERVICE_MODES:
        raise SweepError(f"unknown tracker {tracker!r} (known: {', '.join(SERVICE_MODES)})")
    for call in job.calls:
        loop_parts.issue_target(job, call)  # a comment with no issue before it fails here, not in a process
        for option in UNSUPPORTED:
            if getattr(call, option, False) and design_path is None:  # a design file's loop has the gate
                raise SweepError(
                    f"calls.{call.id}: the reference loop's built-in designs do not implement {option!r}; "
                    "give a design file (--design), whose loop does"
                )
    if nemesis is not None and nemesis.keys_ignored and SERVICE_MODES[tracker] == "keyed":
        raise SweepError(
            "changed-args is carried out against a tracker that ignores keys (keyless, keyless-lookup): for a key "
            "reused with other arguments the model has the first answer, the tracker 422 (spec/CONVERSATIONS.md 2.3)"
        )
    failing = any(call.fails_after_accept for call in job.calls)
    for path in (design_path, None if upgrade is None else upgrade[1]):
        if path is not None:
            _refuse_design(path, failing or (nemesis is not None and nemesis.fails_tool_calls), job)
    if depth is not None:
        try:
            with_layers(nemesis or Nemesis(), design_path, upgrade).check(depth)
        except NemesisError as error:
            raise SweepError(str(error)) from None


CARRIED_OUT: dict[str, tuple[str, ...]] = {
    "transcript_on_restart": ("repair", "as-is"),
    "approval_binding": ("call", "none"),
    "approval_storage": ("memory", "service"),
    "resume_granularity": ("node",),
    "approval_consume": ("before-resume",),
    "persist_granularity": ("per-batch",),
    "transcript_repair": ("add-missing-results", "both-directions"),
}
"""The conversation values beside the defaults that the reference loop carries out (CONVERSATIONS.md)."""


def _refuse_design(design_path: Path, tools_fail: bool, job: Job) -> None:
    """What the reference loop does not implement yet: a tool error handed to the model.

    A tool error (a lost reply, a call that fails after accept, a retry move) under
    on_tool_error = "model" goes to the model, which the reference loop does not script.
    """
    try:
        _, _, policy = read_design_file(design_path)
    except PolicyError as error:
        raise SweepError(str(error)) from None
    if (tools_fail or policy.retries) and policy.on_tool_error == "model":
        raise SweepError(f"{design_path}: the reference loop does not hand a tool error to the model (on_tool_error)")
    for field, values in CONVERSATION.items():
        value = getattr(policy, field)
        if value not in (values[0], *CARRIED_OUT.get(field, ())):
            raise SweepError(
                f"{design_path}: the reference loop does not carry out {field} = {value!r} yet "
                "(spec/CONVERSATIONS.md; the model explores it)"
            )
    commented = [call.id for call in job.calls if loop_parts.issue_target(job, call) is not None]
    if reload_how(policy) == "repair" and commented:  # repair, or as-is with a transcript_repair (CONVERSATIONS.md 7)
        how = (
            'transcript_on_restart = "repair"'
            if policy.transcript_on_restart == "repair"
            else f'transcript_repair = "{policy.transcript_repair}" with transcript_on_restart = "as-is"'
        )
        raise SweepError(
            f"{design_path}: the reference loop cannot comment ({commented[0]}) on an issue a repair may have "
            f"lost ({how}): sweep it on a job without comments"
        )
