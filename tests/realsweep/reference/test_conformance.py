"""Conformance: the real sweep's row equals the model's, for every design at depth 1 and one at depth 2."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from crashsweep import variants
from crashsweep.explorer.search import explore
from crashsweep.realsweep import rows
from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.reference import conformance
from crashsweep.realsweep.reference.loop import DESIGNS
from crashsweep.realsweep.sweep import SweepError, SweepOptions
from crashsweep.reports.summary import Summary, summarize
from crashsweep.spec.files import toml_value
from crashsweep.spec.invariants import APPROVED_EXACTLY, CAN_FINISH, WELL_FORMED_TRANSCRIPT
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.spec.retries import FRONTIER_STACKS, Layer, Stack
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants.design_file import load_design
from tests.docs.shown import printed
from tests.paths import ROOT

DEPTH_1 = [
    ("save-once-per-turn", "keyed"),
    ("save-after-reply", "keyed"),
    ("idempotency-keys", "keyed"),
    ("attempt-markers", "keyed"),
    ("keys-and-markers", "keyed"),
    ("agent-loop", "keyed"),
    ("agent-loop", "keyless"),
    ("agent-loop", "keyless-lookup"),
]


NO_CHANCE_AT_DEPTH_1 = Nemesis(("key-expiry", "wrong-answer"))
"""Faults with no chance one move deep (no restart, no person before the first move): a sweep under
them at depth 1 runs the crash-only sweep's processes, and its moves tally says each had none."""


@pytest.fixture(scope="module")
def unexercised() -> Callable[[str], conformance.Conformance]:
    """Each design's conformance on triage, keyed, depth 1, under NO_CHANCE_AT_DEPTH_1: one sweep per design.

    test_every_design_conforms_at_depth_1 (keyed) and
    test_every_design_conforms_under_key_expiry_and_wrong_answer read the same sweep.
    """
    done: dict[str, conformance.Conformance] = {}

    def conformed(variant: str) -> conformance.Conformance:
        if variant not in done:
            done[variant] = conformance.conform(variant, TRIAGE, None, "keyed", FAULTED, nemesis=NO_CHANCE_AT_DEPTH_1)
        return done[variant]

    return conformed


@pytest.mark.parametrize(("variant", "tracker"), DEPTH_1)
def test_every_design_conforms_at_depth_1(
    variant: str, tracker: str, unexercised: Callable[[str], conformance.Conformance]
) -> None:
    """One crash at every point of the real loop: the same row as the model's.

    Against the keyed tracker the sweep is the one under NO_CHANCE_AT_DEPTH_1 (its processes are
    the crash-only sweep's), compared here with the crash-only model's row.
    """
    if tracker == "keyed":
        swept = unexercised(variant)
        result = conformance.Conformance(_crash_only_row(variant), swept.real, swept.sweep)
    else:
        result = conformance.conform(variant, TRIAGE, None, tracker, SweepOptions(depth=1))
    assert result.differences == []
    assert result.real.scenarios[1] == result.real.crash_points


def test_save_once_per_turn_conforms_at_depth_2() -> None:
    """Two crashes deep: 18 and 225 scenarios, 164 with duplicates, 294 duplicates, calls+ 338, as the seed."""
    result = conformance.conform("save-once-per-turn", TRIAGE, None, "keyed", SweepOptions(depth=2))
    assert result.differences == []
    real = result.real
    assert (real.crash_points, real.scenarios[1], real.scenarios[2]) == (18, 18, 225)
    assert (real.with_dups, real.dups, real.missing, real.asks, real.calls_plus) == (164, 294, 0, 0, 338)
    assert "no difference" in conformance.render([result])


def test_started_processes_conform_like_forked_ones() -> None:
    """--spawn exec (a new interpreter per process, no zygote): the same row as the model's.

    On the one-write job (a started interpreter per crash point; how a process is started does
    not depend on the job): its crash points, one scenario each, one with a duplicate at least.
    """
    job_path = ROOT / "examples" / "one-write.toml"
    options = SweepOptions(depth=1, spawn="exec")
    result = conformance.conform("save-after-reply", load_job(job_path), job_path, "keyed", options)
    assert result.differences == []
    assert result.real.scenarios[1] == result.real.crash_points
    assert result.real.with_dups > 0


DOCS = ROOT / "docs"
NOT_SWEPT_FOR_REAL: dict[str, str] = {}
"""Presets the reference loop cannot run, each with the reason (none: every preset runs for real)."""


def test_every_preset_has_a_design_file_or_a_named_exclusion() -> None:
    files = {path.stem for path in (DOCS / "designs").glob("*.toml")}
    assert set(variants.PRESETS) == files | set(NOT_SWEPT_FOR_REAL)
    assert not files & set(NOT_SWEPT_FOR_REAL)


@pytest.mark.parametrize("name", sorted(set(variants.PRESETS) - set(NOT_SWEPT_FOR_REAL)))
def test_every_preset_composed_for_real_conforms_at_depth_1(name: str) -> None:
    """The reference loop composed from the preset's design file: the same row as the composed model's."""
    result = conformance.conform(
        name, TRIAGE, None, "keyed", SweepOptions(depth=1), None, DOCS / "designs" / f"{name}.toml"
    )
    assert result.differences == []
    assert result.real.scenarios[1] == result.real.crash_points


@pytest.mark.parametrize("tracker", ["keyed", "keyless", "keyless-lookup"])
def test_the_example_design_file_is_swept_for_real(tracker: str) -> None:
    """docs/my-design.toml, crashed for real at every point: the same row as its model's."""
    result = conformance.conform(
        "my-design", TRIAGE, None, tracker, SweepOptions(depth=1), None, DOCS / "my-design.toml"
    )
    assert result.differences == []
    # Keys honoured: a resent write is harmless. Ignored, and no markers: a crash between the
    # tracker's accept and the result save resends the write, a duplicate.
    assert (result.real.with_dups == 0) == (tracker == "keyed")


