"""The pieces the adapters share: the scripted model, its ledger, the tracker tools' keys, the default check."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from crashsweep.realsweep.adapters import script
from crashsweep.realsweep.sweep import Scenario
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec import cassette
from crashsweep.spec.job import TRIAGE, Call, Job, JobError
from crashsweep.spec.keys import key


def test_stable_ids_are_the_jobs_and_the_same_on_every_ask(tmp_path: Path) -> None:
    """Asked twice for turn 1, the model hands out the job's IDs both times; after the last turn, None."""
    model = script.ScriptedModel(TRIAGE, "stable", tmp_path)
    first, again = model.reply(0), model.reply(0)
    assert first is not None
    assert again is not None
    assert [c.id for c in first] == [c.id for c in again] == ["create_a", "create_b"]
    assert [c.name for c in first] == ["create_issue", "create_issue"]
    assert model.reply(2) is None


def test_fresh_ids_change_on_every_ask_and_repeat_from_the_same_disk_state(tmp_path: Path) -> None:
    """Fresh IDs: a second ask gets new ones; another run from an empty folder gets the first run's."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    first = script.ScriptedModel(TRIAGE, "fresh", one).reply(0)
    again = script.ScriptedModel(TRIAGE, "fresh", one).reply(0)
    elsewhere = script.ScriptedModel(TRIAGE, "fresh", two).reply(0)
    assert first is not None
    assert again is not None
    assert elsewhere is not None
    assert {c.id for c in first}.isdisjoint(c.id for c in again)
    assert [c.id for c in first] == [c.id for c in elsewhere]
    assert script.ledger_ids(one) == {
        **{c.id: j for c, j in zip(first, ("create_a", "create_b"), strict=True)},
        **{c.id: j for c, j in zip(again, ("create_a", "create_b"), strict=True)},
    }


def test_the_comment_goes_to_the_first_issue_filed_and_a_read_searches(tmp_path: Path) -> None:
    """Turn 2 of the triage job: search_issues, then comment on the issue create_a filed."""
    calls = script.ScriptedModel(TRIAGE, "stable", tmp_path).reply(1)
    assert calls is not None
    assert [(c.name, c.args) for c in calls] == [
        ("search_issues", {"query": "issue"}),
        ("comment", {"issue_title": "issue create_a", "body": "comment comment_a"}),
    ]


def test_a_call_with_args_plays_the_programs_own_tool(tmp_path: Path) -> None:
    """A job mapped to a user's tools: each call names the tool and its arguments, as the job file says."""
    refund = Call("refund_a", "refund", True, args=(("order_id", "A-1"), ("amount", 20)))
    lookup = Call("lookup_a", "lookup_order", False, args=(("order_id", "A-1"),))
    calls = script.ScriptedModel(Job("support", ((lookup,), (refund,))), "stable", tmp_path).reply(1)
    assert calls is not None
    assert [(c.id, c.name, c.args) for c in calls] == [("refund_a", "refund", {"order_id": "A-1", "amount": 20})]


def test_a_comment_with_no_issue_before_it_is_refused_at_once(tmp_path: Path) -> None:
    """A job that comments before filing anything cannot be played: JobError naming the call."""
    job = Job("bad", ((Call("c", "comment", True),),))
    with pytest.raises(JobError, match=r"calls\.c"):
        script.ScriptedModel(job, "stable", tmp_path)
    with pytest.raises(ValueError, match="stable or fresh"):
        script.ScriptedModel(TRIAGE, "random", tmp_path)


def test_keys_are_spec_keys_of_the_frameworks_ids() -> None:
    """Keys on: key(run, rest joined by "/"); keys off: no key."""
    client = TrackerClient("http://127.0.0.1:1")
    assert script.TrackerTools(True, client).key("thread-1", "call_9") == key("thread-1", "call_9")
    assert script.TrackerTools(True, client).key("wf", "step 3") == key("wf", "step 3")
    assert script.TrackerTools(False, client).key("thread-1", "call_9") is None


