"""`crashsweep sweep --framework langgraph|dbos` at depth 1: the built-in agents, swept for real.

What each setup must show (the lesson of the framework sweeps): keys off, a crash between a
tool's effect and its durable record duplicates the effect; keys derived from the framework's
IDs (thread + tool call; workflow + step) prevent it, but only while the model's reply and its
call IDs are durable before the first send: LangGraph's durability "exit" saves nothing before
the run ends, so a re-asked model with fresh call IDs hands out new keys.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from crashsweep.cli.main import main
from crashsweep.cli.prog import ENV as PROG_ENV
from crashsweep.realsweep import rows
from crashsweep.realsweep.adapters import builtin, frameworks, transcripts
from crashsweep.realsweep.sweep import Scenario, SweepError, SweepOptions, sweep
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess, package_pythonpath
from crashsweep.spec import invariants
from crashsweep.spec.job import load_job
from tests.docs.shown import printed
from tests.paths import ROOT


def sweep_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    """Run `crashsweep sweep --depth 1 --format json ARGS`; its status and its row."""
    status = main(["sweep", "--depth", "1", "--workers", "2", "--format", "json", *args])
    return status, json.loads(capsys.readouterr().out)


def test_langgraph_default_durability_and_parallel_tools_is_swept_keys_off_duplicates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Durability async, ToolNode's parallel calls, keys off: swept (no refusal), with duplicates, no loss."""
    status, row = sweep_json(capsys, "--framework", "langgraph", "--keys", "off")
    assert status == 1
    assert row["variant"] == "langgraph async, keys off, call IDs stable"
    assert row["crash_points"] == 29
    assert row["with_dups"] > 0
    assert row["missing"] == 0
    assert len(row["unreached"]) < row["scenarios"]["1"]


def test_langgraph_keys_from_thread_and_stable_call_ids_leave_no_duplicate() -> None:
    """Durability async, keys on, the job's call IDs: not one duplicate in any scenario.

    These are the defaults: docs/guide/frameworks.md shows that sweep, and tests/docs/test_blocks.py
    runs it and compares what it prints with the page, so its figures are read off the page.
    """
    shown = printed("docs/guide/frameworks.md", "bin/crashsweep sweep --framework langgraph --depth 1")
    assert shown.startswith(
        "langgraph async, keys on, call IDs stable  (real sweep; job triage, tracker keyed, depth 1)"
    )
    assert "with_dups 0   dups 0   missing 0" in shown
    assert "VIOLATED" not in shown  # exit 0


def test_langgraph_exit_with_fresh_call_ids_duplicates_even_with_keys(capsys: pytest.CaptureFixture[str]) -> None:
    """Durability exit saves once, at the end: 3 tool points + 2 around that put = 5 crash points.

    A crash at any of the first four restarts from nothing; the re-asked model hands out new
    call IDs, so new keys, and every effect already made is made again: 4 scenarios with
    duplicates. The two crashes after the last write (the comment's point, before the put)
    redo all three writes (3 + 3); the two at the creates' points redo one or both creates,
    whose requests run in parallel (1 to 2 each): 8 to 10 duplicates in all.
    """
    status, row = sweep_json(capsys, "--framework", "langgraph", "--durability", "exit", "--call-ids", "fresh")
    assert status == 1
    assert (row["crash_points"], row["with_dups"]) == (5, 4)
    assert 8 <= row["dups"] <= 10


def test_dbos_without_keys_duplicates_and_prints_a_rerun_that_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """DBOS, keys off: 20 points (test_dbos.expected_points); 6 scenarios with one duplicate each.

    A write is made twice exactly when the crash falls between its effect and its step's
    record: at "tracker filed/commented ..." or at "before recording step N" of each of the
    three writes: 2 x 3 = 6 scenarios, 1 duplicate each. The printed re-run command runs that
    one scenario again and finds the duplicate again; every scenario is in the JSONL file.
    Both commands run in this process (main, as the `crashsweep` script does), from a folder of
    their own. The determinism check a DBOS sweep makes first is the keys-on test's (below):
    keys change what a request carries, not whether two runs from one world agree.
    """
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(PROG_ENV, raising=False)  # the printed commands start with `crashsweep`
    jsonl = tmp_path / "scenarios.jsonl"
    args = ["sweep", "--framework", "dbos", "--keys", "off", "--depth", "1", "--workers", "2", "--no-determinism"]
    status = main([*args, "--scenarios", str(jsonl)])
    out, err = capsys.readouterr()
    assert status == 1, err
    assert "crash points  20" in out
    assert "with_dups 6   dups 6   missing 0" in out
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(records) == 21
    assert records[0]["crashes"] == []
    assert sum(1 for r in records if r["outcome"]["dups"]) == 6
    match = re.search(r"re-run \(no-duplicate, scenario 4\):  (.*)", out)
    assert match is not None
    command = shlex.split(match.group(1))
    assert command[0] == "crashsweep"
    again = main(command[1:])
    out, err = capsys.readouterr()
    assert again == 1, err
    assert "crash at 'tracker filed issue create_a'" in out
    assert "dups 1   missing 0" in out


def test_dbos_with_keys_from_workflow_and_step_leaves_no_duplicate(capsys: pytest.CaptureFixture[str]) -> None:
    """DBOS, keys on: the key of (workflow, step) is the same when recovery re-runs the step: none."""
    status, row = sweep_json(capsys, "--framework", "dbos", "--keys", "on")
    assert status == 0
    assert (row["crash_points"], row["with_dups"], row["dups"], row["missing"]) == (20, 0, 0, 0)
    # DBOS replays what it recorded: the depth-1 sweep checked determinism first, from the empty
    # world and the world a crash at each of the 20 points leaves (21 start worlds).
    assert row["deterministic"] == {"holds": True, "start_worlds": 21}


