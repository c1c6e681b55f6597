"""The provider's refusal of a malformed conversation: the API's HTTP 400, written down and read as History events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from openai import BadRequestError

from crashsweep.realsweep.adapters.openai_agents_provider import (
    REFUSALS_FILE,
    refusal,
    refuse,
    refused,
    refused_events,
    stuck_line,
)
from crashsweep.spec.history import History
from crashsweep.spec.invariants import well_formed_transcript


def call(call_id: str) -> dict[str, Any]:
    """A function_call item."""
    return {"type": "function_call", "call_id": call_id, "name": "create_issue", "arguments": "{}"}


def output(call_id: str) -> dict[str, Any]:
    """A function_call_output item."""
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


def test_the_api_refuses_an_output_without_its_call_and_a_call_without_its_output() -> None:
    """The Responses API's two messages; a well-formed input and a plain string pass."""
    assert refusal([output("a"), call("b"), output("b")]) == (
        "No tool call found for function call output with call_id a."
    )
    assert refusal([call("a"), output("a"), call("b")]) == "No tool output found for function call b."
    assert refusal([{"role": "user", "content": "go"}, call("a"), output("a")]) is None
    assert refusal("go") is None
    assert refusal([]) is None


def test_a_refusal_is_a_bad_request_written_down_and_read_as_a_broken_conversation(tmp_path: Path) -> None:
    """refuse raises openai.BadRequestError (400), writes the request, and the check's events find the orphan."""
    refuse([call("b"), output("b")], tmp_path)  # well formed: nothing happens
    assert not (tmp_path / REFUSALS_FILE).exists()
    with pytest.raises(BadRequestError) as raised:
        refuse([output("a"), output("b")], tmp_path)
    assert raised.value.status_code == 400
    assert stuck_line(raised.value) == (
        "stuck: the provider refuses the conversation (HTTP 400): "
        "No tool call found for function call output with call_id a."
    )
    assert stuck_line(ValueError("other")) is None
    [request] = refused(tmp_path)
    assert request["items"] == [
        {"type": "function_call_output", "call_id": "a"},
        {"type": "function_call_output", "call_id": "b"},
    ]
    events = refused_events(tmp_path, "triage")
    assert [(e.f, e.type, e.incarnation) for e in events] == [
        ("result_saved", "ok", 1),
        ("result_saved", "ok", 1),
        ("model_call", "invoke", 1),
        ("model_call", "fail", 1),
    ]
    broken = well_formed_transcript.check(History(events))
    assert broken is not None
    assert broken.why == "a result of a was saved with no call of it before"


def test_a_refusal_raised_inside_another_error_is_still_found(tmp_path: Path) -> None:
    """The SDK may raise its own error from the provider's: the 400 is found along the causes."""
    with pytest.raises(BadRequestError) as raised:
        refuse([call("a")], tmp_path)
    with pytest.raises(RuntimeError) as wrapped:
        raise RuntimeError("the run failed") from raised.value
    assert stuck_line(wrapped.value) == (
        "stuck: the provider refuses the conversation (HTTP 400): No tool output found for function call a."
    )