@pytest.mark.parametrize("tracker", ["keyless", "keyless-lookup"])
def test_a_composed_ladder_conforms_for_real(tracker: str) -> None:
    """attempt-markers' design file (ladder: lookup, then a person) crashed for real: the model's row."""
    path = DOCS / "designs" / "attempt-markers.toml"
    result = conformance.conform("attempt-markers", TRIAGE, None, tracker, SweepOptions(depth=1), None, path)
    assert result.differences == []
    # A crash between a marker save and the result save leaves a marked write to settle: the
    # lookup rung does it where the tracker offers one, a person everywhere else.
    assert (result.real.lookups > 0, result.real.asks > 0) == (tracker == "keyless-lookup", tracker == "keyless")


# Faults (spec/FAULTS.md) at depth 1, for every design the reference loop has. The triage job
# has three write requests in its uninterrupted run (create_a, create_b, comment_a), so
# lost-reply adds exactly three one-move scenarios to the crash points. Its effect, derived
# from SITUATIONS.md section 2: with no marker and no key (save-once-per-turn,
# save-after-reply) the write is sent again at once and applied twice: one more scenario with
# a duplicate per lost reply; with a key the tracker honours, the re-send is answered from
# the key (idempotency-keys), or rung 1 re-runs it (keys-and-markers, agent-loop: +1 rerun
# each); with a marker and no key on a keyed tracker (attempt-markers) a person is asked
# (+1 question each), who looks at the tracker and finds it. The crash-only figures come
# from the model explored without faults.
LOST_REPLY_ADDS = {
    "save-once-per-turn": {"with_dups": 3, "dups": 3},
    "save-after-reply": {"with_dups": 3, "dups": 3},
    "idempotency-keys": {},
    "attempt-markers": {"asks": 3},
    "keys-and-markers": {"reruns": 3},
    "agent-loop": {"reruns": 3},
}
FAULTED = SweepOptions(depth=1, workers=2)


def _crash_only_row(variant: str) -> Summary:
    """The model's row of `variant` on triage, keyed, depth 1, crashes alone."""
    exploration = explore(variants.model(variant, TRIAGE, TRACKERS["keyed"]), 1)
    return summarize(exploration, variant=variant, job="triage", tracker="keyed")


def _crash_only(variant: str) -> dict[str, int]:
    row = _crash_only_row(variant)
    return {name: getattr(row, name) for name in ("with_dups", "dups", "missing", "asks", "reruns", "lookups")}


def test_lost_reply_figures_cover_every_design_of_the_reference_loop() -> None:
    assert set(LOST_REPLY_ADDS) == set(DESIGNS)


@pytest.mark.parametrize("variant", list(DESIGNS))
def test_every_design_conforms_under_lost_reply(variant: str) -> None:
    """The tracker drops the reply of each write in turn: the same row as the model's, as derived above."""
    result = conformance.conform(variant, TRIAGE, None, "keyed", FAULTED, nemesis=Nemesis(("lost-reply",)))
    assert result.differences == []
    real = result.real
    assert real.scenarios[1] == real.crash_points + len(TRIAGE.writes)
    assert real.moves == {1: {"crash": real.crash_points, "lost-reply": len(TRIAGE.writes)}}
    expected = _crash_only(variant)
    for name, more in LOST_REPLY_ADDS[variant].items():
        expected[name] += more
    assert {name: getattr(real, name) for name in expected} == expected
    assert sorted(s.faults for s in result.sweep.scenarios if s.faults) == sorted(
        (f"lost-reply at tracker accepted {call}",) for call in TRIAGE.writes
    )


@pytest.mark.parametrize("variant", list(DESIGNS))
def test_every_design_conforms_under_key_expiry_and_wrong_answer(
    variant: str, unexercised: Callable[[str], conformance.Conformance]
) -> None:
    """Neither has a chance at depth 1 (no restart, no person before the first move): the crash-only row."""
    result = unexercised(variant)
    assert result.differences == []
    real = result.real
    assert real.moves == {1: {"crash": real.crash_points, "key-expiry": 0, "wrong-answer": 0}}
    assert real.scenarios[1] == real.crash_points
    assert {name: getattr(real, name) for name in _crash_only(variant)} == _crash_only(variant)


@pytest.mark.parametrize("variant", list(DESIGNS))
def test_every_design_conforms_with_fresh_call_ids(variant: str) -> None:
    """Every design makes the reply durable before its first keyed write: verdicts as with stable IDs."""
    result = conformance.conform(variant, TRIAGE, None, "keyed", FAULTED, nemesis=Nemesis(fresh_ids=True))
    assert result.differences == []
    assert {name: getattr(result.real, name) for name in _crash_only(variant)} == _crash_only(variant)


def test_fresh_call_ids_make_keys_sent_before_the_reply_save_duplicate() -> None:
    """FAULTS.md section 5's worked example: 3 of the design's 30 crash points duplicate, for real too."""
    path = ROOT / "examples" / "keys-before-reply-save.toml"
    stable = conformance.conform("keys-before-reply-save", TRIAGE, None, "keyed", FAULTED, None, path)
    fresh = conformance.conform(
        "keys-before-reply-save", TRIAGE, None, "keyed", FAULTED, None, path, Nemesis(fresh_ids=True)
    )
    assert stable.differences == []
    assert fresh.differences == []
    assert (stable.real.crash_points, stable.real.with_dups) == (30, 0)
    assert (fresh.real.crash_points, fresh.real.with_dups, fresh.real.dups) == (30, 3, 3)


# Power loss (spec/FAULTS.md 6): the reference loop's checkpoint records its file operations and
# the runner builds the disk a cut leaves; the model's figures are pinned in tests/variants/test_power_loss.py.
DESIGN_FILES = ROOT / "docs" / "designs"
PAUSED = Nemesis(("pause",))


