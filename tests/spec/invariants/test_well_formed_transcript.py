"""well-formed-transcript over a History: each conversation's calls, results and model calls in order."""

import pytest

from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants import well_formed_transcript

STEPS = {"ask": ("model_call", "invoke"), "no": ("model_call", "fail"), "call": ("tool_call", "invoke")}
STEPS["result"] = ("result_saved", "ok")


def talk(*steps: str, incarnation: int = 0) -> tuple[Event, ...]:
    found = []
    for n, step in enumerate(steps, 1):
        what, _, rest = step.partition(" ")
        f, kind = STEPS[what]
        found.append(Event("r", incarnation, n, kind, f, call_id=rest, detail=rest if what == "no" else ""))
    return tuple(found)


@pytest.mark.parametrize(
    ("steps", "why"),
    [
        (("ask", "call c1", "ask"), "the model was sent a tool call without its result (c1 has no result)"),
        (("ask", "call c1", "ask", "no refused"), "the model was sent a tool call without its result (refused)"),
        (("ask", "call c1", "result c1", "result c1"), "c1 has two results in the conversation"),
        (("ask", "result c2"), "a result of c2 was saved with no call of it before"),
    ],
)
def test_what_breaks_a_conversation(steps: tuple[str, ...], why: str) -> None:
    found = well_formed_transcript.check(History(talk(*steps)))
    assert found is not None
    assert found.why == why
    assert found.evidence


def test_a_restart_starts_its_own_conversation_and_a_result_sent_is_the_witness() -> None:
    first = talk("ask", "call c1")  # the crashed process never sent its orphan
    again = talk("ask", "call c1", "result c1", "ask", incarnation=1)
    history = History((*first, *again), ("c1",))
    assert well_formed_transcript.check(history) is None
    assert well_formed_transcript.seen(history)
    assert not well_formed_transcript.seen(History(first, ("c1",)))
