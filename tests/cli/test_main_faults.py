"""The commands under faults: --faults and --call-ids on explore, compare, replay, view and fuzz.

Figures are those derived by hand in tests/variants/test_faults.py; here they check that the
options reach the model, that traces and tables name the faults, and that every printed
replay command works exactly as printed.
"""

from __future__ import annotations

import html
import json
import re
import shlex
from pathlib import Path

import pytest

from crashsweep.cli.main import main
from tests.reports.test_replay import run_pytest


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def _replay_lines(out: str) -> list[str]:
    return [line.split("replay: ", 1)[1] for line in out.splitlines() if "replay: crashsweep" in line]


@pytest.mark.parametrize(
    "args",
    [
        ("explore", "--variant", "save-after-reply", "--faults", "lost-reply,power-cut"),
        ("compare", "--faults", "nope"),
        ("replay", "--variant", "save-after-reply", "--path", "8:7=2", "--faults", "crash"),
        ("view", "--variant", "save-after-reply", "--no-open", "--call-ids", "sometimes"),
        ("fuzz", "--variant", "save-after-reply", "--call-ids", "new"),
    ],
)
def test_bad_values_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    """An unknown fault kind or call-ID mode: one line naming the known values, exit 2, nothing on stdout."""
    status, out, err = _run(capsys, *args)
    assert status == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "known: " in err or "is not one of 'stable', 'fresh'" in err  # --call-ids is click's choice now


def test_explore_counts_moves_with_a_tally_per_kind(capsys: pytest.CaptureFixture[str]) -> None:
    """save-after-reply with lost replies, depth 1: 34 crashes and 3 lost replies (FAULTS.md section 2)."""
    status, out, _ = _run(capsys, "explore", "--variant", "save-after-reply", "--depth", "1", "--faults", "lost-reply")
    assert status == 1
    assert "depth 1, faults lost-reply)" in out
    assert "1 move: 37 (their 37 moves: crash 34, lost-reply 3)" in out
    status, out, _ = _run(
        capsys, "explore", "--variant", "save-after-reply", "--depth", "1", "--faults", "lost-reply", "--format", "json"
    )
    data = json.loads(out)
    assert (data["scenarios"], data["moves"]) == ({"1": 37}, {"1": {"crash": 34, "lost-reply": 3}})
    assert (data["faults"], data["call_ids"], data["with_dups"]) == (["lost-reply"], "stable", 12)


def test_json_without_faults_keeps_its_keys(capsys: pytest.CaptureFixture[str]) -> None:
    """No fault, stable IDs: the row has no fault keys at all."""
    _, out, _ = _run(capsys, "explore", "--variant", "save-after-reply", "--depth", "1", "--format", "json")
    assert not {"faults", "call_ids", "moves"} & set(json.loads(out))


def test_compare_title_names_the_faults(capsys: pytest.CaptureFixture[str]) -> None:
    """The table's title names the fault kinds and the call IDs; its columns count moves."""
    status, out, _ = _run(
        capsys, "compare", "--faults", "key-expiry", "--call-ids", "fresh", "--variants", "keys-and-markers"
    )
    assert status == 1
    assert out.splitlines()[0] == "Job triage, tracker keyed, depth 2; faults key-expiry; fresh call IDs"
    assert "1 move" in out
    assert "2 moves" in out
    _, plain, _ = _run(capsys, "compare", "--variants", "keys-and-markers")
    assert plain.splitlines()[0] == "Job triage, tracker keyed, depth 2"
    assert plain.splitlines()[2].split() == [
        "variant",
        "once",
        "twice",
        "with_dups",
        "dups",
        "missing",
        "asks",
        "calls+",
        "verdict",
    ]