@pytest.mark.parametrize("variant", list(DESIGNS))
def test_every_design_conforms_under_power_loss_without_fsync(variant: str) -> None:
    """fsync none (every design of the reference loop): every point from the first save on is a chance."""
    result = conformance.conform(variant, TRIAGE, None, "keyed", FAULTED, nemesis=Nemesis(("power-loss",)))
    assert result.differences == []
    assert result.real.moves[1]["power-loss"] > 0


@pytest.mark.parametrize(
    ("design", "fields", "figures"),
    [
        ("save-after-reply", 'fsync = "full"', (74, 18, 18, 0)),
        ("save-after-reply", 'fsync = "no-dir-fsync"', (78, 27, 29, 0)),
        ("save-after-reply", 'unreadable = "fresh-run"', (68, 33, 57, 0)),
        ("attempt-markers", 'fsync = "no-dir-fsync"', (99, 6, 6, 0)),
    ],
)
def test_designs_conform_under_each_fsync_policy(
    tmp_path: Path, design: str, fields: str, figures: tuple[int, int, int, int]
) -> None:
    """A design file with its fsync policy: model and real agree, on the figures derived by hand."""
    text = (DESIGN_FILES / f"{design}.toml").read_text(encoding="utf-8")
    path = tmp_path / f"{design}.toml"
    path.write_text(text + fields + "\n", encoding="utf-8")
    nemesis = Nemesis(("power-loss",))
    result = conformance.conform(design, TRIAGE, None, "keyed", FAULTED, design_path=path, nemesis=nemesis)
    assert result.differences == []
    real = result.real
    assert (real.scenarios[1], real.with_dups, real.dups, real.missing) == figures


def test_a_gated_write_s_approval_save_takes_the_fsync_policy_for_real(tmp_path: Path) -> None:
    """save-after-reply, fsync full, on triage-approval under power loss: the real row is the model's.

    The reference loop's approval save is a checkpoint save with the policy's fsyncs; the model
    passed two points there whatever the policy, until this run's difference was read as the
    model's error (spec/SITUATIONS.md 3 step 4). The point counts are derived in
    tests/variants/test_power_loss.py.
    """
    text = (DESIGN_FILES / "save-after-reply.toml").read_text(encoding="utf-8")
    path = tmp_path / "save-after-reply.toml"
    path.write_text(text + 'fsync = "full"\n', encoding="utf-8")
    job_path = ROOT / "examples" / "triage-approval.toml"
    nemesis = Nemesis(("power-loss",))
    result = conformance.conform(
        "save-after-reply", load_job(job_path), job_path, "keyed", FAULTED, design_path=path, nemesis=nemesis
    )
    assert result.differences == []
    assert "approval comment_a: dir synced" in result.sweep.baseline.points


def test_a_conversation_sent_as_is_beside_a_paused_process_conforms() -> None:
    """save-after-reply-as-is under `pause`, depth 1: a stuck process beside another gives up (FAULTS.md 7 rule 11).

    The model refused this design and fault with "the state graph has a cycle" (a stuck process
    stayed in place beside the paused one), and the real sweep counted a pause scenario whose
    last process exited stuck as finished (its missing writes then read as losses): both
    differences were found by this run.

    On one-write (it needs one call in a turn): the design saves reply 1 before create_a is
    sent, so a pause anywhere from that save to create_a's result rename leaves the process
    started beside the paused one a turn with a call and no result; it sends it as it is, is
    refused, and gives up stuck beside the paused one.
    """
    design = ROOT / "examples" / "save-after-reply-as-is.toml"
    job_path = ROOT / "examples" / "one-write.toml"
    result = conformance.conform(
        "save-after-reply-as-is", load_job(job_path), job_path, "keyed", SweepOptions(depth=1), None, design, PAUSED
    )
    assert result.differences == []
    assert result.real.never_finish > 0
    assert result.real.moves[1]["pause"] > 0


def test_a_conversation_sent_as_is_beside_a_timed_out_attempt_conforms(tmp_path: Path) -> None:
    """keys-turn-timeout-file with `as-is`, on one-write, depth 1: the new attempt loads the disk (RETRIES.md 1.2).

    A turn's new attempt that loads a call without its result sends it as it is, is refused,
    and gives up beside the suspended attempt (FAULTS.md 7 rule 11): the same row for real.
    One write is enough: the design saves reply 1 before create_a is sent, so a timeout from
    that save to create_a's result rename starts the new attempt on a call without its result.
    """
    text = (ROOT / "examples" / "keys-turn-timeout-file.toml").read_text(encoding="utf-8")
    design = tmp_path / "as-is-turn-timeout.toml"
    design.write_text(text.replace('name = "keys-turn-timeout-file"', 'name = "as-is-turn-timeout"')
                      + 'transcript_on_restart = "as-is"\n', encoding="utf-8")  # fmt: skip
    one_write = ROOT / "examples" / "one-write.toml"
    c = conformance.conform("as-is", load_job(one_write), one_write, "keyed", SweepOptions(depth=1), None, design)
    assert c.differences == []
    assert c.real.never_finish > 0


# Faults as moves of the merging sweep (graph.py): the same rows as the model's at any depth.
MERGED = SweepOptions(depth=1, workers=2, dedup=True, snapshots=True)
EVERY_FAULT = Nemesis(("lost-reply", "key-expiry", "wrong-answer"))


@pytest.mark.parametrize("variant", list(DESIGNS))
def test_every_design_conforms_under_every_fault_with_merged_worlds(variant: str) -> None:
    """Depth 1, worlds merged: lost-reply strikes at the three writes, the other two have no chance yet."""
    result = conformance.conform(variant, TRIAGE, None, "keyed", MERGED, nemesis=EVERY_FAULT)
    assert result.differences == []
    real = result.real
    assert real.moves == {
        1: {"crash": real.crash_points, "lost-reply": len(TRIAGE.writes), "key-expiry": 0, "wrong-answer": 0}
    }
    assert result.sweep.counts is not None  # counted by paths over the graph of real worlds


