"""The command blocks of README.md and the docs site, run and compared with what crashsweep prints.

Sources: README.md, every page under docs/ and the spec/ files the site includes. A fenced block
(its fence indented or not, as inside a list item) holds commands:

- a line that starts with "$ " is a command, and the lines after it, up to the next command or
  the block's end, are what it prints;
- in a shell block (sh, console, bash, shell) with no "$ " line, every line that is not blank
  or a comment is a command, shown without its output;
- a command that ends with a backslash goes on over the next line.

Four checks, one test per block (the last per page), its id the block's file and the line of its opening fence:

- test_block_prints_what_it_shows: every block where a command shows output. Each command of
  the block runs from the top of the checkout (a leading `cd DIR &&` moves, as in a shell), and
  its stdout, normalised, must be the block's text for it, normalised the same way. A
  crashsweep command started by the launcher runs in this process, through crashsweep's main as
  the launcher's script runs it, and a command shown by two blocks that leaves nothing behind
  runs once for both; every other line runs through bash (tests/docs/commands.py says which and
  why). stderr is not compared (it holds the launcher's first-use set-up lines); it is shown
  when the check fails. The exit status may be 0 or 1 (1: an invariant violated, which most
  examples show); 2 or anything else fails.
- test_block_commands_parse: every crashsweep command shown, with output or without, goes
  through the command line's parser and option callbacks in this process (every command's body
  replaced by one that does nothing), from the folder it runs in: unknown options, bad values
  and unknown designs fail; the files of `--job` must exist and those of `--design` load (the
  commands read them in their body), unless an earlier command of the block writes them (they
  are under its `--out DIR`, as from-trace's). Nothing is explored or swept.
- test_block_commands_start_crashsweep_by_its_launcher: in a checkout only bin/crashsweep
  runs crashsweep (nothing is on PATH before `pip install`), so every crashsweep command starts
  it by a path to bin/crashsweep that exists from where the command runs.
- test_a_framework_page_shows_what_its_first_sweep_prints: the first sweep of each framework's
  page (the registry's `docs_page`s) is shown with its output, so the first check runs it: the
  command a reader runs first is run, not only parsed.

What the comparison normalises, and why (both sides alike):

- `in 2.2 s` (the time a real sweep took) becomes `in <seconds> s`, and conform's `(189
  processes, 5.2 s)` becomes `(189 processes, <seconds> s)`: it varies with the machine and
  its load; the process counts beside it are compared as printed (a merging sweep runs one
  process per distinct world, and the tests pin those counts).
- The temporary directory (`tempfile.gettempdir()`) becomes `<tmp>` and the user ID in
  `crashsweep-view-UID` becomes `<uid>`: `view` writes its page there and prints the path.
- A sweep of a LangGraph graph (my_graph, my_support_graph, `--framework langgraph`): ToolNode
  runs the calls of a turn on threads, so which effects a crash point interrupts varies from run
  to run, even under durability "sync"; calls+ (2 more calls in some runs) and the number of distinct worlds,
  so of processes, are normalised to `<n>`. Crash points, scenarios, with_dups, dups, missing
  and the verdicts are compared as printed.
- A command under benchmarks/ prints measurements (rates, CPU times, process counts of a
  timed run): every number becomes `<n>` and runs of spaces one space, so what is compared is
  the report's shape, its lines and their labels.
- Trailing spaces and blank lines at the end are dropped.
- A line that is only "…" stands for any number of printed lines (a listing cut short, or an
  excerpt that leaves out the start); every other line must match in order.

A block that runs a real sweep (sweep, conform), the frontier of 512 designs or a benchmark is
marked slow: the fast tier (`bin/check --fast`) leaves it out, `bin/check` runs it.
"""

from __future__ import annotations

import difflib
import itertools
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import pytest

from crashsweep.realsweep.adapters.frameworks import REGISTRY
from crashsweep.spec.policy import PolicyError
from crashsweep.variants.design_file import load_design
from tests.docs.commands import run_shown, runs_crashsweep, where_and_words
from tests.paths import ROOT

SHELL = ("sh", "console", "bash", "shell")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
ELISION = "…"


