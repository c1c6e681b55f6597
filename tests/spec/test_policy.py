"""The policy record: allowed values, refused combinations, and the enumeration of the space."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.spec.job import TRIAGE, Call, Job, load_job
from crashsweep.spec.policy import (
    CHOICES,
    CONVERSATION,
    PAUSE_LOCKS,
    RUNGS,
    PolicyError,
    all_policies,
    conversation_fields,
    policy_from_mapping,
)
from crashsweep.spec.retries import Layer

BASE: dict[str, object] = {
    "startup_save": True,
    "reply_save": "before-first-send",
    "result_saves": "each-call",
    "markers": "none",
    "keys": "none",
    "lock": "none",
}


def test_the_space_has_512_designs_each_once() -> None:
    # Hand count: startup_save 2 x reply_save 2 x result_saves 4 x lock 2 x on_tool_error 2 = 64,
    # times the (markers, keys, ladder) choices. A ladder is a sub-sequence of (rerun, lookup,
    # person) that ends with person: [person], [lookup, person], [rerun, person], [rerun, lookup,
    # person]. No markers, either key choice: 2; markers without keys (no rerun): 2; markers
    # with keys: 4. 64 x (2 + 2 + 4) = 512.
    policies = all_policies()
    assert len(policies) == 512
    assert len(set(policies)) == 512
    assert len({policy.label for policy in policies}) == 512
    assert policies == all_policies()


def test_every_field_value_occurs_in_the_space() -> None:
    # The whole space: with the locks only a second live process tells apart (POLICIES.md 1.6).
    policies = all_policies(PAUSE_LOCKS)
    for name, values in CHOICES.items():
        seen = (
            {rung for p in policies for rung in p.ladder} if name == "ladder" else {getattr(p, name) for p in policies}
        )
        assert seen == set(values), name


def test_mapping_round_trip() -> None:
    for policy in all_policies():
        assert policy_from_mapping(policy.as_mapping()) == policy


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reply_save": "sometimes"}, 'reply_save: expected one of "before-first-send", "never", not \'sometimes\''),
        ({"startup_save": "yes"}, "startup_save: expected true or false"),
        ({"ladder": ["person"]}, "ladder: without markers no call is ever settled on a ladder"),
        ({"markers": "before-writes"}, "ladder: markers need a ladder"),
        ({"markers": "before-writes", "ladder": ["lookup"]}, 'ladder: must end with "person"'),
        ({"markers": "before-writes", "ladder": ["person", "lookup"]}, 'ladder: no rung after "person"'),
        ({"markers": "before-writes", "ladder": ["person", "person"]}, "ladder: rung 'person' appears twice"),
        ({"markers": "before-writes", "ladder": ["rerun-when-harmless", "person"]}, 'keys = "none"'),
        (
            {"markers": "before-writes", "keys": "run-call", "ladder": ["lookup", "rerun-when-harmless", "person"]},
            "ladder: rungs climb from the cheapest",
        ),
        ({"markers": "before-writes", "ladder": ["ask"]}, "ladder: expected a list of rungs"),
        ({"ladder": "person"}, "ladder: expected a list of rungs"),
        ({"colour": "blue"}, "unknown key 'colour'"),
        ({"on_tool_error": "ignore"}, "on_tool_error: expected one of"),
    ],
)
def test_refusals_name_the_field(change: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError) as caught:
        policy_from_mapping({**BASE, **change})
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("field", ["startup_save", "reply_save", "result_saves", "markers", "keys", "lock"])
def test_required_fields(field: str) -> None:
    data = {name: value for name, value in BASE.items() if name != field}
    with pytest.raises(PolicyError, match=f"^{field}: missing"):
        policy_from_mapping(data)


def test_defaults_and_keyed() -> None:
    policy = policy_from_mapping(BASE)
    assert policy.ladder == ()
    assert policy.on_tool_error == "retry"
    assert not policy.keyed
    assert policy_from_mapping({**BASE, "keys": "run-call"}).keyed
    assert RUNGS == ("rerun-when-harmless", "lookup", "person")


# Durability fields (spec/POLICIES.md 1.5, spec/FAULTS.md 6).


def test_power_loss_gives_each_design_the_four_valid_durability_pairs() -> None:
    """512 designs x (none, ask-person), (none, fresh-run), (no-dir-fsync, ask-person), (full, ask-person)."""
    base = all_policies()
    with_power = all_policies(power_loss=True)
    assert len(with_power) == 2048
    assert len(set(with_power)) == 2048
    assert {(p.fsync, p.unreadable) for p in base} == {("none", "ask-person")}
    pairs = {(p.fsync, p.unreadable) for p in with_power}
    assert pairs == {
        ("none", "ask-person"),
        ("none", "fresh-run"),
        ("no-dir-fsync", "ask-person"),
        ("full", "ask-person"),
    }
    assert with_power[::4] == base  # each design first with the seed's pair
    for policy in with_power:
        assert policy_from_mapping(policy.as_mapping()) == policy


def test_the_seed_durability_is_left_out_of_a_design_file() -> None:
    """Default fsync and unreadable are not written, so every existing design file and figure stays as it was."""
    policy = all_policies()[0]
    assert "fsync" not in policy.as_mapping()
    assert "unreadable" not in policy.as_mapping()
    assert policy_from_mapping({**policy.as_mapping(), "fsync": "full"}).as_mapping()["fsync"] == "full"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"fsync": "sometimes"}, 'fsync: expected one of "none", "no-dir-fsync", "full", not \'sometimes\''),
        ({"unreadable": "panic"}, 'unreadable: expected one of "ask-person", "fresh-run", not \'panic\''),
        ({"fsync": "full", "unreadable": "fresh-run"}, 'unreadable: only a save with fsync = "none"'),
    ],
)
def test_bad_durability_fields_are_refused(change: dict[str, object], message: str) -> None:
    """A value out of range, or fresh-run where no checkpoint can be unreadable."""
    with pytest.raises(PolicyError, match=message.replace("(", r"\(")):
        policy_from_mapping({**all_policies()[0].as_mapping(), **change})


def test_the_locks_a_second_process_tells_apart_double_the_space() -> None:
    # Hand count: the 512 designs above with lock in (file, none), and the same 256 per lock value
    # for os-lock and lease+fencing: 4 x 256 = 1024. The default space keeps its 512.
    policies = all_policies(PAUSE_LOCKS)
    assert len(policies) == 1024
    assert len({policy.label for policy in policies}) == 1024
    assert {p.lock for p in policies} == {"file", "none", "os-lock", "lease+fencing"}
    assert [p for p in policies if p.lock in ("file", "none")] == list(all_policies())


def test_retry_layers_are_a_field_left_out_when_empty() -> None:
    """spec/RETRIES.md: `retries` defaults to none, is written only when given, and reads back the same."""
    plain = policy_from_mapping(BASE)
    assert plain.retries == ()
    assert "retries" not in plain.as_mapping()
    layers = [{"scope": "call", "on": "error", "attempts": 3}, {"scope": "run", "on": "timeout", "attempts": 2}]
    stacked = policy_from_mapping({**BASE, "retries": layers})
    assert stacked.as_mapping()["retries"] == layers
    assert policy_from_mapping(stacked.as_mapping()) == stacked
    assert stacked.label.endswith("retries[call x3 on error > run x2 on timeout]")


def test_a_bad_retry_stack_is_a_policy_error_naming_the_layer() -> None:
    with pytest.raises(PolicyError, match=r"retries\[1\]\.attempts: expected an integer from 2"):
        policy_from_mapping({**BASE, "retries": [{"scope": "call", "on": "error", "attempts": 0}]})


def test_the_space_crossed_with_retry_stacks_gives_each_design_each_stack() -> None:
    stacks = ((), (Layer("call", "error", 3),))
    crossed = all_policies(stacks=stacks)
    assert len(crossed) == 2 * len(all_policies())
    assert [p.retries for p in crossed[:2]] == list(stacks)
    assert crossed[::2] == all_policies()


def test_the_conversation_fields_default_to_what_every_design_did_and_are_written_only_when_set() -> None:
    """Each field's first value is the default; a policy at the defaults writes none of them."""
    plain = policy_from_mapping(
        {"startup_save": True, "reply_save": "never", "result_saves": "each-call", "markers": "none",
         "keys": "none", "lock": "none"}
    )  # fmt: skip
    assert (plain.transcript_on_restart, plain.approval_binding) == ("resume-pending", "call-and-args")
    assert (plain.approval_storage, plain.resume_granularity) == ("durable", "step")
    assert "approval_storage" not in plain.as_mapping()
    stored = policy_from_mapping({**plain.as_mapping(), "approval_storage": "service"})
    assert stored.as_mapping()["approval_storage"] == "service"
    assert stored.label.endswith("approval-storage-service")
    with pytest.raises(PolicyError, match="transcript_on_restart: expected one of"):
        policy_from_mapping({**plain.as_mapping(), "transcript_on_restart": "drop"})


