"""crashsweep.otel's span log under a real sweep of the built-in pydantic-ai agent (slow: two sweeps).

`crashsweep sweep --framework pydantic-ai --depth 1 --no-dedup --keep DIR`, keys off and on,
with CRASHSWEEP_OTEL=tool-spans.jsonl: each process of the agent
(realsweep/adapters/pydantic_ai_agent.py) is traced by pydantic-ai's own instrumentation to
crashsweep's span processor, writing work/tool-spans.jsonl. `--no-dedup` runs every scenario
for real (a crash is a SIGKILL) in a folder of its own, DIR/scenarios/s-CODE (`s` for the run
with no crash), CODE the scenario's `code` in DIR/scenarios.jsonl beside its crash points.
`--no-determinism`: the check would run every start world twice more, and is not what this tests.

The contrast, the stock BatchSpanProcessor and FileSpanExporter leaving nothing of a tool a
process was killed inside, is tests/test_otel.py's child-process test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashsweep.cli.audit import judged
from crashsweep.importers import spans
from crashsweep.importers.units import units
from crashsweep.spec.history import Event
from tests.realsweep.helpers import child_env

LOG = "tool-spans.jsonl"
IN_A_TOOL = {
    "tracker filed issue create_a": "create_a",
    "tracker filed issue create_b": "create_b",
    "tracker commented comment comment_a": "comment_a",
}
"""The crash points inside a tool's body, and the call whose tool it is, by hand from the code:
script.TrackerTools passes "tracker filed TITLE" / "tracker commented BODY" after the tracker
accepted the write and before the tool returns (TITLE "issue CALL", BODY "comment CALL" for
TRIAGE's calls, whose model call IDs are the job's with stable call IDs). The agent's other
points are DBOS's records and the end of a model request (pydantic_ai.py, dbos.py): the tools
are no DBOS steps, so no tool span is open at them. A turn's async tools run one after the
other (their bodies never await), so one tool span at most is open at a crash."""
WRITES = ("create_issue", "comment")


@pytest.fixture(scope="module", params=["off", "on"])
def kept(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """(keys, the folder) of a traced depth-1 sweep of the pydantic-ai agent, every scenario kept."""
    keys: str = request.param
    folder = tmp_path_factory.mktemp(f"keys-{keys}") / "kept"
    command = [sys.executable, "-m", "crashsweep", "sweep", "--framework", "pydantic-ai", "--depth", "1"]
    command += ["--keys", keys, "--no-dedup", "--no-determinism", "--keep", str(folder)]
    done = subprocess.run(command, env=child_env(CRASHSWEEP_OTEL=LOG), capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: keys off, the sweep finds duplicates
    return keys, folder


def worlds(folder: Path) -> Iterator[tuple[str | None, Path]]:
    """(the crash point, or None for the run with none; the scenario's folder) of each kept scenario."""
    for line in (folder / "scenarios.jsonl").read_text().splitlines():
        scenario = json.loads(line)
        crashes = scenario["crashes"]
        assert len(crashes) <= 1  # depth 1
        code = scenario["code"]
        yield (crashes[0]["point"] if crashes else None), folder / "scenarios" / (f"s-{code}" if code else "s")


def unknown(events: tuple[Event, ...]) -> list[Event]:
    """The tool_run invokes with no ok, fail or info after them of their call in their (run, incarnation)."""
    open_: list[Event] = []
    for event in events:
        if event.f != "tool_run":
            continue
        if event.type == "invoke":
            open_.append(event)
            continue
        same = [e for e in open_ if (e.run, e.incarnation, e.call_id) == (event.run, event.incarnation, event.call_id)]
        assert same, event  # an end always follows its own start
        open_.remove(same[0])
    return open_


def test_an_attempt_of_unknown_outcome_exactly_where_a_crash_struck_inside_a_tool(kept: tuple[str, Path]) -> None:
    """Each world's log: one attempt never ended, of the crashed process, where the crash was in a tool body."""
    keys, folder = kept
    points = set()
    for point, world in worlds(folder):
        (history,) = spans.KIND.read(world / "work" / LOG)
        found = unknown(history.events)
        if point in IN_A_TOOL:
            assert [(e.incarnation, e.call_id) for e in found] == [(0, IN_A_TOOL[point])], world
        else:
            assert found == [], world
        last = history.events[-1]  # every scenario restarts to the end: the agent's run finished last
        assert (last.f, last.type, last.status) == ("run_status", "ok", "finished"), world
        writes = [e for e in history.events if e.tool in WRITES]
        assert {bool(e.key) for e in writes} == {keys == "on"}, world
        for end in (e for e in writes if e.type != "invoke"):  # the key at the start is the one the tool sent
            start = next(e for e in history.events if e.src == end.src and e.type == "invoke")
            assert start.key == end.key, world
        points.add(point)
    assert set(IN_A_TOOL) <= points  # the sweep crashed inside each tool


def test_audit_finds_an_unknown_never_settled_where_no_key_could_settle_it(kept: tuple[str, Path]) -> None:
    """unknown-never-settled: in each keys-off world left an attempt of unknown outcome, of its call; nowhere else.

    With keys on, the restarted tool sends the same key and its attempt completes: that settles it.
    """
    keys, folder = kept
    for point, world in worlds(folder):
        runs = judged(units([world]))
        assert [run.run for run in runs] == ["triage"]  # spans, DBOS and the tracker name one run, the workflow
        found = [a for run in runs for a in run.found if a.name == "unknown-never-settled"]
        expected = [IN_A_TOOL[point]] if keys == "off" and point in IN_A_TOOL else []
        assert [a.call for a in found] == expected, world
        assert not any(a.definite for a in found)