# Depth 2 (one crash or fault, then another): the figures are the README's published model
# rows ("Faults": keys that expire, a person who errs), which the real sweep must reproduce.
DEPTH_2 = SweepOptions(depth=2, workers=2, dedup=True, snapshots=True)
FIGURES = ("scenarios", "with_dups", "dups", "missing", "asks", "calls_plus")


def _figures(result: conformance.Conformance) -> tuple[object, ...]:
    real = result.real
    return (real.scenarios[1], real.scenarios[2], *(getattr(real, name) for name in FIGURES[1:]))


@pytest.mark.parametrize(
    ("variant", "tracker", "published"),
    [
        ("keys-and-markers", "keyed", (43, 1049, 9, 9, 0, 0, 292)),
        ("agent-loop", "keyed", (38, 902, 9, 9, 0, 0, 323)),
        ("agent-loop", "keyless-lookup", (38, 869, 0, 0, 0, 0, 318)),
    ],
)
def test_expired_keys_duplicate_for_real_where_rung_1_resends(
    variant: str, tracker: str, published: tuple[int, ...]
) -> None:
    """A crash, then the tracker forgets its keys before the restart: a re-send with its key is new to it.

    The lookup rung asks the tracker whether the call happened, which does not depend on keys;
    and a tracker that ignores keys remembers none, so they never expire (FAULTS.md 3).
    """
    result = conformance.conform(variant, TRIAGE, None, tracker, DEPTH_2, nemesis=Nemesis(("key-expiry",)))
    assert result.differences == []
    assert _figures(result) == published
    assert (result.real.moves[2]["key-expiry"] > 0) == (tracker == "keyed")
    expired = [s for s in result.sweep.scenarios if s.faults == ("key-expiry at restart",) and s.outcome.dups]
    assert bool(expired) == (tracker == "keyed")


@pytest.mark.parametrize(
    ("variant", "published"),
    [("attempt-markers", (43, 1011, 9, 9, 6, 684, 288)), ("keys-and-markers", (43, 1014, 0, 0, 0, 0, 288))],
)
def test_a_person_who_errs_duplicates_or_loses_for_real(variant: str, published: tuple[int, ...]) -> None:
    """A wrong "no" sends again (a duplicate), a wrong "yes" stores a result no record stands behind (a loss).

    keys-and-markers settles every marker on rung 1 (a key the tracker honours): no person is asked.
    """
    result = conformance.conform(variant, TRIAGE, None, "keyed", DEPTH_2, nemesis=Nemesis(("wrong-answer",)))
    assert result.differences == []
    assert _figures(result) == published
    assert (result.real.moves[2]["wrong-answer"] > 0) == (variant == "attempt-markers")


@pytest.mark.parametrize("variant", ["save-after-reply", "idempotency-keys"])
def test_lost_replies_two_moves_deep_conform(variant: str) -> None:
    """A lost reply and a crash, or two lost replies: a re-send without a key duplicates, one with a key does not."""
    result = conformance.conform(variant, TRIAGE, None, "keyed", DEPTH_2, nemesis=Nemesis(("lost-reply",)))
    assert result.differences == []
    real = result.real
    assert real.moves[1] == {"crash": real.crash_points, "lost-reply": len(TRIAGE.writes)}
    assert real.moves[2]["lost-reply"] > 0
    assert (real.with_dups > 0) == (variant == "save-after-reply")


def test_fresh_call_ids_with_merged_worlds_two_crashes_deep() -> None:
    """The README's published row (keys-before-reply-save, fresh IDs): 30 and 521 scenarios, 102 with 111 duplicates.

    The scripted model's counter of replies lives in the work directory, so it is part of a
    world: merging worlds keeps apart the ones whose next ask hands out other IDs.
    """
    path = ROOT / "examples" / "keys-before-reply-save.toml"
    fresh = Nemesis(fresh_ids=True)
    result = conformance.conform("keys-before-reply-save", TRIAGE, None, "keyed", DEPTH_2, None, path, fresh)
    assert result.differences == []
    assert _figures(result) == (30, 521, 102, 111, 0, 0, 326)


@pytest.mark.parametrize(
    ("first", "then"), [("save-after-reply", "idempotency-keys"), ("idempotency-keys", "save-after-reply")]
)
def test_a_deploy_between_crash_and_restart_conforms(first: str, then: str) -> None:
    """--upgrade-to (spec/RETRIES.md section 2): every restart runs the other design, on both sides.

    On one-write both designs pass the same 15 points (the startup save 2, reply 1 arrived,
    reply 1: 2, tracker accepted and tool returned create_a, the result 3, turn 1: 2, final
    reply arrived, final: 2). Keys help only when every send of a call carries the same one:
    here one version sends create_a with no key and the other with Key(run-1), so whichever
    runs first, a crash after the tracker accepted create_a and before its result is renamed
    into the checkpoint (tracker accepted, tool returned, result: tmp written: 3 points) has
    the restart send it again, and the keyed tracker, finding no record under that key (or
    none asked for), keeps both. Elsewhere the checkpoint says create_a was done, or it was
    never sent. So at depth 1: 15 scenarios, 3 with one duplicate, none lost; and at depth 2
    (save-after-reply first) the real row equals the model's, figure for figure.
    """
    job_path = ROOT / "examples" / "one-write.toml"
    upgrade = (then, None)
    one = conformance.conform(first, load_job(job_path), job_path, "keyed", SweepOptions(depth=1), upgrade=upgrade)
    assert one.differences == []
    assert (one.real.crash_points, one.real.scenarios, one.real.with_dups, one.real.dups) == (15, {1: 15}, 3, 3)
    assert one.real.missing == 0
    assert one.model.upgrade == then
    assert f"(restarts run {then})" in conformance.render([one])
    if first != "save-after-reply":
        return  # two crashes deep once: the real restarts ran the upgrade at depth 1 already
    two = conformance.conform(first, load_job(job_path), job_path, "keyed", SweepOptions(depth=2), upgrade=upgrade)
    assert two.differences == []
    assert two.real.scenarios[2] > 0


