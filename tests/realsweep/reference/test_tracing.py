"""The reference loop's OpenTelemetry spans (issue 46, section 2), recorded by a real listing run.

Each run is what a user types, `CRASHSWEEP_OTLP=$PWD/run.jsonl crashsweep sweep ... --list-points
--format json`, in a tmp folder: one uninterrupted process of the loop (forked from the zygote, or
with --spawn exec a new interpreter) appends its spans to the file, read back with
crashsweep.importers.otlp.read_spans. The expectations are derived by hand from the loop's code
(loop.py, parts.py, approvals.py) and the TRIAGE job (turns [create_a, create_b], [search,
comment_a]; create_a, create_b file issues, comment_a comments on create_a's issue):

- save-after-reply (loop.py `save_after_reply`): Save(start), then per turn the reply save, a
  result save after each call, the turn save; the final answer's save. Each checkpoint save passes
  "WHAT: tmp written" and "WHAT: renamed" (fsync "none"), inside its save span.
- Three asks of the scripted model: reply 1, reply 2 and the final answer ("done").
- The tracker numbers its records in one sequence: create_a #1, create_b #2, the comment #3; the
  search answers with the job's issues, "2 issues".
- keys-and-markers (`attempt_markers`, keyed): a marker save before each write, and every write
  sends Key(run, call); a read sends none.
- attempt-markers-memory on triage-approval (approvals.py `gate`): comment_a is gated; the person
  is asked once, between the points "approval requested comment_a" and "approved comment_a";
  approval_storage "memory" saves no approval.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from crashsweep.importers.otlp import Span, read_spans
from crashsweep.realsweep.adapters import script
from crashsweep.realsweep.reference import target as reference
from crashsweep.realsweep.reference import tracing
from crashsweep.spec.job import TRIAGE, Job, job_from_mapping, load_job
from tests.paths import ROOT
from tests.realsweep.helpers import child_env, run_python

SAVES = [
    "start", "reply 1", "result create_a", "result create_b", "turn 1",
    "reply 2", "result search", "result comment_a", "turn 2", "final",
]  # fmt: skip
TOOLS = [
    ("create_issue", "create_a", {"title": "issue create_a"}, "#1"),
    ("create_issue", "create_b", {"title": "issue create_b"}, "#2"),
    ("search_issues", "search", {"query": "issue"}, "2 issues"),
    ("comment", "comment_a", {"issue_title": "issue create_a", "body": "comment comment_a"}, "#3"),
]
"""Each send's (tool, the model's call ID, arguments, answer), in order."""
REPLIES = [
    [(tool, call, args) for tool, call, args, _ in TOOLS[:2]],
    [(tool, call, args) for tool, call, args, _ in TOOLS[2:]],
]


def record(tmp_path: Path, *args: str) -> tuple[list[str], list[Span]]:
    """Run `crashsweep sweep ARGS --list-points --format json` traced: the listed points, and the spans recorded."""
    trace = tmp_path / "run.jsonl"
    command = [sys.executable, "-m", "crashsweep", "sweep", *args, "--list-points", "--format", "json"]
    done = subprocess.run(
        command, cwd=tmp_path, env=child_env(CRASHSWEEP_OTLP=str(trace)), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    listed = [point["name"] for point in json.loads(done.stdout)["points"]]
    return listed, list(read_spans(trace))


def named(spans: Sequence[Span], prefix: str) -> list[Span]:
    return [span for span in spans if span.name.startswith(prefix)]


def points(spans: Sequence[Span]) -> list[tuple[int, str]]:
    """Every point recorded in the spans, as (seq, name), in seq order."""
    found = [
        (int(event.attributes["crashsweep.point.seq"]), event.attributes["crashsweep.point.name"])
        for span in spans
        for event in span.events
        if event.name == "crashsweep.point"
    ]
    return sorted(found)


def the_agent(spans: Sequence[Span], design: str, job: str) -> Span:
    """The one agent span, the root every other span nests under (directly)."""
    (agent,) = named(spans, "invoke_agent ")
    assert agent.name == f"invoke_agent {design}"
    assert not agent.parent
    assert not agent.error
    assert {k: agent.attributes[k] for k in ("gen_ai.operation.name", "gen_ai.agent.name", "crashsweep.job")} == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": design,
        "crashsweep.job": job,
    }
    run = agent.attributes["gen_ai.conversation.id"]
    assert len(run) == 32
    assert all(c in "0123456789abcdef" for c in run)
    assert all(span.parent == agent.span_id for span in spans if span is not agent)
    return agent


@pytest.fixture(scope="module")
def save_after_reply(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[Span]]:
    return record(tmp_path_factory.mktemp("save-after-reply"), "--variant", "save-after-reply")


def test_save_after_reply_saves_are_spans_with_their_points(save_after_reply: tuple[list[str], list[Span]]) -> None:
    """The save spans in order, each holding its two points; every span under the one agent span."""
    _, spans = save_after_reply
    the_agent(spans, "save-after-reply", "triage")
    saves = named(spans, "save ")
    assert [span.attributes["crashsweep.save"] for span in saves] == SAVES
    assert [span.name for span in saves] == [f"save {what}" for what in SAVES]
    for what, span in zip(SAVES, saves, strict=True):
        assert [e.attributes["crashsweep.point.name"] for e in span.events] == [
            f"{what}: tmp written",
            f"{what}: renamed",
        ]
    assert not named(spans, "lock ")
    assert not named(spans, "approval ")


def test_save_after_reply_asks_and_sends_are_spans(save_after_reply: tuple[list[str], list[Span]]) -> None:
    """Three chat spans with the replies' calls (then "done"), four tool spans with arguments and answers."""
    _, spans = save_after_reply
    chats = named(spans, "chat ")
    assert [span.name for span in chats] == ["chat scripted"] * 3
    assert all(span.attributes["gen_ai.request.model"] == "scripted" for span in chats)
    replies = [json.loads(span.attributes["gen_ai.output.messages"]) for span in chats]
    for reply, calls in zip(replies, REPLIES, strict=False):
        assert reply == [
            {
                "role": "assistant",
                "parts": [{"type": "tool_call", "id": c, "name": t, "arguments": a} for t, c, a in calls],
            }
        ]
    assert replies[2] == [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]
    tools = named(spans, "execute_tool ")
    assert [
        (
            span.attributes["gen_ai.tool.name"],
            span.attributes["gen_ai.tool.call.id"],
            json.loads(span.attributes["gen_ai.tool.call.arguments"]),
            span.attributes["gen_ai.tool.call.result"],
        )
        for span in tools
    ] == TOOLS
    assert [span.name for span in tools] == [f"execute_tool {tool}" for tool, *_ in TOOLS]
    assert not any("crashsweep.idempotency_key" in span.attributes or span.error for span in tools)


