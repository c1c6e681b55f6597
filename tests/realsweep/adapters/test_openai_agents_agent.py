"""`crashsweep sweep --framework openai-agents` at depth 1: the built-in OpenAI Agents SDK agent, swept for real.

The job here is small to keep the sweeps short: a turn that files one issue, a turn that
comments on it, the final answer. One uninterrupted run passes 14 crash points, in this order
(the SDK writes the user's input before the first ask, and each turn's reply together with
its tools' results in one session write after the tools ran; test_openai_agents.py derives
the triage job's 19 the same way):

     1 before session write user input          8 before comment comment comment_a
     2 after session write user input           9 tracker commented comment comment_a
     3 before create_issue issue create_a      10 after comment comment comment_a
     4 tracker filed issue create_a            11 before session write reply calling comment; results of comment
     5 after create_issue issue create_a       12 after session write reply calling comment; results of comment
     6 before session write reply calling      13 before session write final answer
       create_issue; results of create_issue   14 after session write final answer
     7 after session write (the same)

The points between the tracker accepting a write and the durable record of its result (the
session write of its turn) are 4, 5, 6 (create_a) and 9, 10, 11 (comment_a). A crash at one of
them leaves the session without the turn: the restart asks the model again and runs the
turn's call again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crashsweep.cli.main import main
from crashsweep.realsweep import rows
from crashsweep.realsweep.adapters import builtin, script, transcripts
from crashsweep.realsweep.adapters.openai_agents_agent import defined, parse, zygote_warm
from crashsweep.realsweep.adapters.openai_agents_agent import main as main_agent
from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.sweep import SweepError, SweepOptions, SweepResult, sweep
from crashsweep.reports.summary import Summary
from crashsweep.spec.job import TRIAGE, load_job
from tests.docs.shown import printed
from tests.realsweep.adapters.test_openai_agents import EXAMPLES, forked, under_sweep

__all__ = ["under_sweep"]  # the fixture, shared with the adapter's tests

SMALL = """\
name = "small"
turns = [["create_a"], ["comment_a"]]

[calls]
create_a = { tool = "create_issue", writes = true }
comment_a = { tool = "comment", writes = true }
"""


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """The small job's file."""
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    return path