def test_the_conversation_fields_that_matter_depend_on_the_job() -> None:
    """Transcripts matter on every job; approvals only with a gate; a node's resume only with a shared node.

    A batch's persistence where a turn has a write or two calls; the transcript's repair under trim-context.
    """
    examples = Path(__file__).resolve().parents[2] / "examples"
    assert conversation_fields(TRIAGE) == ("transcript_on_restart", "persist_granularity")
    assert conversation_fields(TRIAGE, ("trim-context",)) == (
        "transcript_on_restart",
        "persist_granularity",
        "transcript_repair",
    )
    approval = load_job(examples / "triage-approval.toml")
    assert conversation_fields(approval) == (
        "transcript_on_restart",
        "approval_binding",
        "approval_storage",
        "approval_consume",
        "persist_granularity",
    )
    node = conversation_fields(load_job(examples / "approval-node.toml"))
    assert node.index("resume_granularity") == 3
    one_read = Job("one-read", ((Call("search", "search_issues", False),),))
    assert conversation_fields(one_read) == ("transcript_on_restart",)  # a read alone leaves nothing to drop
    # Crossed with the values of the fields named: 512 designs x 3 ways to restart a transcript.
    crossed = all_policies(conversation=("transcript_on_restart",))
    assert len(crossed) == 512 * 3
    assert {p.transcript_on_restart for p in crossed} == set(CONVERSATION["transcript_on_restart"])
