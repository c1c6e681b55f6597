"""The transcript repairs of the OpenAI Agents SDK agent, and the SDK sending what the callback returns.

The callback is the SDK's `RunConfig.session_input_callback`; the last test runs the SDK's own
`Runner.run` on a session that a compaction left with outputs whose calls are gone, and reads
what the model was sent.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, SQLiteSession, Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from crashsweep.realsweep.adapters.openai_agents_repair import (
    UNKNOWN,
    add_missing_results,
    drop_orphan_results,
    repaired,
    session_input_callback,
)


def call(call_id: str) -> dict[str, Any]:
    """A stored function_call item."""
    return {"type": "function_call", "call_id": call_id, "name": "create_issue", "arguments": "{}"}


def output(call_id: str, text: str = "ok") -> dict[str, Any]:
    """A stored function_call_output item."""
    return {"type": "function_call_output", "call_id": call_id, "output": text}


USER = {"role": "user", "content": "go"}


def shape(items: list[Any]) -> list[tuple[str, str]]:
    """Each item's type and call ID."""
    return [(i.get("type", "message"), i.get("call_id", "")) for i in items]


def test_missing_results_follow_their_reply() -> None:
    """An orphaned call gets "outcome unknown" right after its reply's calls, before what follows."""
    items = [USER, call("a"), call("b"), output("a"), call("c")]
    fixed = add_missing_results(items)
    assert shape(fixed) == [
        ("message", ""),
        ("function_call", "a"),
        ("function_call", "b"),
        ("function_call_output", "b"),
        ("function_call_output", "a"),
        ("function_call", "c"),
        ("function_call_output", "c"),
    ]
    assert fixed[3]["output"] == UNKNOWN


def test_an_output_whose_call_was_trimmed_is_dropped_only_by_both_directions() -> None:
    """What a compaction left: outputs a, b without their calls, then a whole turn c."""
    trimmed = [output("a"), output("b"), call("c"), output("c")]
    assert drop_orphan_results(trimmed) == trimmed[2:]
    assert repaired("none", trimmed) == trimmed
    assert repaired("add-missing-results", trimmed) == trimmed  # nothing to add: every call has its output
    assert repaired("both-directions", trimmed) == trimmed[2:]
    with pytest.raises(ValueError, match="expected one of none, add-missing-results, both-directions"):
        repaired("drop", trimmed)


def test_none_installs_no_callback() -> None:
    """`none` is the SDK's own handling: no session_input_callback at all."""
    assert session_input_callback("none") is None
    combine = session_input_callback("both-directions")
    assert combine is not None
    assert combine([output("a"), USER], [{"role": "user", "content": "more"}]) == [
        USER,
        {"role": "user", "content": "more"},
    ]


class Recording(Model):
    """A model that records the input it is sent and answers at once."""

    def __init__(self) -> None:
        self.sent: list[list[Any]] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        """Record the input (the SDK passes it by name), answer "done"."""
        self.sent.append(list(kwargs["input"]))
        text = ResponseOutputText(type="output_text", text="done", annotations=[])
        message = ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[text])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        """Not used."""
        raise NotImplementedError


@pytest.mark.parametrize(
    ("mode", "sent"),
    [
        ("none", [("function_call_output", "a"), ("function_call", "c"), ("function_call_output", "c")]),
        ("both-directions", [("function_call", "c"), ("function_call_output", "c")]),
    ],
)
def test_the_sdk_sends_what_the_callback_returns(tmp_path: Path, mode: str, sent: list[tuple[str, str]]) -> None:
    """Runner.run on a trimmed session: the SDK sends the orphaned output as stored; both-directions leaves it out."""
    session = SQLiteSession("1", tmp_path / "s.sqlite")
    asyncio.run(session.add_items([output("a"), call("c"), output("c")]))  # type: ignore[list-item]
    model = Recording()
    config = RunConfig(session_input_callback=session_input_callback(mode), tracing_disabled=True)
    asyncio.run(Runner.run(Agent(name="a", model=model), [], session=session, run_config=config))
    session.close()
    assert [shape(request) for request in model.sent] == [sent]
