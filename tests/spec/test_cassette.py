"""crashsweep.spec.cassette: the format of spec/CASSETTE.md, its refusals, the references and the job it maps to.

Each refusal is a hand-written file with one thing wrong, and the one line that must name it
(spec/CASSETTE.md 4); the round trips hold for hand-made cassettes and for generated ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crashsweep.spec.cassette import (
    Ask,
    Cassette,
    CassetteCall,
    CassetteError,
    Ref,
    dumps,
    parse,
    read,
    resolve,
    to_job,
    write,
)
from crashsweep.spec.job import Call

SEARCH = Ref("search", (0, "title"), "issue create_a")
"""The title of the first issue the search found; the recorded run's was "issue create_a"."""

TRIAGE = Cassette(
    (
        Ask(
            (
                CassetteCall("create_a", "create_issue", (("title", "issue create_a"),)),
                CassetteCall("search", "search_issues", (("query", "issue"),)),
            )
        ),
        Ask((CassetteCall("comment_a", "comment", (("issue_title", SEARCH), ("body", "comment comment_a"))),)),
        Ask((), "done"),
    )
)
"""Files an issue and searches, then comments on the issue the search found first."""

HEADER = '{"crashsweep_cassette": 1}'
FINAL_2 = '{"ask": 2, "calls": [], "final": "done"}'
CALL_A = '{"id": "a", "tool": "create_issue", "args": {"title": "t"}}'
ASK_1 = '{"ask": 1, "calls": [' + CALL_A + "]}"


def test_a_cassette_round_trips_through_its_text_and_its_file(tmp_path: Path) -> None:
    """dumps then parse, write then read: the same cassette, references, nesting and argument order kept."""
    nested = CassetteCall("x", "t", (("z", [1, {"ref": SEARCH}, None]), ("a", {"b": 2.5, "c": True})))
    cassette = Cassette((*TRIAGE.asks[:2], Ask((nested,)), Ask((), "fin ✓")))
    assert parse(dumps(cassette), "c.jsonl") == cassette
    write(tmp_path / "c.jsonl", cassette)
    assert read(tmp_path / "c.jsonl") == cassette
    assert [path.name for path in tmp_path.iterdir()] == ["c.jsonl"]  # no temporary file left
    assert list(parse(dumps(cassette), "c").asks[2].calls[0].args[0][1][1]["ref"].path) == [0, "title"]


def test_the_text_is_a_header_then_one_line_an_ask_with_the_formats_keys_sorted() -> None:
    lines = dumps(TRIAGE).splitlines()
    assert lines[0] == HEADER
    assert json.loads(lines[2]) == {
        "ask": 2,
        "calls": [
            {
                "args": {
                    "issue_title": {"$result": "search", "path": [0, "title"], "recorded": "issue create_a"},
                    "body": "comment comment_a",
                },
                "id": "comment_a",
                "tool": "comment",
            }
        ],
    }
    assert lines[3] == '{"ask": 3, "calls": [], "final": "done"}'
    assert list(json.loads(lines[2])["calls"][0]["args"]) == ["issue_title", "body"]  # the recorded order


def test_turns_are_the_asks_with_calls() -> None:
    assert TRIAGE.turns == TRIAGE.asks[:2]


def test_blank_lines_are_skipped_and_counted() -> None:
    """A blank line between asks is skipped; the line numbers of errors still count it."""
    assert parse(f"{HEADER}\n\n{ASK_1}\n{FINAL_2}\n\n", "c").turns[0].calls[0].id == "a"
    with pytest.raises(CassetteError, match=r"^c:4: "):
        parse(f"{HEADER}\n\n{ASK_1}\n{{\n", "c")


def _ask(number: int, calls: str, final: str = "") -> str:
    return f'{{"ask": {number}, "calls": [{calls}]{final}}}'


def _ref(call: str, extra: str = "") -> str:
    """Call b, its argument t a reference to call `call`'s result (`extra`: more keys of the reference)."""
    ref = f'{{"$result": "{call}", "path": [], "recorded": "r"{extra}}}'
    return f'{{"id": "b", "tool": "comment", "args": {{"t": {ref}}}}}'


