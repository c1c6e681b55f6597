"""What a process said: a failure named by its exception, a stuck process by its last line, how a last process ended."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.process.output import ending, said

LANGGRAPH_FAILURE = """\
starting
Traceback (most recent call last):
  File "agent.py", line 3, in <module>
    raise KeyError("create_a")
KeyError: 'create_a'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "agent.py", line 5, in <module>
    graph.invoke(state)
    ~~~~~~~~~~~~^^^^^^^
langgraph.errors.GraphRecursionError: Recursion limit of 25 reached
During task with name 'approval' and id '4f1c'
"""


@pytest.mark.parametrize(
    ("output", "line"),
    [
        (LANGGRAPH_FAILURE, "langgraph.errors.GraphRecursionError: Recursion limit of 25 reached"),
        ("one\n  two  \n\n", "two"),  # no traceback: the last line
        ("", "(no output)"),
    ],
)
def test_a_failed_process_is_named_by_its_exception_not_its_last_line(tmp_path: Path, output: str, line: str) -> None:
    """The last Traceback block's exception line; a framework's note after it is not the failure."""
    path = tmp_path / "output-1.txt"
    path.write_text(output)
    assert said(path) == line


def test_how_a_last_process_ended_finished_stuck_or_unrecovered(tmp_path: Path) -> None:
    """0 finished; STUCK_STATUS stuck, its last line; any other status a restart that cannot recover."""
    path = tmp_path / "output-2.txt"
    path.write_text(LANGGRAPH_FAILURE)
    assert ending(0, path) == ("", 0)
    assert ending(crashpoint.STUCK_STATUS, path) == ("During task with name 'approval' and id '4f1c'", 0)
    failed = "the restart exited with status -11: langgraph.errors.GraphRecursionError: Recursion limit of 25 reached"
    assert ending(-11, path) == (failed, -11)
