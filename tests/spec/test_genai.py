"""How span attributes read (spec/genai.py), over attribute mappings of each instrumentation's shape.

The attribute mappings are written here by hand in the shapes spec/genai.py's docstring names
(the importer's are text; the SDK's may hold other values, which are not read). Each expected
digest is the SHA-256 of canonical JSON the test writes out by hand.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from crashsweep.spec import genai


def digest(canonical: str) -> str:
    """The digest of arguments whose canonical JSON (or non-JSON text) the test writes out by hand."""
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


def fields(tool: str, call_id: str = "", args: str = "", key: str = "", call: str = "") -> dict[str, str]:
    """A tool span's fields, every one of them given (empty when unknown)."""
    return {"call": call, "tool": tool, "call_id": call_id, "key": key, "args_digest": args}


TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "create_issue", "gen_ai.tool.call.id": "c1"}
"""A GenAI execute_tool span's attributes (pydantic-ai's, OpenLLMetry's shape)."""
LANGCHAIN = '{"input_str": "", "inputs": {"a": 1}, "kwargs": {"tool_call_id": "c3"}}'
"""OpenLLMetry's LangChain callback payload as the arguments: its inputs are, its call ID is in kwargs."""


@pytest.mark.parametrize(
    ("name", "attributes", "expected"),
    [
        # GenAI: the arguments' keys sorted, no spaces; the key as given.
        (
            "execute_tool create_issue",
            TOOL | {"gen_ai.tool.call.arguments": '{"b": 1, "a": 2}', "crashsweep.idempotency_key": "k"},
            fields("create_issue", "c1", digest('{"a":2,"b":1}'), "k"),
        ),
        # pydantic-ai's version-2 arguments, not JSON: digested as the text it is.
        ("execute_tool x", TOOL | {"tool_arguments": "not JSON"}, fields("create_issue", "c1", digest("not JSON"))),
        # GenAI's arguments come before pydantic-ai's and OpenInference's.
        (
            "t",
            TOOL | {"input.value": "[3]", "tool_arguments": "[2]", "gen_ai.tool.call.arguments": "[1]"},
            fields("create_issue", "c1", digest("[1]")),
        ),
        ("t", TOOL | {"input.value": "[3]", "tool_arguments": "[2]"}, fields("create_issue", "c1", digest("[2]"))),
        # No operation name, but a GenAI tool name: a tool.
        ("execute_tool x", {"gen_ai.tool.name": "x"}, fields("x")),
        # OpenInference: kind TOOL, its tool.name (else the span's name), its input.value.
        (
            "search",
            {"openinference.span.kind": "TOOL", "input.value": '{"q": "bug"}'},
            fields("search", "", digest('{"q":"bug"}')),
        ),
        ("search", {"openinference.span.kind": "TOOL", "tool.name": "find"}, fields("find")),
        # Temporal: the activity ID is the call, the type (the name after RunActivity:) the tool.
        ("RunActivity:create", {"temporalActivityID": "7", "temporalWorkflowID": "wf"}, fields("create", call="7")),
        # OpenLLMetry's LangChain payload: the inputs {"a": 1} digested, the call ID from kwargs.
        (
            "execute_tool t",
            TOOL | {"gen_ai.tool.call.id": "", "gen_ai.tool.call.arguments": LANGCHAIN},
            fields("create_issue", "c3", digest('{"a":1}')),
        ),
        # ... unless the span names its own call ID.
        (
            "execute_tool t",
            TOOL | {"gen_ai.tool.call.arguments": LANGCHAIN},
            fields("create_issue", "c1", digest('{"a":1}')),
        ),
    ],
)
def test_tool_fields_of_each_convention(name: str, attributes: dict[str, Any], expected: dict[str, str]) -> None:
    """Each instrumentation's tool span gives its call, call ID, tool, arguments' digest and key."""
    assert genai.tool_fields(name, attributes) == expected


@pytest.mark.parametrize(
    ("name", "attributes"),
    [
        ("chat m", {"gen_ai.operation.name": "chat"}),  # a model call
        ("invoke_agent a", {"gen_ai.operation.name": "invoke_agent", "gen_ai.tool.name": "x"}),  # another operation
        ("search", {"openinference.span.kind": "LLM"}),
        ("step", {}),
        ("RunActivity:create", {}),  # no activity ID: a span so named is no activity
        ("RunActivity:create", {"temporalActivityID": 7}),  # an SDK value that is not text is not read
        ("execute_tool x", TOOL | {"pydantic_ai.tool.failure_stage": "validate"}),  # the body never ran
    ],
)
def test_spans_that_are_no_tool_attempts(name: str, attributes: dict[str, Any]) -> None:
    """Another operation, no tool mark, or arguments that failed validation: no tool fields."""
    assert genai.tool_fields(name, attributes) is None


