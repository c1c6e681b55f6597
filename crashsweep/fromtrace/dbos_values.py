"""The values DBOS recorded (a step's output, a workflow's input), read without running any of them.

DBOS (3.4.0) records a value as a base64 pickle (`py_pickle`, its default) or as JSON
(`portable_json`). Loading a pickle imports and calls whatever it names, so a pickle is read
here by an unpickler that imports nothing: every class or function the pickle names becomes an
inert `Named` class of that name, which only keeps what it is given (the arguments it is called
or made with, the state it is set to). Plain values (str, numbers, lists, dicts, tuples, sets,
bytes, None, booleans) come out as themselves. So a recorded list of calls reads as the list
it is, and a pydantic-ai `ModelResponse` as a `Named` "pydantic_ai.messages.ModelResponse"
whose `fields()` are the dataclass's fields, its parts `Named` values in turn.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle
from typing import Any, ClassVar

PICKLE_ERRORS = (
    pickle.UnpicklingError,
    ValueError,
    TypeError,
    EOFError,
    AttributeError,
    IndexError,
    KeyError,
    RecursionError,
    MemoryError,
)
"""What a broken or hostile pickle may raise while it is read by `_Reader` (nothing it names runs)."""


class Unreadable(ValueError):
    """A recorded value that is neither DBOS's JSON nor a pickle: the message says why."""


class Named:
    """A value of a class or function a pickle names, never imported: its name, what it was made with, its state."""

    __slots__ = ("args", "state")
    qualified: ClassVar[str] = ""
    """The named class's module and name, "pydantic_ai.messages.ModelResponse"."""

    args: tuple[Any, ...]
    state: Any

    def __new__(cls, *args: Any, **kwargs: Any) -> Named:
        made = object.__new__(cls)
        made.args = (*args, *kwargs.items())
        made.state = None
        return made

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing more: `__new__` kept the arguments (a pickle's REDUCE calls the class itself)."""

    def __setstate__(self, state: Any) -> None:
        self.state = state

    @property
    def name(self) -> str:
        """The named class's module and name."""
        return self.qualified

    def fields(self) -> dict[str, Any]:
        """The state's fields: a dict state, or a dataclass with slots' (None or a dict, the slots' dict)."""
        state = self.state
        if isinstance(state, dict):
            return dict(state)
        if isinstance(state, tuple) and len(state) == 2:
            merged: dict[str, Any] = {}
            for part in state:
                if isinstance(part, dict):
                    merged.update(part)
            return merged
        return {}

    def __repr__(self) -> str:
        return f"<{self.qualified}>"


class _Reader(pickle.Unpickler):
    """An unpickler whose every global is an inert `Named` class: it imports and runs nothing of the pickle's."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self._classes: dict[str, type[Named]] = {}

    def find_class(self, module: str, name: str) -> type[Named]:
        qualified = f"{module}.{name}"
        if qualified not in self._classes:
            self._classes[qualified] = type(qualified, (Named,), {"__slots__": (), "qualified": qualified})
        return self._classes[qualified]


def decode(text: Any, serialization: Any) -> Any:
    """A recorded value (None stays None): DBOS's portable JSON parsed, else its base64 pickle read inertly.

    Unreadable when it is neither.
    """
    if text is None:
        return None
    if serialization == "portable_json":
        try:
            return json.loads(text)
        except (ValueError, TypeError) as error:
            raise Unreadable(f"not JSON ({error})") from None
    try:
        data = base64.b64decode(text, validate=True)
    except (ValueError, TypeError, binascii.Error) as error:
        raise Unreadable(f"not a base64 pickle ({error})") from None
    try:
        return _Reader(data).load()
    except PICKLE_ERRORS as error:
        raise Unreadable(f"a pickle that cannot be read ({type(error).__name__}: {error})") from None


def text(value: Any) -> str:
    """A recorded output as the text a model would read: a string as it is, anything else as JSON (else its repr)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