def test_bad_choices_are_refused_before_any_work() -> None:
    """Durability goes with LangGraph; call IDs are stable or fresh; a job option the agents lack is refused."""
    with pytest.raises(
        SweepError, match=re.escape("--durability sync goes with --framework langgraph (sync, async or exit)")
    ):
        builtin.target("dbos", None, keys=True, call_ids="stable", durability="sync")
    with pytest.raises(SweepError, match=re.escape("--durability never goes with --framework langgraph (sync, async")):
        builtin.target("langgraph", None, keys=True, call_ids="stable", durability="never")
    with pytest.raises(SweepError, match="stable or fresh"):
        builtin.target("langgraph", None, keys=True, call_ids="new", durability=None)
    with pytest.raises(SweepError, match=re.escape("unknown framework 'ray' (known: langgraph, dbos, openai-agents,")):
        builtin.require("ray")


def test_a_framework_not_installed_is_named_with_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the package: one line naming the pip extra."""
    gone = tuple(replace(f, package="no_such_package_here") if f.name == "dbos" else f for f in frameworks.REGISTRY)
    monkeypatch.setattr(frameworks, "REGISTRY", gone)
    with pytest.raises(SweepError, match=re.escape("pip install 'crashsweep[dbos]'")):
        builtin.require("dbos")


def test_the_target_is_the_example_agent_with_its_options() -> None:
    """Forked from a zygote of the agent's module, its options as sys.argv; the row names the setup."""
    target = builtin.target("langgraph", Path("job.toml"), keys=False, call_ids="fresh", durability="exit")
    assert target.fork == "crashsweep.realsweep.adapters.langgraph_agent:main"
    assert target.fork_argv == (
        "--keys",
        "off",
        "--call-ids",
        "fresh",
        "--durability",
        "exit",
        "--job",
        str(Path("job.toml").resolve()),
    )
    assert target.label == "langgraph exit, keys off, call IDs fresh"
    assert target.env["PYTHONPATH"] == package_pythonpath()


SMALL_JOB = 'name = "small"\nturns = [["create_a"]]\n[calls]\ncreate_a = { tool = "create_issue", writes = true }\n'


@pytest.mark.parametrize("framework", [f.name for f in frameworks.REGISTRY])
def test_each_frameworks_check_decides_what_its_stack_shows_and_says_why_not_the_rest(
    framework: str, tmp_path: Path, keyed_service: ServiceProcess
) -> None:
    """builtin.check(job, framework) on an empty world: every invariant decided but those transcripts.UNDECIDED lists.

    The conversation is read where the built-in agent saves one (OpenAI Agents SDK, LangGraph;
    none yet here: no events), and each fact the stack cannot see is "not decided" with its reason.
    """
    job = load_job(_file(tmp_path, SMALL_JOB))
    scenario = Scenario((), tmp_path, TrackerClient(keyed_service.space_url(framework)))
    history = builtin.check(job, framework)(scenario).history
    assert history is not None
    unseen = transcripts.UNDECIDED[framework]
    verdicts = {v.name: v for v in (i.judge(history) for i in invariants.registered())}
    assert {name for name, v in verdicts.items() if not v.decided} == {
        i.name for i in invariants.registered() if set(i.needs) & set(unseen)
    }
    assert all(v.why in unseen.values() for v in verdicts.values() if not v.decided)
    assert verdicts["well-formed-transcript"].decided == (framework in ("openai-agents", "langgraph"))
    assert not verdicts["approved-exactly"].decided


def test_langgraph_reads_its_checkpoints_messages_so_well_formed_transcript_is_decided(tmp_path: Path) -> None:
    """One write, keys on, durability sync, the framework's check: the last checkpoint is read in every scenario.

    LangGraph saves the model's reply (with its tool calls) in one checkpoint and the tools'
    messages after them, so no scenario leaves a request sent with a call unanswered.
    """
    path = _file(tmp_path, SMALL_JOB)
    target = builtin.target("langgraph", path, keys=True, call_ids="stable", durability="sync")
    result = sweep(target, builtin.check(load_job(path), "langgraph"), SweepOptions(depth=1, workers=2))
    verdicts = {v.name: v for v in rows.verdicts_of(result)}
    assert [name for name, v in verdicts.items() if v.decided and v.holds] == [
        "no-duplicate",
        "no-loss",
        "well-formed-transcript",
        "can-finish",
    ]
    assert verdicts["well-formed-transcript"].witnessed
    assert verdicts["approved-exactly"].why == transcripts.UNDECIDED["langgraph"]["approvals"]


def _file(folder: Path, text: str) -> Path:
    path = folder / "job.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("framework", [f.name for f in frameworks.REGISTRY])
def test_a_gated_call_is_played_by_the_agents_that_play_approvals_and_refused_by_the_rest(
    framework: str, tmp_path: Path
) -> None:
    """The OpenAI Agents SDK's built-in agent parks a gated call for a scripted yes (Framework.plays); others refuse."""
    job = load_job(ROOT / "examples" / "triage-approval.toml")
    if "approval" in frameworks.named(framework).plays:
        builtin.check(job, framework)
        return
    with pytest.raises(SweepError, match=r"^calls\.comment_a: the example agents do not implement 'approval'$"):
        builtin.check(job, framework)