def _b(ref: str) -> str:
    """Call b, its argument t the reference `ref` (given whole)."""
    return f'{{"id": "b", "tool": "t", "args": {{"t": {ref}}}}}'


NUMBERED = "(asks are numbered 1, 2, ... in order)"
NO_FINAL = 'the cassette ends without its final ask ({"ask": K, "calls": [], "final": TEXT})'
B_T = "call 'b': args.t"
REFUSALS: list[tuple[list[str], str]] = [
    ([], 'c:1: empty: expected the header line {"crashsweep_cassette": 1}'),
    (["{"], "c:1: not JSON (Expecting property name enclosed in double quotes at column 2)"),
    (["[1]"], "c:1: expected a JSON object, got list"),
    ([ASK_1], 'c:1: expected the header line {"crashsweep_cassette": 1} first'),
    (['{"crashsweep_cassette": 2}'], "c:1: version 2: this reader knows version 1"),
    (['{"crashsweep_cassette": true}'], "c:1: version True: this reader knows version 1"),
    (['{"crashsweep_cassette": 1, "v": 1}'], "c:1: unknown key 'v' in the header"),
    ([HEADER], f"c:1: {NO_FINAL}"),
    ([HEADER, ASK_1], f"c:2: {NO_FINAL}"),
    ([HEADER, _ask(2, CALL_A)], f"c:2: ask 2: expected ask 1 {NUMBERED}"),
    ([HEADER, ASK_1, _ask(3, "", ', "final": "x"')], f"c:3: ask 3: expected ask 2 {NUMBERED}"),
    ([HEADER, '{"calls": []}'], 'c:2: missing key "ask" (its number, 1)'),
    ([HEADER, '{"ask": 1, "calls": [], "finale": ""}'], "c:2: an ask: unknown key 'finale' (known: ask, calls, final)"),
    ([HEADER, '{"ask": 1}'], 'c:2: "calls": expected a list of calls ([] for the final answer)'),
    ([HEADER, _ask(1, '{"tool": "t"}')], 'c:2: calls[0]: "id": expected a non-empty string'),
    ([HEADER, _ask(1, '{"id": "a", "tool": ""}')], 'c:2: calls[0]: "tool": expected a non-empty string'),
    ([HEADER, _ask(1, '{"id": "a", "tool": "t", "w": 1}')], "c:2: calls[0]: unknown key 'w' (known: args, id, tool)"),
    (
        [HEADER, _ask(1, '{"id": "a", "tool": "t", "args": [1]}')],
        "c:2: call 'a': args: expected an object of the arguments",
    ),
    (
        [HEADER, _ask(1, '{"id": "a\\u200b", "tool": "t"}')],
        "c:2: call 'a\\u200b': id: contains the invisible or reordering character U+200B; use printable text",
    ),
    ([HEADER, _ask(1, "1")], 'c:2: calls[0]: expected an object {"id": ..., "tool": ..., "args": {...}}'),
    ([HEADER, _ask(1, f"{CALL_A}, {CALL_A}")], "c:2: call ID 'a' is made twice in this ask"),
    ([HEADER, ASK_1, _ask(2, CALL_A)], "c:3: call ID 'a' is made twice (ask 1 and ask 2)"),
    (
        [HEADER, _ask(1, f"{CALL_A}, {_ref('a')}")],
        f"c:2: {B_T}: refers to the result of call 'a', which this same ask made",
    ),
    ([HEADER, _ask(1, _ref("zz"))], f"c:2: {B_T}: refers to the result of call 'zz', which no earlier ask made"),
    (
        [HEADER, ASK_1, _ask(2, _ref("a", ', "x": 1'))],
        f"c:3: {B_T} (a reference): unknown key 'x' (known: $result, path, recorded)",
    ),
    ([HEADER, ASK_1, _ask(2, _b('{"$result": "a", "path": []}'))], f'c:3: {B_T} (a reference): missing key "recorded"'),
    (
        [HEADER, ASK_1, _ask(2, _b('{"$result": "a", "path": 0, "recorded": 1}'))],
        f"c:3: {B_T}: path: expected a list of keys and indexes ([] for the result's text)",
    ),
    (
        [HEADER, ASK_1, _ask(2, _b('{"$result": "a", "path": [true], "recorded": 1}'))],
        f"c:3: {B_T}: path step True: expected an object's key or a list's index",
    ),
    ([HEADER, '{"ask": 1, "calls": []}'], 'c:2: an ask with no calls is the final answer: give it "final" (its text)'),
    (
        [HEADER, _ask(1, CALL_A, ', "final": "x"')],
        'c:2: an ask with calls has no "final": the final answer is an ask of its own',
    ),
    ([HEADER, '{"ask": 1, "calls": [], "final": 3}'], "c:2: final 3: expected a string"),
    ([HEADER, ASK_1, FINAL_2, _ask(3, "", ', "final": "again"')], "c:4: an ask after the final answer (ask 2)"),
    ([HEADER, ASK_1, FINAL_2, "{"], "c:4: an ask after the final answer (ask 2)"),
    ([HEADER, _ask(1, '{"id": "a", "tool": "t", "args": {"n": NaN}}')], "c:2: not JSON (NaN is not a JSON number)"),
]
"""(the file's lines, the one line that refuses it): each rule of spec/CASSETTE.md 4."""