def test_values_that_are_not_text_are_not_read() -> None:
    """An SDK span's integer call ID and list arguments are left out, as the importer never sees them."""
    attributes = TOOL | {"gen_ai.tool.call.id": 5, "gen_ai.tool.call.arguments": ["a"], "input.value": "[1]"}
    assert genai.tool_fields("t", attributes) == fields("create_issue", "", digest("[1]"))


@pytest.mark.parametrize(
    ("arguments", "canonical"),
    [
        ('{"kwargs": {}, "inputs": {"a": 1}}', '{"inputs":{"a":1},"kwargs":{}}'),  # no input_str
        ('{"input_str": "", "inputs": {"a": 1}, "kwargs": []}', '{"input_str":"","inputs":{"a":1},"kwargs":[]}'),
        ('{"input_str": "", "kwargs": {"tool_call_id": "c3"}', '{"input_str": "", "kwargs": {"tool_call_id": "c3"}'),
    ],
)
def test_near_misses_of_the_langchain_payload_are_plain_arguments(arguments: str, canonical: str) -> None:
    """No input_str, kwargs no object, cut short (not JSON, digested as it is): plain arguments, no call ID."""
    attributes = TOOL | {"gen_ai.tool.call.id": "", "gen_ai.tool.call.arguments": arguments}
    assert genai.tool_fields("t", attributes) == fields("create_issue", "", digest(canonical))


@pytest.mark.parametrize(
    ("attributes", "error", "expected"),
    [
        ({}, False, ("ok", "")),
        ({}, True, ("fail", "tracker down")),
        ({genai.DEFERRED: "ApprovalRequired"}, False, ("fail", "deferred (ApprovalRequired)")),
        ({genai.DEFERRED: "CallDeferred"}, True, ("fail", "deferred (CallDeferred)")),  # the deferral says why
    ],
)
def test_how_a_tool_span_ends(attributes: dict[str, str], error: bool, expected: tuple[str, str]) -> None:
    """`ok`; `fail` with the status message for an error; `fail` "deferred (NAME)" for a deferral."""
    assert genai.tool_end(attributes, error, "tracker down") == expected


@pytest.mark.parametrize(
    ("attributes", "model", "agent"),
    [
        ({"gen_ai.operation.name": "chat"}, True, False),
        ({"gen_ai.operation.name": "text_completion"}, True, False),
        ({"gen_ai.operation.name": "generate_content"}, True, False),
        ({"openinference.span.kind": "LLM"}, True, False),
        ({"gen_ai.operation.name": "execute_tool", "openinference.span.kind": "LLM"}, False, False),  # GenAI's says
        ({"gen_ai.operation.name": "invoke_agent"}, False, True),
        ({"openinference.span.kind": "AGENT"}, False, False),  # OpenInference's agent spans say nothing
        ({}, False, False),
    ],
)
def test_model_and_agent_spans(attributes: dict[str, str], model: bool, agent: bool) -> None:
    """Model spans by GenAI's inference operations or OpenInference's LLM; agent spans by invoke_agent only."""
    assert (genai.is_model(attributes), genai.is_agent(attributes)) == (model, agent)


def test_deferred_requests_are_a_dicts_calls_and_approvals_lists() -> None:
    """Of these final results, only the fifth is a DeferredToolRequests' JSON (both lists); the rest miss one."""
    results = [
        None,
        "",
        "done",
        "[]",
        '{"calls": [], "approvals": []}',
        '{"calls": []}',
        '{"calls": {}, "approvals": []}',
    ]
    assert [genai.deferred_requests(result) for result in results] == [False, False, False, False, True, False, False]
    assert not genai.deferred_requests({"calls": [], "approvals": []})  # a value, not its JSON text: not read


@pytest.mark.parametrize(
    ("attributes", "run"),
    [
        ({"gen_ai.conversation.id": "c", "session.id": "s", "temporalWorkflowID": "w"}, "c"),
        ({"gen_ai.conversation.id": "", "session.id": "s", "temporalWorkflowID": "w"}, "s"),  # empty: not a run
        ({"session.id": 5, "temporalWorkflowID": "w"}, "w"),  # not text: not read
        ({"gen_ai.tool.name": "x"}, None),
    ],
)
def test_a_spans_own_run(attributes: dict[str, Any], run: str | None) -> None:
    """The conversation, else the session, else the workflow ID: the first non-empty text; None without one."""
    assert genai.own_run(attributes) == run
