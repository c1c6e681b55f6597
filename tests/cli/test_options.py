"""Tests of crashsweep.cli.options: the shared options' checks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from crashsweep.cli.options import check_out, check_variant, choices_of, split_names


def test_unknown_variant_is_a_bad_parameter_listing_known_ones() -> None:
    """An unknown --variant fails with the list of known designs."""
    with pytest.raises(click.BadParameter, match=r"unknown variant 'x' \(known: save-once-per-turn"):
        check_variant(click.Context(click.Command("c")), click.Option(["--variant"]), "x")
    assert check_variant(click.Context(click.Command("c")), click.Option(["--variant"]), "agent-loop") == "agent-loop"


def test_choices_carry_the_tracker_kind() -> None:
    """choices_of turns names into values: the tracker's kind, the depth, the state limit."""
    choices = choices_of(3, None, "keyless-lookup", 99)
    assert (choices.tracker.name, choices.tracker.lookup, choices.depth, choices.max_states) == (
        "keyless-lookup",
        True,
        3,
        99,
    )
    assert choices.job.name == "triage"


def test_split_names_refuses_empty_lists_and_names() -> None:
    """Names are stripped; an empty value, or an empty name between commas, is a bad parameter."""
    assert split_names(" a , b@keyed ", "--variants") == ["a", "b@keyed"]
    for value, message in (("", "got nothing"), (" , ", "position 1"), ("a,,b", "position 2"), ("a,", "position 2")):
        with pytest.raises(click.BadParameter, match=message):
            split_names(value, "--variants")


def test_check_out_gives_an_absolute_path_or_a_bad_parameter(tmp_path: Path) -> None:
    """--out is checked as it is parsed: usable gives the absolute path, unusable a one-line bad parameter."""
    context, option = click.Context(click.Command("c")), click.Option(["--out"])
    assert check_out(context, option, None) is None
    assert check_out(context, option, tmp_path / "new") == tmp_path / "new"
    with pytest.raises(click.BadParameter, match="/dev/null is not a directory"):
        check_out(context, option, Path("/dev/null/x"))


def test_upgrade_to_names_a_design_or_a_design_file_and_is_refused_with_a_pause(tmp_path: Path) -> None:
    """--upgrade-to (spec/RETRIES.md 2): a registered name, a design file (its name and path), or exit 2."""
    from crashsweep.cli.options import upgrade_version, with_upgrade
    from crashsweep.variants import design

    assert upgrade_version(None) is None
    assert upgrade_version("idempotency-keys") == ("idempotency-keys", None)
    shipped = Path(__file__).resolve().parents[2] / "examples" / "keys-call-retry.toml"
    assert upgrade_version(str(shipped)) == ("keys-call-retry", shipped)
    with pytest.raises(click.BadParameter, match="neither a design's name"):
        upgrade_version("idempotency-key")
    (tmp_path / "bad.toml").write_text("name = 3\n")
    with pytest.raises(click.BadParameter, match="name: expected a non-empty string"):
        upgrade_version(str(tmp_path / "bad.toml"))
    choices = choices_of(1, None, "keyed", 1000)
    assert with_upgrade(choices, "idempotency-keys", "agent-loop").upgrade == "idempotency-keys"
    assert with_upgrade(choices, None, "agent-loop") is choices
    paused = replace(choices, faults=("pause",))
    with pytest.raises(click.UsageError, match="no --faults pause"):
        with_upgrade(paused, "idempotency-keys", design("agent-loop"))
    timeout = str(shipped.with_name("keys-turn-timeout-file.toml"))
    with pytest.raises(click.UsageError, match="retries on a timeout"):
        with_upgrade(choices, timeout, "agent-loop")


def _names(command: click.Command) -> list[str]:
    """The command's options as --help lists them, by their first flag."""
    return [param.opts[0] for param in command.params]


def test_a_group_applies_its_options_in_the_order_given() -> None:
    from crashsweep.cli.options import group

    both = group(click.option("--first"), click.option("--second"))

    @click.command()
    @both
    @click.option("--third")
    def command(first: str | None, second: str | None, third: str | None) -> None:
        """A command."""

    assert _names(command) == ["--first", "--second", "--third"]


def test_the_model_options_are_the_design_then_the_explorations() -> None:
    """model_options: --variant (with the command's help) and --design, then job_options."""
    from crashsweep.cli.options import model_options

    @click.command()
    @model_options("the design to try")
    def command(**_: object) -> None:
        """A command."""

    assert _names(command) == [
        "--variant",
        "--design",
        "--depth",
        "--job",
        "--tracker",
        "--faults",
        "--call-ids",
        "--no-projection",
        "--max-states",
    ]
    assert command.params[0].help == "the design to try"


def test_the_commands_that_explore_a_design_share_one_group() -> None:
    """explore, replay and view take the same options of a design and its exploration, with the same help."""
    from crashsweep.cli.main import cli

    shared = ["--variant", "--design", "--depth", "--job", "--tracker", "--max-states"]
    helps = []
    for name in ("explore", "replay", "view"):
        options = {param.opts[0]: param for param in cli.commands[name].params}
        assert set(shared) <= set(options)
        helps.append([getattr(options[flag], "help", None) for flag in shared[1:]])
    assert helps[0] == helps[1] == helps[2]


def test_a_variant_that_names_a_shipped_design_file_says_to_use_design() -> None:
    with pytest.raises(click.BadParameter, match=r"^keys-run-retry is a shipped design: use --design keys-run-retry$"):
        check_variant(click.Context(click.Command("c")), click.Option(["--variant"]), "keys-run-retry")


def test_an_unknown_fault_suggests_a_close_one() -> None:
    from crashsweep.cli.main import cli

    done = CliRunner().invoke(cli, ["explore", "--variant", "dbos", "--faults", "power-los"])
    assert done.exit_code == 2
    assert "did you mean 'power-loss'?" in done.output


def test_call_ids_is_the_same_choice_on_every_command() -> None:
    """--call-ids stable|fresh: a choice --help lists and the shell completes, on sweep as on the others."""
    from crashsweep.cli.main import cli

    def commands(group: click.Command) -> list[click.Command]:
        subs = list(getattr(group, "commands", {}).values())
        return subs + [c for sub in subs for c in commands(sub)]

    found = [p for c in commands(cli) for p in c.params if p.name == "call_ids"]
    assert len(found) >= 7
    for param in found:
        assert isinstance(param.type, click.Choice)
        assert tuple(param.type.choices) == ("stable", "fresh")
