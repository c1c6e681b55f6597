"""The `conform` command: the real sweep and the model side by side."""

from __future__ import annotations

import pytest

from crashsweep.cli.main import main
from tests.paths import ROOT

MY_DESIGN = ROOT / "docs" / "my-design.toml"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--design", "/nonexistent.toml"], "cannot read design file"),
        (["--no-dedup", "--kill"], "--kill goes with dedup"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_conform_prints_both_rows_and_no_difference(capsys: pytest.CaptureFixture[str]) -> None:
    """idempotency-keys at depth 1: the model's row, the real row, and "no difference"."""
    assert main(["conform", "--variants", "idempotency-keys", "--depth", "1"]) == 0
    out = capsys.readouterr().out
    assert "idempotency-keys (model)" in out
    assert "idempotency-keys (real)" in out
    assert "idempotency-keys: no difference" in out


def test_conform_takes_a_design_file(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["conform", "--design", str(MY_DESIGN), "--workers", "2"])
    out = capsys.readouterr().out
    assert status == 0
    assert "my-design: no difference" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--variants", ""], "got nothing"),
        (["--variants", ",,,"], "has an empty name (at position 1)"),
        (["--variants", "keys-and-markers,keys-and-markers"], "keys-and-markers is named twice"),
        (["--variants", "keys-and-markers", "--tracker", "keyed", "--tracker", "keyed"], "keyed is named twice"),
    ],
)
def test_conform_refuses_empty_and_repeated_names_before_sweeping(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """The same checks as compare's --variants: one line, exit 2, nothing swept."""
    assert main(["conform", *args, "--depth", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert message in err


def test_conform_refuses_a_design_file_given_twice(capsys: pytest.CaptureFixture[str]) -> None:
    """As --variants: the same design file twice is refused in one line before any sweep."""
    assert main(["conform", "--design", str(MY_DESIGN), "--design", str(MY_DESIGN), "--depth", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert "is named twice" in err


def test_conform_under_a_lost_reply_prints_both_rows_with_the_faults_in_the_title(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """save-after-reply loses each write's reply in turn: both rows count 34 crash points + 3 lost replies."""
    args = ["conform", "--variants", "save-after-reply", "--faults", "lost-reply", "--call-ids", "fresh"]
    assert main([*args, "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "faults lost-reply" in out
    assert "fresh call IDs" in out
    assert "save-after-reply: no difference" in out
    for side in ("model", "real"):
        row = next(line for line in out.splitlines() if f"save-after-reply ({side})" in line)
        assert row.split()[2] == "37"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--faults", "lost-reply", "--depth", "2", "--no-dedup"], "use depth 1, not 2"),
        (["--faults", "flood"], "unknown fault 'flood'"),
        (["--faults", "pause", "--depth", "2"], "pauses a process in scenarios of one move: use depth 1, not 2"),
    ],
)
def test_conform_refuses_faults_it_cannot_inject_before_sweeping(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["conform", "--variants", "agent-loop", *args]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert message in err


def test_conform_s_depth_of_1_says_why_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    """Its default is 1 against 2 elsewhere: --help says so, and why (power cuts are one-move scenarios)."""
    assert main(["conform", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "1, not 2 as elsewhere: the real sweep cuts the power" in help_text
    assert "[default: 1]" in help_text