def test_a_tool_that_fails_after_accept_conforms_for_every_design() -> None:
    """The job's `fails_after_accept` for real: the tracker fails the first request it receives of the call.

    save-after-reply on triage-fails, derived by hand: the run passes triage's 34 points and two
    more at create_a's first, failing request (`tracker accepted create_a`, `tool failed
    create_a`): 36. The design sends no key, so the resend after the tool error files create_a
    again: every scenario keeps that duplicate (a crash before the first request only moves it
    to the restart, and a crash at either new point leaves the record, so the restart's request
    is not the first and succeeds). On top, triage's nine windows (a crash after a write is
    applied and before its result is saved: three points for each of three writes) add one
    duplicate each. So 36 scenarios with a duplicate, 36 + 9 = 45 duplicates, none lost.
    Every other design and tracker: the real row equals the model's, and with lost replies too.
    """
    job_path = ROOT / "examples" / "triage-fails.toml"
    job = load_job(job_path)
    sar = conformance.conform("save-after-reply", job, job_path, "keyed", SweepOptions(depth=1))
    assert sar.differences == []
    assert (sar.real.crash_points, sar.real.with_dups, sar.real.dups, sar.real.missing) == (36, 36, 45, 0)
    for variant in DESIGNS:
        for tracker in ("keyed", "keyless", "keyless-lookup"):
            assert conformance.conform(variant, job, job_path, tracker, MERGED).differences == []
        lost = Nemesis(("lost-reply",))
        one = conformance.conform(variant, job, job_path, "keyed", MERGED, nemesis=lost)
        assert one.differences == []


def test_a_tool_that_fails_after_accept_conforms_two_crashes_deep() -> None:
    """agent-loop on triage-fails at depth 2, with lost replies: the same row on both sides."""
    job_path = ROOT / "examples" / "triage-fails.toml"
    lost = Nemesis(("lost-reply",))
    deep = conformance.conform("agent-loop", load_job(job_path), job_path, "keyed", DEPTH_2, nemesis=lost)
    assert deep.differences == []
    assert deep.real.scenarios[2] > 0


TRIAGE_FAILS = ROOT / "examples" / "triage-fails.toml"
ONE_FAILING_WRITE = (
    'name = "one-failing-write"\nturns = [["create_a"]]\n\n[calls]\n'
    'create_a = { tool = "create_issue", writes = true, fails_after_accept = true }\n'
)
"""triage-fails cut to its failing write: the smallest job on which a tool fails after the tracker accepted."""
TWO_WRITES_ONE_FAILING = (
    'name = "two-writes-one-failing"\nturns = [["create_a", "create_b"]]\n\n[calls]\n'
    'create_a = { tool = "create_issue", writes = true, fails_after_accept = true }\n'
    'create_b = { tool = "create_issue", writes = true }\n'
)
"""triage-fails' first turn alone: its failing create_a, then create_b in the same turn."""


def _job_file(tmp_path: Path, text: str) -> Path:
    """The job `text` written as a file under tmp_path (conform reads a job file by path)."""
    path = tmp_path / "job.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _layered(tmp_path: Path, preset: str, stack: Stack) -> Path:
    """A design file: the preset's policy under the retry layers `stack`."""
    policy = replace(variants.PRESETS[preset].policy, retries=stack)
    lines = [f'name = "{preset}-layered"', *(f"{k} = {toml_value(v)}" for k, v in policy.as_mapping().items())]
    path = tmp_path / f"{preset}-layered.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_run_retry_duplicates_for_real_as_derived_by_hand() -> None:
    """keys-run-retry on triage-fails at depth 1: the figures tests/spec/test_retrying.py derives (item 1).

    41 points, no retry move (the layer's one retry goes to the job's failure), 38 scenarios
    with a duplicate, calls+ 5, 39 run retries; the worst scenario 1 duplicate and 5 model calls.
    """
    design = ROOT / "examples" / "keys-run-retry.toml"
    c = conformance.conform("keys-run-retry", load_job(TRIAGE_FAILS), TRIAGE_FAILS, "keyed", MERGED, None, design)
    assert c.differences == []
    real = c.real
    assert (real.crash_points, real.scenarios, real.moves) == (41, {1: 41}, {1: {"crash": 41, "retry": 0}})
    assert (real.with_dups, real.dups, real.missing, real.calls_plus) == (38, 38, 0, 5)
    assert real.retried == {"retry.call": 0, "retry.turn": 0, "retry.run": 39}
    assert (real.worst_dups, real.worst_calls, real.run_calls) == (1, 5, 4)


def test_a_call_retry_duplicates_nothing_for_real(tmp_path: Path) -> None:
    """idempotency-keys with call x2 on triage-fails: 36 points, and the resends carry the same key.

    The two retry moves come at create_b's and comment_a's `tracker accepted`
    (tests/spec/test_retrying.py).
    """
    design = _layered(tmp_path, "idempotency-keys", (Layer("call", "error", 2),))
    c = conformance.conform("keys-call", load_job(TRIAGE_FAILS), TRIAGE_FAILS, "keyed", MERGED, None, design)
    assert c.differences == []
    assert (c.real.crash_points, c.real.scenarios, c.real.moves[1]) == (36, {1: 38}, {"crash": 36, "retry": 2})
    assert (c.real.with_dups, c.real.dups, c.real.missing) == (0, 0, 0)


@pytest.mark.parametrize(
    ("preset", "stack", "tracker"),
    [
        ("save-after-reply", 2, "keyless"),
        ("attempt-markers", 4, "keyless-lookup"),
        ("agent-loop", 5, "keyed"),
    ],
)
def test_retry_stacks_conform_two_moves_deep(tmp_path: Path, preset: str, stack: int, tracker: str) -> None:
    """A frontier stack per design (turn x2; call x3 > turn x2; call x3 > run x2), crashes and retries two deep.

    Every design x tracker x frontier stack conformed at depths 1 and 2 when the real side was
    built (the closing note of #27 gives the run); these three keep one of each kind of re-run.
    """
    design = _layered(tmp_path, preset, FRONTIER_STACKS[stack])
    c = conformance.conform(preset, load_job(TRIAGE_FAILS), TRIAGE_FAILS, tracker, DEPTH_2, None, design)
    assert c.differences == []
    assert c.real.moves[2]["retry"] > 0


