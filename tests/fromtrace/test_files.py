"""crashsweep.fromtrace.files: the four files, each read back by its own reader (spec/FROM_TRACE.md 4)."""

from __future__ import annotations

import os
from pathlib import Path

from crashsweep.fromtrace import files
from crashsweep.fromtrace.recording import read
from crashsweep.spec import cassette
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.spec.policy import read_design_file
from crashsweep.variants.presets import BUILT_IN
from tests.fromtrace.builder import Trace, triage


def test_the_files_read_back_as_the_job_the_design_and_the_replies(tmp_path: Path) -> None:
    recording = read(triage(keys=True, markers=True).write(tmp_path / "t.jsonl"))
    files.write(tmp_path / "out", files.texts(recording))
    assert sorted(os.listdir(tmp_path / "out")) == sorted(files.NAMES)  # no temporary file left
    assert load_job(tmp_path / "out" / "job.toml").turns == TRIAGE.turns
    _, _, policy = read_design_file(tmp_path / "out" / "design.toml")
    assert policy == {p.name: p.policy for p in BUILT_IN}["keys-and-markers"]
    design = (tmp_path / "out" / "design.toml").read_text(encoding="utf-8")
    assert "  # NOT DECIDED: no crash left a marked call without a result; one of" in design
    assert "  # read from: tool calls sent idempotency keys (from " in design
    replayed = cassette.read(tmp_path / "out" / "cassette.jsonl")
    assert [[c.id for c in ask.calls] for ask in replayed.asks] == [
        ["create_a", "create_b"],
        ["search", "comment_a"],
        [],
    ]
    lines = (tmp_path / "out" / "points.txt").read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if not line.startswith("#")][:1] == ["start: tmp written#1"]


def test_an_argument_found_in_an_earlier_replys_result_refers_to_it(tmp_path: Path) -> None:
    """refund's order_id and amount are in lookup's result, which the model read before its second reply.

    In triage, comment_a's issue title is also in the search's result, but both calls are of one
    reply: the model made them before either ran, so neither refers to the other.
    """
    same_reply = files.replies(read(triage().write(tmp_path / "t.jsonl")))
    assert dict(same_reply.asks[1].calls[1].args)["issue_title"] == "issue create_a"
    trace = Trace()
    trace.reply(("look", "lookup_order", {"order_id": "A-17"}))
    trace.tool("look", "lookup_order", {"order_id": "A-17"}, '{"order": {"id": "A-18", "total": 20, "paid": true}}')
    trace.reply(("pay", "refund", {"order_id": "A-18", "amount": 20, "paid": True, "note": "x"}))
    trace.tool("pay", "refund", {"order_id": "A-18", "amount": 20}, "ok")
    trace.reply()
    args = dict(files.replies(read(trace.write(tmp_path / "u.jsonl"))).asks[1].calls[0].args)
    assert args["order_id"] == cassette.Ref("look", ("order", "id"), "A-18")
    assert args["amount"] == cassette.Ref("look", ("order", "total"), 20)
    assert args["paid"] is True
    assert args["note"] == "x"
