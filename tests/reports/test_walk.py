"""The walk of `view --serve`: each state by its path code, from the model's own step function."""

from __future__ import annotations

import pytest

from crashsweep.cli.main import main
from crashsweep.explorer import explore
from crashsweep.reports.counterexample import shortest
from crashsweep.reports.walk import Setting, Walk, child_code, differing, parent_code
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import KEYED, TRACKERS
from crashsweep.variants import DESIGNS, model


def _walk(name: str = "save-after-reply", depth: int = 2) -> Walk:
    return Walk(model(name, TRIAGE, KEYED), Setting(name, "triage", "keyed", depth))


@pytest.mark.parametrize(
    ("code", "choice", "child", "parent"),
    [
        ("0:", 0, "1:", None),
        ("0:", 1, "1:1=1", None),
        ("6:4=1", 0, "7:4=1", "5:4=1"),
        ("6:4=1", 2, "7:4=1,7=2", "5:4=1"),
        ("4:4=1", 0, "5:4=1", "3:"),
    ],
)
def test_a_child_code_takes_one_choice_more_and_a_parent_code_one_step_less(
    code: str, choice: int, child: str, parent: str | None
) -> None:
    """Codes by hand: LENGTH:POS=CHOICE, choice 0 left out; the parent drops the last step and its choice."""
    assert child_code(code, choice) == child
    assert parent_code(code) == parent
    assert parent_code(child) == code


def test_the_start_offers_the_run_s_first_step_only() -> None:
    """No process yet: one move, to the start's first crash point; nothing changed; no parent."""
    view = _walk().view("0:")
    assert (view["code"], view["parent"], view["step"], view["crashes"]) == ("0:", None, 0, 0)
    assert [(m["kind"], m["label"], m["code"]) for m in view["moves"]] == [("step", "start", "1:")]
    assert view["moves"][0]["why"] == "the run's own next step, to 'start: tmp written'"
    assert (view["changed"], view["changed_paths"], view["trace"]) == ([], [], [])
    assert view["world"]["process"] is None


def test_every_move_leads_to_a_state_whose_parent_is_this_one() -> None:
    """Each move's code opens a state one step on, by that move's kind, and back is this state."""
    walk = _walk()
    view = walk.view("1:")
    kinds = [m["kind"] for m in view["moves"]]
    assert kinds == ["step", "crash"]
    assert "crash point 'start: tmp written'; 2 of 2 moves left" in view["moves"][1]["why"]
    for move in view["moves"]:
        after = walk.view(move["code"])
        assert after["parent"] == "1:"
        assert after["trace"][-1]["kind"] == move["kind"]
        assert after["trace"][-1]["code"] == move["code"]


def test_a_state_with_its_moves_spent_offers_no_crash() -> None:
    """Depth 1, after one crash: the restart's states offer the run's step only."""
    walk = _walk(depth=1)
    view = walk.view("3:2=1")  # crash at 'start: renamed', then restart
    assert view["crashes"] == 1
    assert {m["kind"] for m in view["moves"]} == {"step"}


def test_the_last_step_s_changes_are_in_words_and_as_paths_into_the_world() -> None:
    """The restart after a crash loads the checkpoint: the process is back, and said so."""
    view = _walk().view("5:4=1")
    assert view["changed"][0] == "process up: loaded run-1, no turns"
    assert "process" in view["changed_paths"]


@pytest.mark.parametrize(
    ("old", "new", "paths"),
    [
        ({"a": 1, "b": {"c": 2}}, {"a": 1, "b": {"c": 3}}, ["b.c"]),
        ({"a": [1]}, {"a": [1, 2]}, ["a"]),
        ({"a": None}, {"a": {"x": 1}}, ["a"]),
        ({"a": 1, "gone": 2}, {"a": 1}, ["gone"]),
        ({"a": 1}, {"a": 1}, []),
    ],
)
def test_differing_names_each_changed_leaf_or_list(old: object, new: object, paths: list[str]) -> None:
    assert differing(old, new) == paths


def test_invariants_are_not_yet_exercised_until_their_witness_is_seen() -> None:
    """At the start nothing was written: no-duplicate is not yet exercised, no-loss waits for the end."""
    statuses = {i["name"]: i["status"] for i in _walk().view("0:")["invariants"]}
    assert statuses["no-duplicate"] == "not yet exercised"
    assert statuses["no-loss"] == "not yet exercised"
    assert statuses["some write applied"] == "not yet exercised"


