"""What a process of the program said, read from its output: why it is stuck, or what failed.

Each process's stdout and stderr go to one file (`output-N.txt`). A stuck process's last line
says why (crashpoint.STUCK_STATUS); a failed one is named by its exception when it printed a
Python traceback (`said`); `ending` says how a scenario's last process ended (spec/POINTS.md 5).
"""

from __future__ import annotations

from pathlib import Path

from crashsweep.realsweep.probe import crashpoint


def last_line(path: Path) -> str:
    """Its last line that is not blank, stripped; "(no output)" for none."""
    lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


TRACEBACK = "Traceback (most recent call last):"


def said(path: Path) -> str:
    """What a failed process said of its failure: its exception's type and message, else its last line.

    Python prints an uncaught exception as a Traceback block, its frames indented, then the
    exception's line ("json.decoder.JSONDecodeError: Extra data: ..."); the notes a framework adds
    (LangGraph's "During task with name ...") and any later output come after it, so the last
    line alone hides the exception. The last block's exception line is taken.
    """
    if not path.exists():
        return "(no output)"
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    starts = [n for n, line in enumerate(lines) if line.strip() == TRACEBACK]
    if starts:
        found = next((line for line in lines[starts[-1] + 1 :] if line.strip() and not line[0].isspace()), None)
        if found is not None:
            return found.strip()
    return last_line(path)


def ending(status: int, output: Path) -> tuple[str, int]:
    """How a scenario's last process ended: (why it never finishes, "" when it finished; its failed exit status).

    0: finished; crashpoint.STUCK_STATUS: stuck, its last line says why; any other status ends
    a restart that cannot recover (spec/POINTS.md 5): that status and what it said.
    """
    if status == 0:
        return "", 0
    if status == crashpoint.STUCK_STATUS:
        return last_line(output), 0
    return f"the restart exited with status {status}: {said(output)}", status