def test_the_points_recorded_are_the_listed_points(save_after_reply: tuple[list[str], list[Span]]) -> None:
    """In seq order, numbered 1..n, the point events are the names --list-points gives of the same run."""
    listed, spans = save_after_reply
    recorded = points(spans)
    assert [seq for seq, _ in recorded] == list(range(1, len(listed) + 1))
    assert [name for _, name in recorded] == listed


def test_keys_and_markers_sends_keys_and_saves_markers(tmp_path: Path) -> None:
    """Every write's tool span carries its key, the read's none; a marker save before each write (--spawn exec)."""
    listed, spans = record(tmp_path, "--variant", "keys-and-markers", "--spawn", "exec")
    the_agent(spans, "keys-and-markers", "triage")
    tools = named(spans, "execute_tool ")
    keyed = {
        span.attributes["gen_ai.tool.call.id"]: span.attributes.get("crashsweep.idempotency_key") for span in tools
    }
    assert list(keyed) == ["create_a", "create_b", "search", "comment_a"]
    assert keyed["search"] is None
    assert all(len(keyed[c] or "") == 32 for c in ("create_a", "create_b", "comment_a"))
    assert len({keyed["create_a"], keyed["create_b"], keyed["comment_a"]}) == 3
    saves = [span.attributes["crashsweep.save"] for span in named(spans, "save ")]
    assert [what for what in saves if what.startswith("marker ")] == [
        "marker create_a",
        "marker create_b",
        "marker comment_a",
    ]
    assert [name for _, name in points(spans)] == listed


