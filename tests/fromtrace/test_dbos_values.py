"""Reading DBOS's recorded values without running them: plain values as they are, a named class inert."""

from __future__ import annotations

import base64
import pickle
from pathlib import Path
from typing import Any

import pytest
from dbos._serialization import DefaultSerializer
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from crashsweep.fromtrace.dbos_values import Named, Unreadable, decode, text


def pickled(value: Any) -> str:
    """`value` as DBOS records it by default (its DefaultSerializer: a base64 pickle)."""
    return DefaultSerializer().serialize(value)


class Opens:
    """An object whose pickle, loaded, would open (create) a file: `open(PATH, "w")`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


def test_plain_values_come_out_as_themselves() -> None:
    value = [{"id": "a", "name": "create_issue", "args": {"title": "t", "n": 1.5, "ok": True}}, None, (1, b"x")]
    assert decode(pickled(value), "py_pickle") == value
    assert decode('{"a": [1, 2]}', "portable_json") == {"a": [1, 2]}
    assert decode(None, "py_pickle") is None


def test_a_pydantic_ai_reply_is_a_named_value_with_its_fields() -> None:
    """The ModelResponse and its parts keep their classes' names and their dataclass fields; nothing is imported."""
    reply = ModelResponse(parts=[ToolCallPart("create_issue", {"title": "t"}, tool_call_id="a"), TextPart("hi")])
    value = decode(pickled(reply), "py_pickle")
    assert isinstance(value, Named)
    assert value.name == "pydantic_ai.messages.ModelResponse"
    call, said = value.fields()["parts"]
    assert (call.name, call.fields()["tool_name"], call.fields()["args"]) == (
        "pydantic_ai.messages.ToolCallPart",
        "create_issue",
        {"title": "t"},
    )
    assert said.fields()["content"] == "hi"
    assert not isinstance(value, ModelResponse)


def test_a_pickle_that_would_run_something_is_read_without_running_it(tmp_path: Path) -> None:
    """A pickle calling `open(PATH, "w")` reads as an inert call of io.open (pickle's name for it); no file made."""
    target = tmp_path / "made"
    value = decode(pickled(Opens(target)), "py_pickle")
    assert isinstance(value, Named)
    assert (value.name, value.args) == ("io.open", (str(target), "w"))
    assert not target.exists()


@pytest.mark.parametrize(
    ("raw", "serialization", "said"),
    [
        ("not base64!", "py_pickle", "not a base64 pickle"),
        (base64.b64encode(pickle.dumps([1, 2])[:-3]).decode(), "py_pickle", "a pickle that cannot be read"),
        ('{"a": ', "portable_json", "not JSON"),
    ],
)
def test_a_value_that_cannot_be_read_is_unreadable_saying_why(raw: str, serialization: str, said: str) -> None:
    with pytest.raises(Unreadable, match=said):
        decode(raw, serialization)


def test_an_output_as_text_is_a_string_as_it_is_else_json() -> None:
    assert text("filed issue #1") == "filed issue #1"
    assert text([{"number": 1}]) == '[{"number": 1}]'
    assert text(b"x") == "b'x'"
