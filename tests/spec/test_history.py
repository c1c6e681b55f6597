"""The History's JSONL form: written and read back equal; a bad line refused with its number."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from crashsweep.spec.history import FACTS, Event, History, HistoryError, args_digest, parse, read, write

HISTORY = History(
    (
        Event("r1", 1, 1, "invoke", "model_call", src="model"),
        Event("r1", 1, 2, "invoke", "tool_call", call="create_a", call_id="c1", tool="create_issue", src="model"),
        Event("r1", 1, 3, "info", "effect", call="create_a", key="k", effect_id="#1", approval="create_a@1#1"),
        Event("r1", 2, 4, "fail", "run_status", status="stuck", detail="the provider refuses"),
    ),
    ("create_a",),
    ("create_a",),
    frozenset({"effects", "status"}),
    {"transcript": "no session", "approvals": "none kept"},
)


def test_a_history_written_is_read_back_equal(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    write(HISTORY, path)
    assert read(path) == HISTORY
    assert not (tmp_path / "history.jsonl.tmp").exists()
    first, second = path.read_text(encoding="utf-8").splitlines()[:2]
    assert first.startswith('{"crashsweep_history": 1,')
    assert '"v": 1' in second
    assert '"call"' not in second  # empty fields are left out


def test_the_header_defaults_to_every_fact() -> None:
    assert parse('{"crashsweep_history": 1}\n') == History(facts=frozenset(FACTS))


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("not json", "3: not JSON"),
        ("[1]", "3: expected a JSON object, got list"),
        ('{"run": "r", "incarnation": 0, "seq": 2, "type": "done", "f": "effect"}', "3: type 'done'"),
        ('{"run": "r", "incarnation": 0, "seq": 2, "type": "ok", "f": "write"}', "3: f 'write'"),
        ('{"run": "r", "incarnation": -1, "seq": 2, "type": "ok", "f": "effect"}', "3: incarnation -1"),
        ('{"run": "r", "incarnation": 0, "type": "ok", "f": "effect"}', "3: missing field 'seq'"),
        ('{"run": "r", "incarnation": 0, "seq": 2, "type": "ok", "f": "effect", "colour": 1}', "3: unknown field"),
        ('{"run": "r", "incarnation": 0, "seq": 2, "type": "ok", "f": "effect", "call": 7}', "3: call 7"),
        ('{"v": 2, "run": "r", "incarnation": 0, "seq": 2, "type": "ok", "f": "effect"}', "3: version 2"),
    ],
)
def test_a_malformed_line_is_refused_with_its_number(tmp_path: Path, line: str, says: str) -> None:
    good = '{"v": 1, "run": "r", "incarnation": 0, "seq": 1, "type": "ok", "f": "effect", "call": "a"}'
    path = tmp_path / "h.jsonl"
    path.write_text(f'{{"crashsweep_history": 1}}\n{good}\n{line}\n', encoding="utf-8")
    with pytest.raises(HistoryError) as error:
        read(path)
    assert str(error.value).startswith(f"{path}:{says}")


@pytest.mark.parametrize(
    ("header", "says"),
    [
        ("", "1: expected the header line"),
        ('{"crashsweep_history": 2}', "1: expected the header"),
        ('{"crashsweep_history": 1, "facts": ["smells"]}', "1: fact 'smells'"),
        ('{"crashsweep_history": 1, "expected": "a"}', "1: expected must be a list"),
    ],
)
def test_a_bad_header_is_refused_as_line_one(header: str, says: str) -> None:
    with pytest.raises(HistoryError, match=f"^{says}"):
        parse(header + "\n")


def test_a_history_lacking_a_fact_says_why() -> None:
    assert HISTORY.missing(("effects",)) is None
    assert HISTORY.missing(("effects", "transcript")) == "no session"
    assert History(facts=frozenset()).missing(("status",)) == "the history has no status"


@pytest.mark.parametrize(
    ("arguments", "canonical"),
    [
        ('{"b": 1, "a": [true, null]}', '{"a":[true,null],"b":1}'),
        ({"b": 1, "a": [True, None]}, '{"a":[true,null],"b":1}'),  # a dict: the same arguments, the same digest
        ('{"title": "caf\\u00e9"}', '{"title":"café"}'),
        ("not json", "not json"),  # digested as it is
    ],
)
def test_args_digest_is_of_the_canonical_json(arguments: object, canonical: str) -> None:
    """Keys sorted, no spaces, UTF-8 as it is: one digest for one value however a producer wrote it."""
    assert args_digest(arguments) == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]