@dataclass
class Command:
    """One command of a block, its continuations joined, and the lines the block shows it printing."""

    line: str
    shown: list[str] = field(default_factory=list)


@dataclass
class Block:
    """A fenced block of a page: where it is, its language and its commands."""

    source: str
    lineno: int
    kind: str
    commands: list[Command]

    @property
    def id(self) -> str:
        return f"{self.source}:{self.lineno}"

    @property
    def shows_output(self) -> bool:
        return any(command.shown for command in self.commands)


def blocks_of(text: str, source: str) -> list[Block]:
    """The fenced blocks of `text` that hold at least one command."""
    found: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, kind = opening.group(1), opening.group(2)
        body: list[str] = []
        index += 1
        while index < len(lines) and lines[index].strip() != "```":
            line = lines[index]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            index += 1
        commands = commands_of(body, kind)
        if commands:
            found.append(Block(source, index - len(body), kind, commands))
        index += 1
    return found


def commands_of(body: list[str], kind: str) -> list[Command]:
    """The commands of a block's lines and what each is shown printing."""
    prompted = any(line.startswith("$ ") for line in body)
    commands: list[Command] = []
    continued = False
    for line in body:
        if continued:
            commands[-1].line = commands[-1].line[:-1].rstrip() + " " + line.strip()
        elif line.startswith("$ "):
            commands.append(Command(line[2:]))
        elif not prompted and kind in SHELL and line.strip() and not line.lstrip().startswith("#"):
            commands.append(Command(line))
        elif commands and prompted:
            commands[-1].shown.append(line)
            continue
        else:
            continue
        continued = commands[-1].line.endswith("\\")
    return commands


