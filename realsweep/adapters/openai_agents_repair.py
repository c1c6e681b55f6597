"""Transcript repair on the OpenAI Agents SDK, as a user writes it: a `session_input_callback` (CONVERSATIONS.md 7).

What a start repairs in the conversation it loads (`transcript_repair`), before anything is
sent. The SDK hands the session's history to `RunConfig.session_input_callback` when a run
goes on from its session (`Runner.run(agent, [], session=session)`), and sends what the
callback returns; the items it adds that were not in the history are written to the session
with the run's input, and the history items it leaves out stay stored but are not sent.

- `none`: no callback: the SDK's own handling (it drops each function_call without its output
  from what it sends, and sends every function_call_output as stored).
- `add-missing-results`: each function_call of the loaded history without an output is given
  the output "outcome unknown", right after its reply's calls (what issue trackers' repairs do
  for a tool call orphaned by a crash). A result whose call was trimmed away stays.
- `both-directions`: that, and each function_call_output whose call is not before it in the
  history leaves what is sent (a compaction's orphans, the other direction).

`session_input_callback(mode)` gives the callback (None for `none`); the built-in agent passes
it in its RunConfig (`--transcript-repair`). The functions read the items as JSON dicts, as
`Session.get_items` gives them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

REPAIRS = ("none", "add-missing-results", "both-directions")
"""The values of `--transcript-repair` (spec/policy.py's TranscriptRepair), the default first."""
UNKNOWN = "outcome unknown"
"""The output a repair gives a call that has none."""
Items = list[Any]


def _kind(item: Any) -> str:
    return str(item.get("type", "message")) if isinstance(item, dict) else ""


def add_missing_results(items: Sequence[Any]) -> Items:
    """`items` with an "outcome unknown" output after the last call of each reply for each call that has none."""
    answered = {str(i.get("call_id")) for i in items if _kind(i) == "function_call_output"}
    repaired: Items = []
    missing: Items = []
    for item in items:
        if missing and _kind(item) != "function_call":  # the reply's calls end here
            repaired.extend(missing)
            missing = []
        repaired.append(item)
        if _kind(item) == "function_call" and str(item.get("call_id")) not in answered:
            missing.append({"type": "function_call_output", "call_id": str(item.get("call_id")), "output": UNKNOWN})
    return repaired + missing


def drop_orphan_results(items: Sequence[Any]) -> Items:
    """`items` without each function_call_output whose call is not before it."""
    calls: set[str] = set()
    kept: Items = []
    for item in items:
        if _kind(item) == "function_call":
            calls.add(str(item.get("call_id")))
        if _kind(item) == "function_call_output" and str(item.get("call_id")) not in calls:
            continue
        kept.append(item)
    return kept


def repaired(mode: str, history: Sequence[Any]) -> Items:
    """The history as `mode` repairs it."""
    if mode not in REPAIRS:
        raise ValueError(f"transcript repair {mode!r}: expected one of {', '.join(REPAIRS)}")
    if mode == "none":
        return list(history)
    fixed = add_missing_results(history)
    return drop_orphan_results(fixed) if mode == "both-directions" else fixed


def session_input_callback(mode: str) -> Callable[[Items, Items], Items] | None:
    """The SDK's `session_input_callback` that repairs the loaded history as `mode` says; None for `none`."""
    repaired(mode, [])  # an unknown mode is refused here, not at the first load
    if mode == "none":
        return None

    def combine(history: Items, new_items: Items) -> Items:
        return [*repaired(mode, history), *new_items]

    return combine