def test_every_scenario_conforms_with_retry_moves_beside_a_power_cut(tmp_path: Path) -> None:
    """A sweep of every scenario (power-loss forces one) finds the retry chances in the baseline's pauses."""
    design = _layered(tmp_path, "agent-loop", FRONTIER_STACKS[1])
    power = Nemesis(("power-loss",))
    options = SweepOptions(depth=1)
    c = conformance.conform("agent-loop", load_job(TRIAGE_FAILS), TRIAGE_FAILS, "keyless", options, None, design, power)
    assert c.differences == []
    assert c.real.moves[1]["retry"] > 0
    assert c.real.moves[1]["power-loss"] > 0


TURN_TIMEOUT_FILE = "conform --design examples/keys-turn-timeout-file.toml --job examples/one-write.toml --depth 1"
"""docs/guide/retries.md's conform of the lock-file design, which tests/docs/test_blocks.py runs as shown."""


def test_a_turn_timeout_duplicates_past_a_lock_file_for_real() -> None:
    """The new attempt runs beside the one given up on, on one disk and tracker, for real.

    The figures are tests/spec/test_retrying.py's, derived by hand: 99 scenarios and 6
    duplicates past a lock file (15 crashes and 84 retry moves). docs/guide/retries.md shows
    this conform and tests/docs/test_blocks.py runs it: both rows and "no difference" are read
    off the page; the moves, compared by conform and so equal on both sides, are the model's.
    """
    shown = printed("docs/guide/retries.md", f"bin/crashsweep {TURN_TIMEOUT_FILE}")
    assert "keys-turn-timeout-file: no difference (" in shown
    rows = {
        tuple(line.split()[:2]): line.split()[2:5] for line in shown.splitlines() if "keys-turn-timeout-file (" in line
    }
    assert rows == {("keys-turn-timeout-file", side): ["99", "6", "6"] for side in ("(model)", "(real)")}
    design = load_design(ROOT / "examples" / "keys-turn-timeout-file.toml").design
    job = load_job(ROOT / "examples" / "one-write.toml")
    model = summarize(
        explore(variants.model(design, job, TRACKERS["keyed"]), 1), variant="t", job=job.name, tracker="keyed"
    )
    assert (model.scenarios, model.moves, model.with_dups, model.dups) == (
        {1: 99},
        {1: {"crash": 15, "retry": 84}},
        6,
        6,
    )


def test_a_turn_timeout_does_not_duplicate_past_a_lease_for_real() -> None:
    """The same layer under a lease: 83 scenarios (13 crashes, 70 retry moves) and no duplicate, for real.

    tests/spec/test_retrying.py's figures, derived by hand: the lease's fencing stops the woken process.
    """
    one_write = ROOT / "examples" / "one-write.toml"
    path = ROOT / "examples" / "keys-turn-timeout-lease.toml"
    c = conformance.conform(path.stem, load_job(one_write), one_write, "keyed", SweepOptions(depth=1), None, path)
    assert c.differences == []
    assert (c.real.scenarios, c.real.moves[1], c.real.with_dups, c.real.dups) == (
        {1: 83},
        {"crash": 13, "retry": 70},
        0,
        0,
    )


def test_timeout_layers_conform_beside_an_error_layer_on_a_failing_tool(tmp_path: Path) -> None:
    """call x3 on error > turn x2 on timeout, agent-loop (a lock file) on one failing write: the same row.

    Every reference design, with the agent loop under each lock, crossed with five stacks
    holding a timeout layer, conformed at depth 1 when the real side was built (the closing
    note of #27 gives the run); this one keeps the error and the timeout layers together.
    One write that fails after accept is enough for both: its `tool failed create_a` is the
    call layer's error (retried with the lock file held), and every point inside turn 1 is a
    pause the turn layer can time out, its new attempt running beside the old one.
    """
    stack = (Layer("call", "error", 3), Layer("turn", "timeout", 2))
    design = _layered(tmp_path, "agent-loop", stack)
    job_path = _job_file(tmp_path, ONE_FAILING_WRITE)
    options = SweepOptions(depth=1)
    c = conformance.conform("agent-loop", load_job(job_path), job_path, "keyless-lookup", options, None, design)
    assert c.differences == []
    assert c.real.retried["retry.call"] > 0
    assert c.real.retried["retry.turn"] > 0


def test_timeout_layers_are_swept_one_move_deep_and_refused_deeper_before_the_model_explores() -> None:
    """A timeout's new attempt is a pause's scenario: depth 2 is one line, before any work."""
    design = ROOT / "examples" / "keys-turn-timeout-file.toml"
    with pytest.raises(SweepError, match=r"^the real sweep times out an attempt in scenarios of one move: use depth 1"):
        conformance.conform("t", load_job(TRIAGE_FAILS), TRIAGE_FAILS, "keyed", DEPTH_2, None, design)


def test_a_lookup_the_fence_refuses_is_not_counted(tmp_path: Path) -> None:
    """agent-loop under lease+fencing, keyless-lookup, a pause: the woken process's lookup is refused.

    create_a fails after accept, so its marker sends the restart (and the woken process) up the
    ladder to rung 2. A lookup with a stale token is refused and the process stops: it asked
    no question, and is no lookup (FAULTS.md 7.1), as in the model. The real loop counted it
    before the request went out until the timeout layers' conformance run found the difference.
    """
    job_path = _job_file(tmp_path, ONE_FAILING_WRITE)
    design = ROOT / "examples" / "agent-loop-lease.toml"
    paused = Nemesis(("pause",))
    options = SweepOptions(depth=1)
    c = conformance.conform("lease", load_job(job_path), job_path, "keyless-lookup", options, None, design, paused)
    assert c.differences == []
    assert c.real.lookups > 0