def sources() -> dict[str, str]:
    """README.md, the docs pages and the spec files the site includes, by path from the top."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "spec").glob("*.md"))]
    return {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in paths}


BLOCKS = [block for source, text in sources().items() for block in blocks_of(text, source)]
THREADED = re.compile(r"my_graph:|my_support_graph:|--framework langgraph")
SLOW = re.compile(r"\b(sweep|conform|frontier)\b|benchmarks/")


def params(blocks: list[Block]) -> list[Any]:
    return [
        pytest.param(
            block,
            id=block.id,
            marks=[pytest.mark.slow] if any(SLOW.search(command.line) for command in block.commands) else [],
        )
        for block in blocks
    ]


def normalise(lines: list[str], command: str) -> list[str]:
    """The lines with what legitimately varies between runs replaced (see the module's docstring)."""
    temp = tempfile.gettempdir()
    measured = "benchmarks/" in command
    threaded = bool(THREADED.search(command))
    out: list[str] = []
    for line in lines:
        line = re.sub(r"\bin \d+(?:\.\d+)? s\b", "in <seconds> s", line)
        line = re.sub(r"( processes, )\d+(?:\.\d+)? s\)", r"\1<seconds> s)", line)
        line = line.replace(temp, "<tmp>")
        line = re.sub(r"crashsweep-view-\d+", "crashsweep-view-<uid>", line)
        if threaded:
            line = re.sub(r"calls\+ \d+", "calls+ <n>", line)
            line = re.sub(r"processes( +)\d+", r"processes\1<n>", line)
            line = re.sub(r"\(\d+ distinct of", "(<n> distinct of", line)
        if measured and line.strip() != ELISION:
            line = re.sub(r" +", " ", re.sub(r"\d[\d,]*(?:\.\d+)?", "<n>", line))
        out.append(line.rstrip())
    while out and not out[-1]:
        out.pop()
    return out


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether `printed` is `shown`, each line "…" standing for any number of lines."""
    segments: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == ELISION:
            segments.append([])
        else:
            segments[-1].append(line)
    if len(segments) == 1:
        return shown == printed
    first, *middle, last = segments
    end = len(printed) - len(last)
    if printed[: len(first)] != first or end < len(first) or printed[end:] != last:
        return False
    position = len(first)
    for segment in middle:
        found = next(
            (at for at in range(position, end - len(segment) + 1) if printed[at : at + len(segment)] == segment),
            None,
        )
        if found is None:
            return False
        position = found + len(segment)
    return True


@pytest.mark.parametrize("block", params([block for block in BLOCKS if block.shows_output]))
def test_block_prints_what_it_shows(
    block: Block, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in block.commands:
        done = run_shown(command.line, monkeypatch, capsys)
        assert done.status in (0, 1), f"{command.line}\nexit {done.status}\n{done.out}{done.err}"
        shown = normalise(command.shown, command.line)
        printed = normalise(done.out.splitlines(), command.line)
        if not matches(shown, printed):
            diff = "\n".join(difflib.unified_diff(shown, printed, "shown", "printed", lineterm=""))
            raise AssertionError(f"{block.id}: `{command.line}` printed something else\n{diff}\n{done.err}")


def every_command(group: click.Command) -> Iterator[click.Command]:
    yield group
    if isinstance(group, click.Group):
        for command in group.commands.values():
            yield from every_command(command)


SHOWN_CRASHSWEEP = [block for block in BLOCKS if any(runs_crashsweep(command.line) for command in block.commands)]


@pytest.mark.parametrize("block", params(SHOWN_CRASHSWEEP))
def test_block_commands_parse(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    from crashsweep.cli.main import cli

    nothing: Callable[..., None] = lambda *args, **kwargs: None  # noqa: E731
    for click_command in every_command(cli):
        monkeypatch.setattr(click_command, "callback", nothing)
    written: list[Path] = []  # the --out folders of the block's earlier commands: their files are made by running
    for command in block.commands:
        if not runs_crashsweep(command.line):
            continue
        where, words = where_and_words(command.line)
        monkeypatch.chdir(where)
        try:
            cli.main(words[1:], prog_name="crashsweep", standalone_mode=False)
        except click.ClickException as error:
            raise AssertionError(f"{block.id}: `{command.line}`: {error.format_message()}") from None
        for option, value in itertools.pairwise(words):
            if option == "--out":
                written.append((where / value).resolve())
            if any((where / value).resolve().is_relative_to(folder) for folder in written):
                continue
            if option == "--job":
                assert (where / value).is_file(), f"{block.id}: `{command.line}`: no job file {value}"
            elif option == "--design":
                try:  # read in the body, not by the parser: load it here
                    load_design(where / value)
                except (OSError, PolicyError) as error:
                    raise AssertionError(f"{block.id}: `{command.line}`: {error}") from None


@pytest.mark.parametrize("block", [pytest.param(block, id=block.id) for block in BLOCKS])
def test_block_commands_start_crashsweep_by_its_launcher(block: Block) -> None:
    for command in block.commands:
        where, words = where_and_words(command.line)
        if words and words[0].endswith("crashsweep"):
            assert "/" in words[0], f"{command.line!r}: `{words[0]}` is not on PATH in a checkout; use bin/crashsweep"
            assert (where / words[0]).resolve() == ROOT / "bin" / "crashsweep", command.line
        elif words[:2] != ["pip", "install"] and any("crashsweep" in word for word in words[:3]):
            raise AssertionError(f"{command.line!r} runs crashsweep in a way this check does not know")


NOT_A_SWEEP = ("--list-points", "--crash", "--determinism")
"""The modes of `crashsweep sweep` that run no sweep (a listing, one scenario, the determinism check alone)."""


def first_sweep(page: str) -> Command:
    """The first command of `page` that sweeps (`crashsweep sweep` in none of NOT_A_SWEEP's modes)."""
    for block in BLOCKS:
        for command in block.commands if block.source == page else ():
            words = where_and_words(command.line)[1]
            if runs_crashsweep(command.line) and words[1:2] == ["sweep"] and not set(words) & set(NOT_A_SWEEP):
                return command
    raise AssertionError(f"{page} shows no sweep")


@pytest.mark.parametrize("page", sorted({framework.docs_page for framework in REGISTRY}))
def test_a_framework_page_shows_what_its_first_sweep_prints(page: str) -> None:
    """Each framework's page shows its first sweep with what it prints, so test_block_prints_what_it_shows runs it.

    A command shown without output is only parsed: temporal.md's first sweep, so shown, printed
    a determinism violation and no sweep for as long as nothing ran it.
    """
    command = first_sweep(page)
    assert command.shown, f"{page}: `{command.line}` is shown without what it prints (as `$ command`, then its output)"


def test_the_readme_starts_with_the_main_job_and_the_tests() -> None:
    """README.md's first block: the two commands a reader runs first, in this order."""
    first = blocks_of((ROOT / "README.md").read_text(encoding="utf-8"), "README.md")[0]
    assert [command.line for command in first.commands] == [
        "bin/crashsweep explore --variant save-after-reply --depth 2",
        "bin/check",
    ]


def test_there_are_blocks_to_check() -> None:
    """The checks above have something to check: outputs shown, and crashsweep commands in README.md."""
    readme = [block for block in BLOCKS if block.source == "README.md"]
    assert sum(block.shows_output for block in readme) >= 5
    assert sum(runs_crashsweep(c.line) for block in readme for c in block.commands) >= 8
    assert sum(block.shows_output for block in BLOCKS) >= 15


def test_the_parser_of_blocks() -> None:
    """Prompts, output, continuations, shell blocks without prompts, indented fences, elisions."""
    text = "\n".join(
        [
            "```sh",
            "crashsweep fuzz --variant x   # a comment",
            "# a comment line",
            "```",
            "- item",
            "  ```text",
            "  $ cd docs && bin/crashsweep compare --design a.toml \\",
            "      --design b.toml",
            "   row of output",
            "  $ bin/crashsweep variants",
            "  ```",
            "",
        ]
    )
    first, second = blocks_of(text, "x.md")
    assert (first.lineno, first.kind) == (1, "sh")
    assert [c.line for c in first.commands] == ["crashsweep fuzz --variant x   # a comment"]
    assert not first.shows_output
    assert second.lineno == 6
    assert [(c.line, c.shown) for c in second.commands] == [
        ("cd docs && bin/crashsweep compare --design a.toml --design b.toml", [" row of output"]),
        ("bin/crashsweep variants", []),
    ]
    assert where_and_words(second.commands[0].line)[0] == ROOT / "docs"
    assert where_and_words("RAY_AUTH_MODE=token bin/crashsweep sweep")[1] == ["bin/crashsweep", "sweep"]
    assert matches(["a", "…", "d"], ["a", "b", "c", "d"])
    assert matches(["…", "c"], ["a", "b", "c"])
    assert not matches(["a", "…", "d"], ["a", "b", "c"])
    assert not matches(["a", "b"], ["a", "b", "c"])
    assert normalise(["  processes     10 in 0.3 s, once"], "x") == ["  processes     10 in <seconds> s, once"]
    assert normalise(["d: no difference (189 processes, 5.2 s)"], "x") == [
        "d: no difference (189 processes, <seconds> s)"
    ]
    graph = "cd docs/examples && ../../bin/crashsweep sweep --target my_graph:run --check my_graph:check"
    printed = ["  with_dups 0   calls+ 5", "  processes     19 in 4.3 s, once per world (19 distinct of 30"]
    assert normalise(printed, graph) == [
        "  with_dups 0   calls+ <n>",
        "  processes     <n> in <seconds> s, once per world (<n> distinct of 30",
    ]
    assert normalise(["  sweep    84   19.3   (776 in 9.3 s)"], "python benchmarks/x.py") == [
        " sweep <n> <n> (<n> in <seconds> s)"
    ]


@pytest.mark.parametrize(
    "line",
    [
        "bin/crashsweep explore --variant no-such-design",
        "bin/crashsweep explore --variant save-after-reply --depht 2",
        "bin/crashsweep compare --design docs/no-such.toml",
        "bin/crashsweep sweep --variant agent-loop --spawn never",
    ],
)
def test_the_parse_check_catches_a_bad_command(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown design or option, a missing file or a bad choice fails the check, and nothing runs."""
    with pytest.raises(AssertionError, match=re.escape(line)):
        test_block_commands_parse(Block("x.md", 1, "sh", [Command(line)]), monkeypatch)
