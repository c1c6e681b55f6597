"""The triage job's model replies, as the scripted model hands them out: what the from-trace tests expect back.

TURN_1 and TURN_2 are script.ToolCall's fields (id, name, args) of TRIAGE's two tool turns, by hand
from spec/job.py TRIAGE and script.arguments; `scripted` asks a real ScriptedModel for the same,
turn by turn, as a recorded run's cassette must replay them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crashsweep.realsweep.adapters.script import ScriptedModel
from crashsweep.spec.job import TRIAGE

TURN_1 = [
    {"id": "create_a", "name": "create_issue", "args": {"title": "issue create_a"}},
    {"id": "create_b", "name": "create_issue", "args": {"title": "issue create_b"}},
]
TURN_2 = [
    {"id": "search", "name": "search_issues", "args": {"query": "issue"}},
    {"id": "comment_a", "name": "comment", "args": {"issue_title": "issue create_a", "body": "comment comment_a"}},
]


def scripted(folder: Path) -> list[list[tuple[str, str, dict[str, Any]]]]:
    """(id, tool, arguments) of each call of each ask of TRIAGE's scripted model, the final ask's none."""
    model = ScriptedModel(TRIAGE, folder=folder)
    return [[(c.id, c.name, c.args) for c in model.reply(turn) or []] for turn in range(len(TRIAGE.turns) + 1)]