def test_a_woken_process_s_run_retry_takes_a_new_lease(tmp_path: Path) -> None:
    """agent-loop under lease+fencing with call x2 on timeout > run x2 on error, on triage-fails' first turn.

    Given up on at `tracker accepted create_a` (the failing request), process 1 wakes beside
    the new attempt, hears its tool fail, and its run layer begins a new run, whose start takes
    a lease: granted to a stale process too (FAULTS.md 7.1), so the new run goes on and the
    other process is the one fenced. The real tracker refused that lease request (it carried
    the stale token) until this run's conformance found it.

    Two writes in the turn are the fewest that show it: the new attempt files create_b under
    the first run's keys, and the woken process's new run files create_a and create_b again
    under its own, two duplicates. With create_a alone the worst scenario keeps one, as the
    uninterrupted run does (its run retry files create_a again under a new key).
    """
    stack = (Layer("call", "timeout", 2), Layer("run", "error", 2))
    design = _layered(tmp_path, "agent-loop", stack)
    lease = design.read_text().replace('lock = "file"', 'lock = "lease+fencing"')
    design.write_text(lease)
    job_path = _job_file(tmp_path, TWO_WRITES_ONE_FAILING)
    options = SweepOptions(depth=1)
    c = conformance.conform("lease", load_job(job_path), job_path, "keyed", options, None, design)
    assert c.differences == []
    assert c.real.worst_dups > 1  # more than the uninterrupted run's one: the woken run's new keys


TWO_ISSUES = 'name = "two-issues"\nturns = [["create_a", "create_b"], ["search"]]\n[calls]\n' + (
    'create_a = { tool = "create_issue", writes = true }\ncreate_b = { tool = "create_issue", writes = true }\n'
    'search = { tool = "search_issues", writes = false }\n'
)


@pytest.mark.parametrize(
    ("design", "tracker"),
    [("save-after-reply-repair", "keyless"), ("attempt-markers", "keyless")],
)
def test_repair_conforms_at_depth_2(design: str, tracker: str, tmp_path: Path) -> None:
    """`transcript_on_restart = "repair"` crashed for real (spec/CONVERSATIONS.md 1): the model's row at depth 2.

    Two issues and a search, no comment (a repaired filing has no issue to comment on). A crash
    after `reply 1: renamed` and before create_a is applied repairs both filings unsent: the
    runs finish with writes missing, which the real sweep counts as the model does. Its real side
    merges worlds (DEPTH_2, as `crashsweep conform` does by default): a merge that joined two
    worlds the loop tells apart would show here as a difference from the model, and merging is
    checked against every scenario run for real in tests/realsweep/dedup/test_graph.py.
    """
    job_path = tmp_path / "two-issues.toml"
    job_path.write_text(TWO_ISSUES)
    path = ROOT / "examples" / "save-after-reply-repair.toml"
    if design == "attempt-markers":
        path = tmp_path / "markers-repair.toml"
        text = (DOCS / "designs" / "attempt-markers.toml").read_text()
        path.write_text(
            text.replace('name = "attempt-markers"', 'name = "markers-repair"') + ('transcript_on_restart = "repair"\n')
        )
    result = conformance.conform(design, load_job(job_path), job_path, tracker, DEPTH_2, None, path)
    assert result.differences == []
    assert result.real.missing > 0  # something was repaired and never sent


@pytest.mark.parametrize(
    ("design", "tracker", "merged"), [("save-after-reply", "keyed", False), ("attempt-markers", "keyless-lookup", True)]
)
def test_a_transcript_sent_as_is_gets_stuck_for_real_as_in_the_model(
    design: str, tracker: str, merged: bool, tmp_path: Path
) -> None:
    """transcript_on_restart = "as-is" (CONVERSATIONS.md 1) crashed for real at depth 2.

    A restart whose loaded turn has a call without its result sends it to the scripted provider,
    which refuses it; the process exits stuck and the sweep restarts nothing: the scenarios that
    end so never finish, both properties fail, and every figure is the model's: every scenario
    run, or once per world (`merged`: the stuck process's world is a final one).
    """
    path = tmp_path / f"{design}-as-is.toml"
    text = (DOCS / "designs" / f"{design}.toml").read_text()
    path.write_text(
        text.replace(f'name = "{design}"', f'name = "{design}-as-is"') + 'transcript_on_restart = "as-is"\n'
    )
    options = SweepOptions(depth=2, dedup=merged, snapshots=merged)
    result = conformance.conform(design, TRIAGE, None, tracker, options, None, path)
    assert result.differences == []
    assert result.real.never_finish > 0
    real = {v.name: v.holds for v in result.real.invariants}
    assert (real[WELL_FORMED_TRANSCRIPT], real[CAN_FINISH]) == (False, False)


BARE_YES = """name = "markers-service-none"
startup_save = true
reply_save = "before-first-send"
result_saves = "each-call"
markers = "before-writes"
keys = "run-call"
lock = "none"
ladder = ["rerun-when-harmless", "lookup", "person"]
approval_binding = "none"
approval_storage = "service"
"""
TWO_GATES = """name = "two-gates"
turns = [["create_a", "create_b"]]

[calls]
create_a = { tool = "create_issue", writes = true, approval = true }
create_b = { tool = "create_issue", writes = true, approval = true }
"""