def sweep_json(capsys: pytest.CaptureFixture[str], job: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """`crashsweep sweep --framework openai-agents --job JOB --depth 1 --workers 2 --format json ARGS`: status, row."""
    argv = ["sweep", "--framework", "openai-agents", "--job", str(job), "--depth", "1", "--workers", "2"]
    status = main([*argv, "--format", "json", *args])
    return status, json.loads(capsys.readouterr().out)


def test_keys_off_duplicates_each_write_struck_before_its_turn_is_saved(
    capsys: pytest.CaptureFixture[str], job: Path
) -> None:
    """Keys off: 6 scenarios with one duplicate each, nothing lost.

    Each of the 6 points between a write's effect and its turn's session write (4, 5, 6 for
    create_a, 9, 10, 11 for comment_a; see the module's docstring) makes the restart run that
    one write again: 6 scenarios, 1 duplicate each. A crash before the request (3, 8) or after
    the session write (7, 12-14) duplicates nothing; 1 and 2 come before any effect.
    """
    status, row = sweep_json(capsys, job, "--keys", "off")
    assert status == 1
    assert row["variant"] == "openai-agents, keys off, call IDs stable"
    assert (row["crash_points"], row["with_dups"], row["dups"], row["missing"]) == (14, 6, 6, 0)


def test_keys_from_the_session_and_stable_call_ids_leave_no_duplicate(
    capsys: pytest.CaptureFixture[str], job: Path
) -> None:
    """Keys on, the job's call IDs: the re-asked model hands out the same call IDs, so the same keys: none."""
    status, row = sweep_json(capsys, job, "--keys", "on", "--call-ids", "stable")
    assert status == 0
    assert (row["crash_points"], row["with_dups"], row["dups"], row["missing"]) == (14, 0, 0, 0)


@pytest.mark.parametrize(("call_ids", "filed"), [("fresh", 2), ("stable", 1)])
def test_fresh_call_ids_duplicate_even_with_keys(
    under_sweep: Path, tmp_path: Path, job: Path, call_ids: str, filed: int
) -> None:
    """Keys on, killed after the tracker filed create_a (point 4): fresh call IDs file it twice, stable once.

    The SDK saves the model's reply only with its tools' results, after they ran: the crash
    loses the reply, the restart asks again, and a model that hands out new call IDs on every
    ask (as a provider does) hands out new keys. The same holds at each of the 6 points of the
    keys-off sweep, so a sweep with fresh IDs and keys on finds what keys off finds (6
    scenarios, 6 duplicates). Keys from call IDs protect an SDK run only where the reply is
    durable before its calls go out: a call that waits for approval (test_openai_agents.py).
    """
    argv = ["--job", str(job), "--keys", "on", "--call-ids", call_ids]
    assert forked(lambda: main_agent(argv), "1:tracker filed issue create_a") == -9
    main_agent(argv)
    records = script.tracker().records()
    ids = script.ledger_ids(tmp_path)
    assert sorted(ids[r["call"]] for r in records) == ["comment_a", *["create_a"] * filed]
    assert len({r["call"] for r in records}) == 1 + filed  # with fresh IDs, two call IDs for create_a


def test_list_points_of_the_framework_are_its_sweeps_points(capsys: pytest.CaptureFixture[str]) -> None:
    """`--list-points`: the triage job's 19 points (test_openai_agents.expected_points), each in the adapters."""
    assert main(["sweep", "--framework", "openai-agents", "--list-points", "--format", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    assert len(points) == 19
    assert all(p["where"].startswith("crashsweep/realsweep/adapters/") for p in points)
    assert points[0]["name"] == "before session write user input"
    assert sum(p["name"].startswith("tracker ") for p in points) == 3  # the job's three writes


def test_the_agents_defaults() -> None:
    """Keys on, the job's call IDs, the built-in triage job, no transcript repair."""
    args = parse([])
    assert (args.keys, args.call_ids, args.job, args.transcript_repair) == ("on", "stable", None, "none")


def test_the_sweep_passes_the_transcript_repair_as_it_passes_keys() -> None:
    """builtin.target: --transcript-repair among the agent's options, in the row's name; the SDK's agent only."""
    target = builtin.target(
        "openai-agents", None, keys=True, call_ids="stable", durability=None, transcript_repair="both-directions"
    )
    assert target.fork_argv[-2:] == ("--transcript-repair", "both-directions")
    assert parse(list(target.fork_argv)).transcript_repair == "both-directions"
    assert target.label == "openai-agents, keys on, call IDs stable, transcript repair both-directions"
    with pytest.raises(SweepError, match="--transcript-repair none goes with --framework openai-agents"):
        builtin.target("langgraph", None, keys=True, call_ids="stable", durability=None, transcript_repair="none")


def test_the_zygote_makes_the_agent_once_per_command_line() -> None:
    """zygote_warm makes the job and the agent once; a process of the same options finds them made; other keys not."""
    argv = ["--keys", "off"]
    zygote_warm(argv)
    job, made = defined(parse(argv))
    zygote_warm(argv)
    assert defined(parse(argv))[1] is made
    assert defined(parse(["--keys", "on"]))[1] is not made
    assert job.name == "triage"
    assert sorted(tool.name for tool in made.tools) == ["comment", "create_issue", "search_issues"]


def verdict_lines(result: SweepResult) -> dict[str, str]:
    """Each registered invariant's verdict on a sweep, in the row's words: holds, VIOLATED or not decided (why)."""
    return {
        v.name: "holds" if v.decided and v.holds else "VIOLATED" if v.decided else f"not decided ({v.why})"
        for v in rows.verdicts_of(result)
    }


def test_the_built_in_agents_session_is_read_so_well_formed_transcript_is_decided(job: Path) -> None:
    """Keys off, the built-in check of the framework: the session's conversation is read in every scenario.

    The SDK writes a turn's calls with their results in one session write, so no crash leaves a
    call without its result: well-formed-transcript holds (and was exercised: results were sent
    to the model); approved-exactly is not decided, for the reason transcripts.UNDECIDED gives.
    """
    small = load_job(job)
    target = builtin.target("openai-agents", job, keys=False, call_ids="stable", durability=None)
    result = sweep(target, builtin.check(small, "openai-agents"), SweepOptions(depth=1, workers=2))
    last = result.scenarios[-1].outcome.history
    assert last is not None
    assert "transcript" in last.facts
    assert [e.f for e in last.events if e.f != "effect"][:3] == ["model_call", "tool_call", "result_saved"]
    assert verdict_lines(result) == {
        "no-duplicate": "VIOLATED",
        "no-loss": "holds",
        "well-formed-transcript": "holds",
        "approved-exactly": f"not decided ({transcripts.UNDECIDED['openai-agents']['approvals']})",
        "can-finish": "holds",
    }


def test_a_users_agent_that_saves_a_tool_output_twice_is_reported() -> None:
    """docs/examples/my_journaled_agent.py: its session redoes a journaled write, so a turn's outputs are saved twice.

    Killed between its session write and the journal's removal (its own point), the restart
    adds the turn's items again: the row says well-formed-transcript VIOLATED, with the call
    that has two results; the tracker's effects are fine (keys on: no duplicate, no loss).
    tests/docs/test_blocks.py runs the command as docs/guide/openai-agents.md shows it.
    """
    command = "crashsweep sweep --target my_journaled_agent:run --check my_journaled_agent:check --depth 1"
    assert command in (EXAMPLES / "my_journaled_agent.py").read_text()
    shown = printed("docs/guide/openai-agents.md", f"cd docs/examples && ../../bin/{command}")  # run by test_blocks
    assert "no-duplicate  holds" in shown
    assert "well-formed-transcript VIOLATED  first in scenario 11" in shown
    assert shown.splitlines()[7].endswith(": create_a has two results in the conversation")


SDK_DESIGN = """\
# The built-in OpenAI Agents SDK agent as a design: the user's input saved first (the start),
# each turn's reply saved with its results in one session write after the tools ran, a key on
# every write (from the session and the call ID), and what a start repairs.
name = "openai-agents-{repair}"
summary = "the OpenAI Agents SDK's built-in agent, transcript repair {repair}"
startup_save = true
reply_save = "never"
result_saves = "whole-turn"
markers = "none"
keys = "run-call"
lock = "none"
transcript_repair = "{repair}"
"""
"""The design that describes the SDK's agent (no preset does: save-once-per-turn with keys and a repair)."""
TRIM = ("trim-context",)
STUCK = {"none": 9, "add-missing-results": 9, "both-directions": 0}
"""Per repair: the trim scenarios that never finish (test_trim_context_at_depth_2 derives them)."""


def real_row(repair: str) -> Summary:
    """The triage agent swept for real at depth 2 with trim-context under `repair` (keys on, stable IDs), as its row."""
    target = builtin.target(
        "openai-agents", None, keys=True, call_ids="stable", durability=None, transcript_repair=repair
    )
    options = SweepOptions(depth=2, workers=2, dedup=True, snapshots=True)
    result = sweep(target, builtin.check(TRIAGE, "openai-agents"), options, None, Nemesis(TRIM))
    return rows.summary(result, variant=target.label, job="triage", tracker="keyed", faults=TRIM)


def model_row(capsys: pytest.CaptureFixture[str], folder: Path, repair: str) -> dict[str, Any]:
    """`crashsweep explore` of SDK_DESIGN at depth 2 with trim-context, as its JSON row."""
    design = folder / f"openai-agents-{repair}.toml"
    design.write_text(SDK_DESIGN.format(repair=repair))
    assert main(
        ["explore", "--design", str(design), "--depth", "2", "--faults", "trim-context", "--format", "json"]
    ) in (0, 1)
    row: dict[str, Any] = json.loads(capsys.readouterr().out)
    return row


@pytest.mark.parametrize("repair", ["none", "add-missing-results", "both-directions"])
def test_trim_context_at_depth_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, repair: str) -> None:
    """The triage agent at depth 2 with trim-context: none and add-missing-results stuck 9 times, both-directions never.

    Depth 1 has no trim: a trim is a move at a restart, so it comes after a crash (2 moves).
    The 19 points (test_openai_agents.expected_points): 19 one-move scenarios. Two crashes: the
    restart after a crash at point 1 passes all 19; at 2-9 (the user's input saved, turn 1 not)
    17 (the input is not written again); at 10-16 (turn 1 saved) the 9 points of turn 2 and the
    final answer; at 17-18 (turn 2 saved) 2; at 19 none: 19 + 8*17 + 7*9 + 2*2 = 222. A trim's
    chance is a restart whose session holds turn 1 (a reply with its outputs) and no final
    answer: after a crash at 10-18, 9 scenarios of a crash and a trim (trim twice, or a crash
    after the trim, is 3 moves): 231 of two moves, 250 in all.

    The trim drops the user's input and reply 1; create_a's and create_b's outputs stay without
    their calls. Under none the SDK sends them as stored, the provider refuses (HTTP 400) and
    the restart is stuck: 9 never finish, well-formed-transcript and can-finish broken; the
    comment is missing in the 4 of them whose crash came before the tracker took it (10-13).
    add-missing-results finds no call without its output (the SDK stores a turn's calls with
    their outputs): the same. both-directions leaves the outputs out of what is sent, the model
    reads turn 1 done from the items moved aside and asks for turn 2 (the comment's key makes
    its resend after 14-16 harmless): every scenario finishes, nothing is duplicated or lost.

    The model of SDK_DESIGN agrees on every verdict the real check decides (approved-exactly is
    not decided for the SDK: transcripts.UNDECIDED), on the 9 trims and on the scenarios that
    never finish; its other counts differ with its points (18, not the SDK's 19: the points are
    not mapped one to one, as conform maps the reference loop's). Cost: the three real sweeps
    take about 5 s of CPU each (zygote and processes: `resource.getrusage`), 14 s of wall.
    """
    real = real_row(repair)
    model = model_row(capsys, tmp_path, repair)
    assert (real.crash_points, real.scenarios) == (19, {1: 19, 2: 231})
    assert real.moves == {1: {"crash": 19, "trim-context": 0}, 2: {"crash": 453, "trim-context": 9}}
    assert (real.never_finish, real.missing, real.dups) == (STUCK[repair], 4 if STUCK[repair] else 0, 0)
    decided = {v.name: v.holds for v in real.invariants if v.decided}
    assert decided == {
        "no-duplicate": True,
        "no-loss": True,
        "well-formed-transcript": not STUCK[repair],
        "can-finish": not STUCK[repair],
    }
    assert {name: model["invariants"][name]["holds"] for name in decided} == decided
    assert (model["moves"]["2"]["trim-context"], model.get("never_finish", 0)) == (9, STUCK[repair])