def test_seed_tables_keep_their_titles_and_add_the_faults(capsys: pytest.CaptureFixture[str]) -> None:
    """--seed-table under faults: each title, then what it ran on and the faults in brackets."""
    _, out, _ = _run(capsys, "compare", "--seed-table", "--depth", "1", "--faults", "wrong-answer")
    assert "The five designs (job triage, tracker keyed, depth 1; faults wrong-answer)" in out
    assert "The agent's own loop (job triage, depth 1; faults wrong-answer)" in out


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("save-after-reply", ("--depth", "1", "--faults", "lost-reply")),
        ("keys-and-markers", ("--faults", "key-expiry")),
        ("attempt-markers", ("--faults", "wrong-answer")),
        ("agent-loop", ("--faults", "lost-reply,key-expiry,wrong-answer", "--call-ids", "fresh")),
    ],
)
def test_printed_replay_commands_work_as_printed(
    capsys: pytest.CaptureFixture[str], variant: str, options: tuple[str, ...]
) -> None:
    """Each replay command explore prints carries the faults and reproduces its violation."""
    status, out, _ = _run(capsys, "explore", "--variant", variant, *options)
    violated = [line.split()[0] for line in out.splitlines() if "VIOLATED" in line]
    commands = _replay_lines(out)
    assert status == 1
    assert len(commands) == len(violated) > 0
    for invariant, command in zip(violated, commands, strict=True):
        words = shlex.split(command)
        assert "--faults" in words
        replay_status, trace, _ = _run(capsys, *words[1:])
        assert replay_status == 1
        assert f"VIOLATED {invariant} after step" in trace
        assert "FAULT " in trace or "crash" in trace


def test_a_fault_stands_out_in_the_trace(capsys: pytest.CaptureFixture[str]) -> None:
    """save-after-reply's shortest duplicate under lost replies: one FAULT step, ruled like a crash, no crash."""
    _, out, _ = _run(capsys, "explore", "--variant", "save-after-reply", "--depth", "1", "--faults", "lost-reply")
    (command,) = _replay_lines(out)[:1]
    _, trace, _ = _run(capsys, *shlex.split(command)[1:])
    lines = trace.splitlines()
    assert "0 crashes, 1 fault" in lines[0]
    fault = next(i for i, line in enumerate(lines) if "FAULT lost-reply" in line)
    assert "tool failed create_a" in lines[fault]
    assert lines[fault - 1] == lines[fault + 1] == "-" * 100
    _, text, _ = _run(capsys, *shlex.split(command)[1:], "--format", "json")
    data = json.loads(text)
    assert (data["faults"], data["call_ids"]) == (["lost-reply"], "stable")
    assert [step["action"] for step in data["steps"] if step["kind"] == "fault"] == ["lost-reply"]


def test_the_pytest_snippet_replays_under_faults(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The snippet builds the model with the same faults and call IDs, and passes."""
    _, out, _ = _run(
        capsys, "explore", "--variant", "attempt-markers", "--faults", "wrong-answer", "--call-ids", "fresh"
    )
    command = _replay_lines(out)[0]
    status, snippet, _ = _run(capsys, *shlex.split(command)[1:], "--pytest")
    assert status == 0
    assert 'faults=("wrong-answer",), fresh_ids=True' in snippet
    done = run_pytest(tmp_path, snippet, "test_replayed.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_view_and_out_draw_the_fault(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The sequence diagram names the fault; view writes its page under faults."""
    status, _, _ = _run(
        capsys,
        "explore",
        "--variant",
        "save-after-reply",
        "--depth",
        "1",
        "--faults",
        "lost-reply",
        "--out",
        str(tmp_path / "out"),
    )
    assert status == 1
    sequence = html.unescape((tmp_path / "out" / "no-duplicate.sequence.svg").read_text(encoding="utf-8"))
    words = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", sequence))  # the label's lines, in order
    assert "FAULT lost-reply: the tracker applies a write and its reply is lost" in words
    status, _out, _ = _run(
        capsys,
        "view",
        "--variant",
        "save-after-reply",
        "--depth",
        "1",
        "--faults",
        "lost-reply",
        "--no-open",
        "--out",
        str(tmp_path / "view"),
    )
    assert status == 1
    assert "FAULT lost-reply" in html.unescape((tmp_path / "view" / "index.html").read_text(encoding="utf-8"))


def test_fuzz_finds_the_lost_reply(capsys: pytest.CaptureFixture[str]) -> None:
    """fuzz with lost replies finds save-after-reply's duplicate and prints a replay command that works."""
    status, out, _ = _run(
        capsys, "fuzz", "--variant", "save-after-reply", "--faults", "lost-reply", "--seed", "1", "--examples", "50"
    )
    assert status == 1
    (command,) = _replay_lines(out)
    assert "--faults lost-reply" in command
    replay_status, _, _ = _run(capsys, *shlex.split(command)[1:])
    assert replay_status == 1