def test_a_keyed_write_sent_twice_is_filed_once(keyed_service: ServiceProcess) -> None:
    """The same call sent twice with keys on: one record at a tracker that honours keys; keys off: two."""
    client = TrackerClient(keyed_service.space_url("tools"))
    for keys in (True, True, False, False):
        name = "keyed" if keys else "plain"
        script.TrackerTools(keys, client).create_issue(name, run="t", call=name, key_parts=("t", name))
    assert [r["call"] for r in client.records()] == ["keyed", "plain", "plain"]


def test_the_default_check_maps_fresh_ids_back_to_the_jobs_calls(tmp_path: Path, keyed_service: ServiceProcess) -> None:
    """Fresh IDs from two asks of turn 1, create_a sent under both: one duplicate of create_a, two writes missing."""
    client = TrackerClient(keyed_service.space_url("check"))
    model = script.ScriptedModel(TRIAGE, "fresh", tmp_path)
    first, again = model.reply(0), model.reply(0)
    assert first is not None
    assert again is not None
    for call in (first[0], again[0]):
        client.create_issue("issue create_a", run="t", call=call.id)
    outcome = script.check(TRIAGE)(Scenario((), tmp_path, client))
    assert (outcome.dups, outcome.missing, outcome.applied) == (1, 2, 2)


def test_target_args_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """$CRASHSWEEP_ARGS, a JSON object, as strings; none outside a sweep."""
    monkeypatch.delenv(script.ARGS, raising=False)
    assert script.target_args() == {}
    monkeypatch.setenv(script.ARGS, '{"durability": "sync", "n": 2}')
    assert script.target_args() == {"durability": "sync", "n": "2"}


def test_every_built_in_agent_takes_the_options_builtin_passes() -> None:
    """builtin.arguments's --job, --keys and --call-ids, parsed by the one parser every agent starts from."""
    from crashsweep.realsweep.adapters import builtin

    parser = script.agent_parser("pkg.agent")
    assert parser.prog == "python -m pkg.agent"
    args = parser.parse_args(builtin.arguments(None, False, "fresh", None))
    assert (args.job, args.keys, args.call_ids) == (None, "off", "fresh")
    assert vars(parser.parse_args([])) == {"job": None, "keys": "on", "call_ids": "stable"}


def test_play_runs_the_tracker_tool_a_scripted_call_names(tmp_path: Path) -> None:
    """A reply's calls, as engines pass them (dicts), reach create_issue, comment or search with their arguments."""
    seen: list[tuple[str, ...]] = []

    class Tools:
        def create_issue(self, call_id: str, title: str) -> str:
            seen.append(("create", call_id, title))
            return "filed"

        def comment(self, call_id: str, issue_title: str, body: str) -> str:
            seen.append(("comment", call_id, issue_title, body))
            return "commented"

        def search(self, call_id: str, query: str) -> str:
            seen.append(("search", call_id, query))
            return "[]"

    model = script.ScriptedModel(TRIAGE, "stable", tmp_path)
    calls = [*(model.reply(0) or []), *(model.reply(1) or [])]
    answers = [script.play(Tools(), dataclasses.asdict(call)) for call in calls]
    assert answers == ["filed", "filed", "[]", "commented"]
    assert seen == [
        ("create", "create_a", "issue create_a"),
        ("create", "create_b", "issue create_b"),
        ("search", "search", "issue"),  # triage names its read "search"
        ("comment", "comment_a", "issue create_a", "comment comment_a"),
    ]


PLAYED = cassette.Cassette(
    (
        cassette.Ask(
            (
                cassette.CassetteCall("lookup", "lookup_order", (("order_id", "A-1"),)),
                cassette.CassetteCall("search", "search_issues", (("query", "refund"),)),
            )
        ),
        cassette.Ask(
            (
                cassette.CassetteCall(
                    "refund",
                    "refund",
                    (
                        ("order_id", cassette.Ref("lookup", ("order", "id"), "A-1")),
                        ("about", cassette.Ref("search", (), "[]")),
                        ("amount", 20),
                    ),
                ),
            )
        ),
        cassette.Ask((), "refunded A-1"),
    )
)
"""A user's own tools: a lookup and a search, then a refund of the order the lookup found."""


