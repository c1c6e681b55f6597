"""The README's commands start crashsweep by a launcher that exists in a fresh checkout.

In a checkout, only bin/crashsweep runs crashsweep (nothing is on PATH until it is installed),
so every command line in the README's code blocks that runs crashsweep must start it by a path
to bin/crashsweep that exists from where the line runs (the top of the checkout, or the folder
a leading `cd DIR &&` moves to). Shell blocks (sh, console) hold only commands; in text blocks,
the lines that start with "$ " are commands and the rest is what they print.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def command_lines(readme: str) -> list[str]:
    """The command lines of the README's code blocks, without any "$ " prompt.

    A command continued with a trailing backslash is one line, its continuations joined to it.
    """
    lines: list[str] = []
    for kind, body in BLOCK.findall(readme):
        continued = False
        for line in body.splitlines():
            if continued:
                lines[-1] = lines[-1][:-1].rstrip() + " " + line.strip()
            elif line.startswith("$ "):
                lines.append(line[2:])
            elif kind in ("sh", "console") and line.strip() and not line.startswith("#"):
                lines.append(line)
            else:
                continue
            continued = lines[-1].endswith("\\")
    return lines


def launcher(line: str) -> tuple[Path, str]:
    """The folder `line` runs in and the first word of its command (after a leading `cd DIR &&`)."""
    words = shlex.split(line, comments=True)
    where = ROOT
    if words[:1] == ["cd"] and words[2:3] == ["&&"]:
        where, words = ROOT / words[1], words[3:]
    return where, words[0]


def test_the_readme_has_crashsweep_commands() -> None:
    """The check below has something to check: the quick start, explore's replay, fuzz, sweep."""
    lines = [line for line in command_lines((ROOT / "README.md").read_text(encoding="utf-8")) if "crashsweep" in line]
    assert len(lines) >= 10
    assert lines[0] == "bin/crashsweep explore --variant save-after-reply --depth 2"


def test_every_readme_command_starts_crashsweep_by_a_launcher_that_exists() -> None:
    """No bare `crashsweep ...` (command not found in a fresh checkout); every launcher path exists."""
    for line in command_lines((ROOT / "README.md").read_text(encoding="utf-8")):
        where, first = launcher(line)
        if first.endswith("crashsweep"):
            assert "/" in first, f"{line!r}: `{first}` is not on PATH in a fresh checkout; use bin/crashsweep"
            assert (where / first).resolve() == ROOT / "bin" / "crashsweep", line
        elif "crashsweep" in shlex.split(line, comments=True)[:3]:
            raise AssertionError(f"{line!r} runs crashsweep in a way this check does not know")


def test_the_check_catches_a_bare_name() -> None:
    """The check fails for the lines it exists to catch."""
    bad = "\n".join(
        ["```sh", "crashsweep fuzz --variant x", "```", "```text", "$ cd docs && bin/crashsweep x", "output", "```", ""]
    )
    lines = command_lines(bad)
    assert lines == ["crashsweep fuzz --variant x", "cd docs && bin/crashsweep x"]
    assert launcher(lines[0]) == (ROOT, "crashsweep")
    where, first = launcher(lines[1])
    assert (where / first).resolve() != ROOT / "bin" / "crashsweep"


def test_a_command_continued_with_a_backslash_is_one_line() -> None:
    """A continuation is part of its command, not output, and the launcher check sees the whole line."""
    text = "```\n$ bin/crashsweep compare --design a.toml \\\n    --design b.toml\n row of output\n```\n"
    assert command_lines(text) == ["bin/crashsweep compare --design a.toml --design b.toml"]