@pytest.mark.parametrize(("lines", "message"), REFUSALS, ids=[m[:50] for _, m in REFUSALS])
def test_the_first_bad_line_is_refused_with_its_name_and_number(lines: list[str], message: str) -> None:
    with pytest.raises(CassetteError) as raised:
        parse("".join(line + "\n" for line in lines), "c")
    assert str(raised.value) == message


def test_a_file_that_cannot_be_read_is_one_line_naming_it(tmp_path: Path) -> None:
    """Missing, a folder, not UTF-8: one CassetteError naming the file; a bad line: the file and the line."""
    missing, binary, bad = tmp_path / "none.jsonl", tmp_path / "bin.jsonl", tmp_path / "bad.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    bad.write_text(f"{HEADER}\n{{\n", encoding="utf-8")
    cases = [
        (missing, f"{missing}: cannot read cassette: No such file or directory"),
        (tmp_path, f"{tmp_path}: cannot read cassette: it is a directory"),
        (binary, f"{binary}:1: not UTF-8 text"),
        (bad, f"{bad}:2: not JSON (Expecting property name enclosed in double quotes at column 2)"),
    ]
    for path, message in cases:
        with pytest.raises(CassetteError) as raised:
            read(path)
        assert str(raised.value) == message


def _one(value: object) -> tuple[Ask, ...]:
    """A cassette's asks whose one call has the argument x = `value`."""
    return (Ask((CassetteCall("a", "t", (("x", value),)),)), Ask((), "f"))


@pytest.mark.parametrize(
    ("asks", "message"),
    [
        ((), f"ask 0: {NO_FINAL}"),
        ((Ask((), "a"), Ask((), "b")), "ask 2: comes after the final answer (ask 1)"),
        (_one(float("nan")), "ask 1: call 'a': args.x: nan is not a JSON number"),
        (
            _one({"$result": 1}),
            "ask 1: call 'a': args.x: key '$result': an object's keys are strings, and $result marks a Ref",
        ),
        (_one((1, 2)), "ask 1: call 'a': args.x: tuple is not a JSON value"),
        (
            (*_one(1)[:1], Ask((CassetteCall("b", "t", (("y", Ref("a", (), {1, 2})),)),)), Ask((), "f")),
            "ask 2: call 'b': args.y: recorded: not a JSON value (Object of type set is not JSON serializable)",
        ),
    ],
)
def test_a_cassette_made_in_code_is_checked_by_the_same_rules(asks: tuple[Ask, ...], message: str) -> None:
    with pytest.raises(CassetteError) as raised:
        Cassette(asks)
    assert str(raised.value) == message


def test_a_reference_takes_its_recorded_value_without_results() -> None:
    """No results, or results without the call: the value the recorded run used."""
    args = TRIAGE.asks[1].calls[0].args
    assert resolve(args, None) == {"issue_title": "issue create_a", "body": "comment comment_a"}
    assert resolve(args, {"create_a": "filed issue #1"}) == resolve(args, None)


def test_a_reference_reads_the_live_result_at_its_path() -> None:
    """The search found issue B first this time: the comment goes to it. The empty path is the text itself."""
    live = {"search": json.dumps([{"number": 2, "title": "issue B"}, {"number": 1, "title": "issue A"}])}
    args = (("issue_title", SEARCH), ("all", [Ref("search", (), "x"), {"n": Ref("search", (1, "number"), 0)}]))
    assert resolve(args, live) == {"issue_title": "issue B", "all": [live["search"], {"n": 1}]}


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("filed issue #1", "call 'search''s result, path [0, 'title']: the result is not JSON ('filed issue #1')"),
        ("[]", "call 'search''s result, path [0, 'title']: nothing at 0 (in [])"),
        ('[{"number": 1}]', """call 'search''s result, path [0, 'title']: nothing at 'title' (in {"number": 1})"""),
        ('{"0": 1}', """call 'search''s result, path [0, 'title']: nothing at 0 (in {"0": 1})"""),
    ],
)
def test_a_path_that_leads_nowhere_in_a_live_result_names_the_call_and_the_path(result: str, message: str) -> None:
    with pytest.raises(CassetteError) as raised:
        resolve((("t", SEARCH),), {"search": result})
    assert str(raised.value) == message