def test_the_uninterrupted_run_ends_with_every_invariant_holding() -> None:
    """The run's own path to its end (triage: 35 steps, as replay's refusal of step 36 says): all hold."""
    walk = _walk()
    view = walk.view("35:")
    assert view["finished"]
    assert view["moves"] == []
    assert {i["name"]: i["status"] for i in view["invariants"]} == {
        name: "holds" for name in (i["name"] for i in view["invariants"])
    }
    with pytest.raises(ValueError, match=r"longer than the run, which finishes after 35 steps"):
        walk.view("36:")


@pytest.mark.parametrize("code", ["bad", "3:4=1", "1:1=9", "-1:"])
def test_a_code_that_does_not_fit_is_refused_with_one_line(code: str) -> None:
    with pytest.raises(ValueError, match=r"^path code") as refused:
        _walk().view(code)
    assert "\n" not in str(refused.value)


def test_a_choice_past_a_step_s_moves_is_explained_when_given_the_replay_s_words() -> None:
    """With view's `explained`, the refusal names what the step offers."""
    from crashsweep.cli.view import explained

    walk = Walk(model("save-after-reply", TRIAGE, KEYED), Setting("save-after-reply", "triage", "keyed", 2), explained)
    with pytest.raises(ValueError, match=r"step 1 takes choice 1, but offers only choice 0 \(start\)"):
        walk.view("1:1=1")


def test_the_lanes_number_each_row_by_its_step_and_show_the_crash() -> None:
    """The path to save-after-reply's duplicate (crash at 'tracker accepted create_a' and a restart)."""
    lanes = _walk().view("10:7=1")["lanes"]
    assert lanes["lanes"][:2] == ["process", "model"]
    crash = [row for row in lanes["rows"] if row["style"] == "crash"]
    assert [row["step"] for row in crash] == [7]
    assert all(row["step"] is not None for row in lanes["rows"] if row["style"] != "violation")


@pytest.mark.parametrize("tracker", sorted(TRACKERS))
@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_every_discovery_at_depth_2_is_violated_in_the_walk_and_replays_to_the_same_violation(
    name: str, tracker: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each shipped design at depth 2 on each tracker: the shortest counterexamples the server hands out as links.

    There is one for every invariant the exploration finds violated. Opened in the walk, the
    invariant shows violated with the counterexample's own words, and `crashsweep replay
    --path` of the code (the command the page shows) exits 1 with them.
    """
    loop = model(name, TRIAGE, TRACKERS[tracker])
    exploration = explore(loop, 2)
    found = shortest(exploration, variant=name, job="triage", job_file=None, tracker=tracker)
    kinds = {prop.name: prop.kind for prop in loop.properties}
    broken = {n for n, v in exploration.verdicts.items() if not v.holds and kinds[n] != "sometimes"}
    assert {cx.invariant for cx in found} == broken
    walk = Walk(loop, Setting(name, "triage", tracker, 2))
    for cx in found:
        view = walk.view(cx.code)
        status = {i["name"]: (i["status"], i["detail"]) for i in view["invariants"]}
        assert status[cx.invariant] == ("violated", cx.violation)
        assert view["replay"] == f"crashsweep replay --variant {name} --depth 2 --tracker {tracker} --path {cx.code}"
        assert main(["replay", "--variant", name, "--depth", "2", "--tracker", tracker, "--path", cx.code]) == 1
        printed = capsys.readouterr().out
        assert f"counterexample to {cx.invariant} " in printed
        assert cx.violation in printed


def test_a_fault_says_what_it_does_and_why_it_is_possible_here() -> None:
    """lost-reply at `tracker accepted create_a`: its summary and the rule of where it is enabled (spec/faults.py)."""
    walk = Walk(model("save-after-reply", TRIAGE, KEYED, faults=("lost-reply",)), Setting("s", "triage", "keyed", 1))
    path = "0:"
    while not any(m["kind"] == "fault" for m in walk.view(path)["moves"]):
        path = walk.view(path)["moves"][0]["code"]
    view = walk.view(path)
    assert view["point"] == "tracker accepted create_a"
    (fault,) = [m for m in view["moves"] if m["kind"] == "fault"]
    assert fault["label"] == "lost-reply"
    assert fault["why"] == (
        "fault lost-reply: the tracker applies a write and its reply is lost; possible here: At `tracker accepted C`, "
        "with the tool's reply still to come (`tool returned C` next); 1 of 1 moves left"
    )
