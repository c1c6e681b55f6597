"""The OpenAI Agents SDK made warm in the zygote: one throwaway run, before any swept process is forked.

A process's first run through the SDK builds what the SDK and the openai package leave to
first use: the pydantic models of a response's items (ResponseFunctionToolCall,
ResponseOutputMessage, ... are built when first made: about 5 ms), the run loop's and the
session's first calls. Made in the zygote, every forked process finds them made: a process of
the built-in agent went from 31-36 ms of CPU to 24-26 ms.

`warm_up()` runs an agent of its own, once per process: a model that calls one tool that does
nothing, then answers, kept in an in-memory SQLiteSession. It touches no work directory, no
tracker and no crash point, and leaves no thread running (asyncio.run joins its executor), so
what a swept process does from its disk is what it did before. It is registered with the
zygote (process/warming.py) when the adapter is imported, so a user's agent gets it too.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, Model, ModelResponse, RunConfig, Runner, SQLiteSession, Usage, function_tool
from agents.items import TResponseInputItem, TResponseOutputItem
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

_warmed: list[bool] = []


class _WarmModel(Model):
    """Calls the tool `noop` once, then answers."""

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> ModelResponse:
        """The call of `noop` first; once its output is in the conversation, the final answer."""
        answered = not isinstance(input, str) and any(
            isinstance(item, dict) and item.get("type") == "function_call_output" for item in input
        )
        output: list[TResponseOutputItem]
        if answered:
            text = ResponseOutputText(type="output_text", text="warm", annotations=[])
            output = [
                ResponseOutputMessage(
                    id="msg_warm", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    type="function_call", id="fc_warm", call_id="warm", name="noop", arguments="{}"
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # the SDK's abstract method
        """Not played (`Runner.run` only)."""
        raise NotImplementedError


def warm_up(argv: list[str] | None = None) -> None:
    """Run the throwaway agent once in this process; at once after the first call.

    Its run is not traced (its own RunConfig): no trace processor's thread starts in the
    zygote, and the program's own tracing setting is left as the program made it.
    """
    if _warmed:
        return
    _warmed.append(True)

    @function_tool
    async def noop() -> str:
        """Do nothing."""
        return "ok"

    agent: Agent[Any] = Agent(name="crashsweep-warm-up", model=_WarmModel(), tools=[noop])
    session = SQLiteSession("warm", ":memory:")
    try:
        asyncio.run(Runner.run(agent, "warm up", session=session, run_config=RunConfig(tracing_disabled=True)))
    finally:
        session.close()