def test_a_resolved_value_is_a_copy() -> None:
    """Changing the arguments a tool was given changes nothing in the cassette."""
    call = CassetteCall("b", "t", (("x", [1]), ("y", Ref("a", (), {"k": [1]}))))
    first = resolve(call.args, None)
    first["x"].append(2)
    first["y"]["k"].append(2)
    assert resolve(call.args, None) == {"x": [1], "y": {"k": [1]}}


def test_a_cassette_maps_to_the_job_of_its_turns() -> None:
    """Turns: the asks' calls, the final ask left out; writes as the caller says; references as recorded."""
    job = to_job(TRIAGE, "triage", lambda call: call.tool != "search_issues")
    assert job.name == "triage"
    assert job.turns == (
        (
            Call("create_a", "create_issue", True, args=(("title", "issue create_a"),)),
            Call("search", "search_issues", False, args=(("query", "issue"),)),
        ),
        (Call("comment_a", "comment", True, args=(("issue_title", "issue create_a"), ("body", "comment comment_a"))),),
    )


KEYS = st.text().filter(lambda key: key != "$result")
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)
NAMES = st.text("abc_-1é", min_size=1, max_size=4)


@st.composite
def cassettes(draw: st.DrawFn) -> Cassette:
    """A cassette of up to three tool turns, its arguments JSON values and references to earlier calls."""
    asks: list[Ask] = []
    made: list[str] = []
    for turn in range(draw(st.integers(0, 3))):
        calls = []
        for index in range(draw(st.integers(1, 3))):
            paths = st.lists(st.integers(0, 3) | NAMES, max_size=2).map(tuple)
            refs = st.builds(Ref, st.sampled_from(made), paths, JSON) if made else JSON
            value: Any = draw(JSON | refs | st.lists(refs, max_size=2))
            args = tuple(draw(st.dictionaries(NAMES, st.just(value), max_size=2)).items())
            calls.append(CassetteCall(f"c{turn}.{index}", draw(NAMES), args))
        made += [call.id for call in calls]
        asks.append(Ask(tuple(calls)))
    return Cassette((*asks, Ask((), draw(st.text()))))


@settings(max_examples=60, deadline=None)
@given(cassettes())
def test_any_cassette_round_trips_through_its_text(cassette: Cassette) -> None:
    assert parse(dumps(cassette), "c") == cassette