@pytest.fixture
def played(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PLAYED written to a file that $CRASHSWEEP_CASSETTE names (absolute), as `sweep --cassette` sets it."""
    path = tmp_path / "cassette.jsonl"
    cassette.write(path, PLAYED)
    monkeypatch.setenv(script.CASSETTE, str(path))
    return path


def test_the_model_plays_the_cassette_instead_of_its_job(played: Path, tmp_path: Path) -> None:
    """Tools, arguments (references as recorded) and IDs as recorded; after the last turn the final answer."""
    model = script.ScriptedModel(TRIAGE, "stable", tmp_path)
    first, second = model.reply(0), model.reply(1)
    assert first is not None
    assert second is not None
    assert [(c.id, c.name, c.args) for c in first] == [
        ("lookup", "lookup_order", {"order_id": "A-1"}),
        ("search", "search_issues", {"query": "refund"}),
    ]
    assert [(c.id, c.name, c.args) for c in second] == [
        ("refund", "refund", {"order_id": "A-1", "about": "[]", "amount": 20})
    ]
    assert model.reply(2) is None
    assert model.final("default") == "refunded A-1"
    assert script.ledger_ids(tmp_path) == {"lookup": "lookup", "search": "search", "refund": "refund"}


def test_without_the_variable_the_job_is_played(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(script.CASSETTE, raising=False)
    model = script.ScriptedModel(TRIAGE, "stable", tmp_path)
    assert [c.id for c in model.reply(0) or []] == ["create_a", "create_b"]
    assert model.final("default") == "default"


def test_references_are_read_from_the_results_given(played: Path, tmp_path: Path) -> None:
    """The lookup found order B-7 this time: the refund goes to it; the search's answer is passed as its text."""
    model = script.ScriptedModel(TRIAGE, "stable", tmp_path)
    results = {"lookup": '{"order": {"id": "B-7"}}', "search": '[{"number": 3}]'}
    calls = model.reply(1, results)
    assert calls is not None
    assert calls[0].args == {"order_id": "B-7", "about": '[{"number": 3}]', "amount": 20}
    with pytest.raises(
        cassette.CassetteError, match=r"^call 'lookup''s result, path \['order', 'id'\]: nothing at 'id'"
    ):
        model.reply(1, {"lookup": '{"order": {}}'})


def test_fresh_ids_are_new_on_every_ask_and_mapped_back_to_the_cassettes(played: Path, tmp_path: Path) -> None:
    """Fresh IDs: the ledger maps each to the cassette's call; the results, keyed by them, are read through it."""
    model = script.ScriptedModel(TRIAGE, "fresh", tmp_path)
    first = model.reply(0)
    assert first is not None
    assert not {c.id for c in first} & {"lookup", "search"}
    results = {first[0].id: '{"order": {"id": "C-3"}}'}
    second = model.reply(1, results)
    assert second is not None
    assert second[0].args["order_id"] == "C-3"
    assert script.ledger_ids(tmp_path) == {first[0].id: "lookup", first[1].id: "search", second[0].id: "refund"}


def test_a_cassette_named_by_a_relative_path_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The swept process works in its own folder: a relative path would name another file there."""
    monkeypatch.setenv(script.CASSETTE, "cassette.jsonl")
    with pytest.raises(cassette.CassetteError, match=r"^\$CRASHSWEEP_CASSETTE 'cassette.jsonl': expected an absolute"):
        script.ScriptedModel(TRIAGE, "stable", tmp_path).reply(0)


def test_what_an_agent_is_made_from_follows_the_job_file_as_it_is(tmp_path: Path) -> None:
    """The built-in triage job keys by its options; a job file by its path and its signature, edited or not."""
    parser = script.agent_parser("m")
    assert script.made_from(parser.parse_args([])) == (None, None, "on", "stable")
    job = tmp_path / "job.toml"
    job.write_text("a")
    args = parser.parse_args(["--job", str(job), "--keys", "off"])
    before = script.made_from(args)
    assert before[0] == str(job)
    assert before[2:] == ("off", "stable")
    assert script.made_from(args) == before
    job.write_text("ab")  # edited: another size
    assert script.made_from(args) != before
