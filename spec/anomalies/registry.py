"""The anomaly rules, in the order of spec/HISTORY.md 8's table, and `find` over a History.

Each rule is one `Rule` value (its name, the invariant it is a case of, what it finds, and its
`find`); `find` gives every rule's anomalies, rule by rule in this order, each rule's in the
order of their witness's first event in the history. `crashsweep audit` reads this registry.
"""

from __future__ import annotations

from crashsweep.spec.anomalies import approvals, effects, runs, transcript
from crashsweep.spec.anomalies.value import Anomaly, Rule
from crashsweep.spec.history import History
from crashsweep.spec.invariants import approved_exactly, can_finish, no_duplicate, no_loss, well_formed_transcript

_APPROVED = approved_exactly.NAME
_TRANSCRIPT = well_formed_transcript.NAME

RULES: tuple[Rule, ...] = (
    Rule(effects.DUPLICATE_EFFECT, no_duplicate.NAME, "a call has two effects", effects.duplicate_effect),
    Rule(effects.LOST_EFFECT, no_loss.NAME, "a run finished and a write has no effect", effects.lost_effect),
    Rule(transcript.ORPHANED_CALL, _TRANSCRIPT, "a tool call sent without its result", transcript.orphaned_call),
    Rule(
        transcript.RESULT_WITHOUT_CALL,
        _TRANSCRIPT,
        "a result saved with no call before",
        transcript.result_without_call,
    ),
    Rule(transcript.DUPLICATE_RESULT, _TRANSCRIPT, "a call's result saved twice", transcript.duplicate_result),
    Rule(approvals.UNAPPROVED_EFFECT, _APPROVED, "a gated write applied unapproved", approvals.unapproved_effect),
    Rule(
        approvals.APPROVAL_OTHER_ARGUMENTS,
        _APPROVED,
        "a gated write applied under another call's or arguments' approval",
        approvals.approval_other_arguments,
    ),
    Rule(
        approvals.APPROVAL_REDEEMED_TWICE,
        _APPROVED,
        "one approval carried by two effects",
        approvals.approval_redeemed_twice,
    ),
    Rule(runs.STUCK_RUN, can_finish.NAME, "a run that can never finish", runs.stuck_run),
    Rule(
        effects.EFFECT_AFTER_FAILURE,
        "",
        "an effect after its run failed or was cancelled",
        effects.effect_after_failure,
    ),
    Rule(effects.KEY_REUSED, "", "one idempotency key sent by two calls or with two arguments", effects.key_reused),
    Rule(
        runs.UNKNOWN_NEVER_SETTLED,
        "",
        "an attempt of unknown outcome no retry settled before its run ended",
        runs.unknown_never_settled,
    ),
    Rule(
        approvals.APPROVAL_NOT_RESUMED,
        "",
        "an approval given after which the run never went on",
        approvals.approval_not_resumed,
    ),
    Rule(runs.REPLAY_DIVERGENCE, "", "a replay found other steps than its history", runs.replay_divergence),
)


def find(history: History) -> tuple[Anomaly, ...]:
    """Every rule's anomalies over the joined `history`: in RULES order, each rule's in history order."""
    return tuple(anomaly for rule in RULES for anomaly in rule.find(history))


def by_name(name: str) -> Rule:
    """The rule named `name` (KeyError for none)."""
    for rule in RULES:
        if rule.name == name:
            return rule
    raise KeyError(name)