def test_a_bare_yes_lets_a_gated_write_through_on_another_calls_approval_for_real(tmp_path: Path) -> None:
    """approval_binding = "none" (CONVERSATIONS.md 2): create_b passes its gate on create_a's approval.

    Its record keeps approval #1, given for create_a: misapproved in every scenario, the run
    without a crash included, so the real verdict fails as the model's does, at depth 2.
    """
    design, job_path = tmp_path / "bare-yes.toml", tmp_path / "two-gates.toml"
    design.write_text(BARE_YES)
    job_path.write_text(TWO_GATES)
    options = SweepOptions(depth=2, dedup=True, snapshots=True)
    result = conformance.conform("bare-yes", load_job(job_path), job_path, "keyed", options, None, design)
    assert result.differences == []
    assert result.real.approvals > 0
    words = rows.counterexamples(result.sweep)[APPROVED_EXACTLY]
    assert "create_b@1 was applied under approval #1, given for create_a with arguments v1" in words


def test_changed_arguments_pass_an_approval_bound_to_the_call_alone_for_real() -> None:
    """changed-args (CONVERSATIONS.md 2.3) on refund-approval at depth 2, carried out for real.

    A crash after the approval and before the refund's marker, then the re-asked reply arrives
    with arguments v2: the service's approval of (refund, v1) matches the call alone, so the
    refund of v2 is applied under it (misapproved). Every figure and the moves of each kind
    are the model's; the tracker ignores keys (a key reused with other arguments is refused).
    """
    design = ROOT / "examples" / "markers-service-call.toml"
    job_path = ROOT / "examples" / "refund-approval.toml"
    options = SweepOptions(depth=2, dedup=True, snapshots=True)
    nemesis = Nemesis(("changed-args",))
    result = conformance.conform(
        design.stem, load_job(job_path), job_path, "keyless-lookup", options, None, design, nemesis
    )
    assert result.differences == []
    assert result.real.moves[2]["changed-args"] > 0
    real = {v.name: v.holds for v in result.real.invariants}
    assert real[APPROVED_EXACTLY] is not True
    assert "refund@2 was applied under approval #1" in rows.counterexamples(result.sweep)[APPROVED_EXACTLY]


CHANGED_ARGS_BOUND = (
    "conform --design examples/markers-service-call-and-args.toml --job examples/refund-approval.toml "
    "--tracker keyless-lookup --depth 2 --faults changed-args"
)
"""docs/guide/conversations.md's conform of an approval bound to call and arguments (test_blocks.py runs it)."""


def test_changed_arguments_do_not_pass_an_approval_bound_to_call_and_arguments_for_real() -> None:
    """The same, the approval bound to call and arguments: it does not match (refund, v2), the person is asked.

    The conform is docs/guide/conversations.md's (worlds merged, depth 2, as above), which
    tests/docs/test_blocks.py runs: its "no difference" is read off the page. conform compares
    every figure, the verdicts and the moves of each kind, so the real ones are the model's,
    checked here: changed-args strikes two moves deep, and approved-exactly holds.
    """
    shown = printed("docs/guide/conversations.md", f"bin/crashsweep {CHANGED_ARGS_BOUND}")
    assert "markers-service-call-and-args@keyless-lookup: no difference (" in shown
    design = load_design(ROOT / "examples" / "markers-service-call-and-args.toml").design
    job = load_job(ROOT / "examples" / "refund-approval.toml")
    faults = ("changed-args",)
    exploration = explore(variants.model(design, job, TRACKERS["keyless-lookup"], faults=faults), 2)
    model = summarize(exploration, variant="m", job=job.name, tracker="keyless-lookup", faults=faults)
    assert model.moves[2]["changed-args"] > 0
    assert {v.name: v.holds for v in model.invariants}[APPROVED_EXACTLY] is not False


def test_changed_args_against_a_tracker_that_honours_keys_is_refused() -> None:
    """The model's keyed tracker answers a key reused with other arguments with the first answer, the real one 422."""
    job_path = ROOT / "examples" / "refund-approval.toml"
    with pytest.raises(SweepError, match="changed-args is carried out against a tracker that ignores keys"):
        conformance.conform(
            "keys-service-call",
            load_job(job_path),
            job_path,
            "keyed",
            SweepOptions(depth=2, dedup=True),
            None,
            ROOT / "examples" / "keys-service-call.toml",
            Nemesis(("changed-args",)),
        )


APPROVAL_CASES = [
    ("attempt-markers", "docs/designs/attempt-markers.toml", "triage-approval", "keyless-lookup", 1, False),
    ("attempt-markers-memory", "examples/attempt-markers-memory.toml", "triage-approval", "keyless-lookup", 1, True),
    ("keys-service-call", "examples/keys-service-call.toml", "refund-approval", "keyed", 1, False),
    ("save-after-reply-node", "examples/save-after-reply-node.toml", "approval-node", "keyless", 2, True),
    ("save-after-reply-node", "examples/save-after-reply-node.toml", "approval-own-node", "keyless", 1, True),
]
"""(design, its file, job, tracker, depth, whether the model finds approved-exactly violated): the
memory storage by the ladder's unapproved send; the node designs by an unkeyed resend under the
approval saved before it (spec/CONVERSATIONS.md 2, consequences)."""


@pytest.mark.parametrize(("design", "path", "job", "tracker", "depth", "violated"), APPROVAL_CASES)
def test_the_approval_gate_conforms(design: str, path: str, job: str, tracker: str, depth: int, violated: bool) -> None:
    """The composed loop's gate crashed for real (spec/CONVERSATIONS.md 2, 3): the model's row.

    Each storage (durable, memory, service) and a node's resume; the approvals asked are among
    the figures compared, and approved-exactly among the verdicts: the real one reads the
    approval each gated record was applied under, as the tracker kept it. Depth 2 merges worlds
    (DEPTH_2, as test_repair_conforms_at_depth_2 says why), depth 1 runs every scenario.
    """
    job_path = ROOT / "examples" / f"{job}.toml"
    options = DEPTH_2 if depth == 2 else SweepOptions(depth=depth)
    result = conformance.conform(design, load_job(job_path), job_path, tracker, options, None, ROOT / path)
    assert result.differences == []
    assert result.real.approvals > 0
    real = {v.name: v for v in result.real.invariants}[APPROVED_EXACTLY]
    assert (real.holds, real.witnessed) == (not violated, True)
