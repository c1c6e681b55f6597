"""`crashsweep design show NAME` and `crashsweep design new`: design files to start from.

`show` prints a built-in design or a framework preset as the design file that `--design` reads
back to the very same policy (tests/cli/test_design.py reads every one back), or a design file
shipped with crashsweep as it is. `new` prints a commented template of every field. Both print
to stdout, so `crashsweep design show dbos > mine.toml` is the way to a file of one's own.

`list` (also `crashsweep variants`) is the one listing of every name a command takes: the
built-in designs and presets (--variant), the shipped design files (--design) and the shipped
jobs (--job), each with the option that takes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from crashsweep.cli import shipped
from crashsweep.cli.variant_names import did_you_mean
from crashsweep.spec import files
from crashsweep.spec.policy import PolicyError
from crashsweep.variants import PRESETS, is_preset, names
from crashsweep.variants import design as built_in


@click.group()
def design() -> None:
    """Design files (TOML) to start from: a built-in design or preset, or a template."""


@design.command(name="list")
def list_names() -> int:
    """Every design and job by name, with the option that takes it (as `crashsweep variants`)."""
    click.echo("\n".join(listing()))
    return 0


@design.command()
@click.argument("name")
def show(name: str) -> int:
    """Print design NAME as a design file (a built-in design, a framework preset or a shipped file)."""
    click.echo(design_file(name), nl=False)
    return 0


@design.command()
@click.argument("name", default="my-design")
def new(name: str) -> int:
    """Print a commented template of a design file, named NAME (default: my-design)."""
    files.name("name", name, PolicyError)
    click.echo(TEMPLATE.replace('"my-design"', json.dumps(name), 1), nl=False)
    return 0


def design_file(name: str) -> str:
    """The design file of `name`: a preset's policy written out, or a shipped design file's text."""
    if name in PRESETS:
        preset = PRESETS[name]
        what = "a framework preset" if is_preset(name) else "a built-in design"
        lines = [
            f"# {name}: {what} of crashsweep as a design file to start from (`crashsweep design show {name}`).",
            "# Explore it with `crashsweep explore --design FILE`; spec/POLICIES.md gives the rules of each value.",
            f"name = {json.dumps(preset.name)}",
            f"summary = {json.dumps(preset.summary)}",
            *(f"{field} = {files.toml_value(value)}" for field, value in preset.policy.as_mapping().items()),
        ]
        return "\n".join(lines) + "\n"
    found = shipped.files("design").get(name)
    if found is None:
        close = did_you_mean(name, known())
        raise click.BadParameter(f"unknown design {name!r}{close} (known: {', '.join(known())})", param_hint="'NAME'")
    return found.read_text(encoding="utf-8")


def known() -> tuple[str, ...]:
    """Every name `show` prints: the built-in designs and presets, then the shipped design files."""
    return (*names(), *(name for name in shipped.files("design") if name not in PRESETS))


def listing() -> list[str]:
    """One line per name: the name, the option that takes it and what it is, designs first, then jobs."""
    rows = [
        (name, "--variant", ("(framework preset) " if is_preset(name) else "") + built_in(name).summary)
        for name in names()
    ]
    rows += [(name, "--design", _said(path)) for name, path in shipped.files("design").items() if name not in PRESETS]
    rows += [(name, "--job", _said(path)) for name, path in shipped.files("job").items()]
    width = max(len(name) for name, _, _ in rows)
    return [f"{name:<{width}}  {option:<9}  {what}".rstrip() for name, option, what in rows]


def _said(path: Path) -> str:
    """What a shipped file is, in one line: its `summary`, else its first comment's first sentence."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        if line.startswith("summary = "):
            return str(json.loads(line.removeprefix("summary = ")))
    start = next((i for i, line in enumerate(lines) if line.startswith("#")), len(lines))
    comment = []
    for line in lines[start:]:
        if not line.startswith("#"):
            break
        comment.append(line.lstrip("#").strip())
    sentence = " ".join(comment).split(". ")[0]
    return sentence.removesuffix(".") + ("." if sentence else "")


TEMPLATE = """\
# A loop design as data. Explore it with `crashsweep explore --design FILE`; it goes wherever
# `--variant NAME` does (compare, replay, view, fuzz, sweep, conform). Every field is required
# except ladder, on_tool_error, fsync, unreadable and retries; spec/POLICIES.md gives the rules of each value.

name = "my-design"                   # how tables and traces call it
summary = "what the loop does, in one line"

startup_save = true                  # Save(start): the run ID is durable before any request
reply_save = "before-first-send"     # or "never": the call IDs reach disk with the next save
result_saves = "each-call"           # "each-call", "writes-only", "whole-turn" or "none"
markers = "none"                     # or "before-writes": mark and save before each write
keys = "run-call"                    # or "none": send Key(run, call) with every call
lock = "none"                        # "none", "file" (a lock file at every start), "os-lock" or "lease+fencing"
ladder = []                          # with markers: e.g. ["rerun-when-harmless", "lookup", "person"]
on_tool_error = "retry"              # or "model": hand a tool error to the model, which retries anew

# Durability, for --faults power-loss (spec/FAULTS.md section 6): uncomment to change.
# fsync = "none"                     # "none", "no-dir-fsync" or "full": the checkpoint save's fsyncs
# unreadable = "ask-person"          # or "fresh-run" (only with fsync "none"): on an unreadable checkpoint

# Retry layers around the loop, innermost first (spec/RETRIES.md): uncomment to add.
# scope "call", "turn" or "run"; on "error", "unknown-outcome" or "timeout"; attempts from 2, or "unbounded"
# retries = [{ scope = "call", on = "error", attempts = 3 }, { scope = "run", on = "error", attempts = 2 }]
"""
"""The template `new` prints; tests/cli/test_design.py checks it names every allowed value."""