def test_an_approval_is_a_span_and_memory_storage_saves_none(tmp_path: Path) -> None:
    """attempt-markers-memory on triage-approval: a span `approval comment_a` with its two points, no approval save."""
    listed, spans = record(tmp_path, "--design", "attempt-markers-memory", "--job", "triage-approval")
    the_agent(spans, "attempt-markers-memory", "triage-approval")
    (approval,) = named(spans, "approval ")
    assert approval.name == "approval comment_a"
    assert dict(approval.attributes) == {"crashsweep.approval.call": "comment_a", "crashsweep.approval.granted": "true"}
    assert [e.attributes["crashsweep.point.name"] for e in approval.events] == [
        "approval requested comment_a",
        "approved comment_a",
    ]
    assert "save approval comment_a" not in [span.name for span in spans]
    assert [name for _, name in points(spans)] == listed


def test_a_failed_tool_is_an_error_span_and_its_resend_another(tmp_path: Path) -> None:
    """triage-fails: create_a's first send fails after accept (ToolFailed), the loop body sends it again."""
    job = ROOT / "examples" / "triage-fails.toml"
    listed, spans = record(tmp_path, "--variant", "save-after-reply", "--job", str(job))
    the_agent(spans, "save-after-reply", load_job(job).name)
    first, again = named(spans, "execute_tool ")[:2]
    assert first.error
    assert first.message == "ToolFailed: create_a"
    assert "gen_ai.tool.call.result" not in first.attributes
    assert [e.attributes["crashsweep.point.name"] for e in first.events] == [
        "tracker accepted create_a",
        "tool failed create_a",
    ]
    assert not again.error
    assert again.attributes["gen_ai.tool.call.id"] == "create_a"
    assert [name for _, name in points(spans)] == listed


def test_a_process_that_ends_by_an_exception_leaves_an_error_agent_span(tmp_path: Path) -> None:
    """The agent span of a run that raised gets an error status and the exception's words; `stop` flushes."""
    code = textwrap.dedent(
        """
        from pathlib import Path
        from crashsweep.realsweep.reference import tracing
        tracing.start(Path("."))
        try:
            with tracing.agent("d", "j"):
                tracing.conversation("r1")
                raise RuntimeError("the tracker went away")
        except RuntimeError:
            pass
        tracing.stop()
        """
    )
    done = run_python(code, tmp_path, CRASHSWEEP_OTLP="spans.jsonl")  # relative: to the work folder
    assert done.returncode == 0, done.stderr
    (agent,) = read_spans(tmp_path / "spans.jsonl")
    assert (agent.name, agent.error, agent.message) == ("invoke_agent d", True, "RuntimeError: the tracker went away")
    assert agent.attributes["gen_ai.conversation.id"] == "r1"


def test_untraced_the_loop_imports_nothing_of_opentelemetry(tmp_path: Path) -> None:
    """No $CRASHSWEEP_OTLP, as the sweep starts it (-S): no module of OpenTelemetry, one shared no-op per span site."""
    code = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from crashsweep.realsweep.reference import loop, tracing
        tracing.start(Path("."))
        sites = {tracing.agent("d", "j"), tracing.chat(), tracing.save("start"), tracing.lock("file")}
        sites.add(tracing.approval("c"))
        print(len(sites), sorted(name for name in sys.modules if name.startswith(("opentelemetry", "immutables"))))
        """
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=tmp_path, env=child_env(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "[]"]


def test_the_traced_target_keeps_site_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    """With $CRASHSWEEP_OTLP the loop's command drops -S: the SDK is in site-packages."""
    monkeypatch.delenv(tracing.OTLP, raising=False)
    assert reference.target("save-after-reply", None, "keyed").argv[1] == "-S"
    monkeypatch.setenv(tracing.OTLP, "/tmp/run.jsonl")
    assert reference.target("save-after-reply", None, "keyed").argv[1:3] == (
        "-m",
        "crashsweep.realsweep.reference.loop",
    )


ARGS_JOB = job_from_mapping(
    {
        "name": "own-tools",
        "turns": [["refund", "look", "note"]],
        "calls": {
            "refund": {"tool": "create_issue", "writes": True, "args": {"order_id": "A-1", "amount": 20}},
            "look": {"tool": "list_orders", "writes": False, "args": {}},
            "note": {"tool": "comment", "writes": True},
        },
    }
)


@pytest.mark.parametrize("job", [TRIAGE, load_job(ROOT / "examples" / "triage-approval.toml"), ARGS_JOB])
def test_the_arguments_are_the_scripted_models(job: Job) -> None:
    """tracing.arguments is script.arguments, call by call (the loop's process does not import script.py)."""
    found: dict[str, Any] = {call.id: tracing.arguments(job, call) for call in job.calls}
    assert found == {call.id: script.arguments(job, call) for call in job.calls}
