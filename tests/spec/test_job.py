"""Tests of crashsweep.spec.job: the built-in triage job and job files, good and bad."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crashsweep.spec.job import TRIAGE, Call, Job, JobError, load_job
from tests.paths import ROOT


def test_triage_is_the_seed_job() -> None:
    """Two issues, a search, a comment on the first issue: 4 calls, 3 writes, 2 tool turns."""
    assert [[c.id for c in turn] for turn in TRIAGE.turns] == [["create_a", "create_b"], ["search", "comment_a"]]
    assert TRIAGE.writes == ("create_a", "create_b", "comment_a")
    assert TRIAGE.call("search") == Call("search", "search_issues", False)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_good_file_loads(tmp_path: Path) -> None:
    """A well-formed job file gives the job it describes."""
    job = load_job(_write(tmp_path, 'name = "one"\nturns = [["w"]]\n[calls]\nw = { tool = "mail", writes = true }\n'))
    assert job == Job("one", ((Call("w", "mail", True),),))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('turns = [["w"]]\n[calls]\nw = { tool = "t", writes = true }\n', "name: expected a non-empty string"),
        ('name = "x"\n[calls]\n', "turns: expected a list"),
        ('name = "x"\nturns = [["w"]]\n[calls]\n', "turns[0]: call 'w' is not defined"),
        ('name = "x"\nturns = [[]]\n[calls]\n', "turns[0]: a tool turn needs at least one call"),
        ('name = "x"\nturns = [["w", "w"]]\n[calls]\nw = { tool = "t", writes = true }\n', "'w' appears twice"),
        ('name = "x"\nturns = [["w"]]\n[calls]\nw = { tool = "t" }\n', "calls.w.writes: expected true or false"),
        ('name = "x"\nturns = [["w"]]\n[calls]\nw = { tool = 3, writes = true }\n', "calls.w.tool"),
        ('name = "x"\nturns = [["w"]]\n[calls]\nw = { tool = "t", writes = true, retry = 1 }\n', "unknown key 'retry'"),
        (
            'name = "x"\nturns = [["w"]]\nextra = 1\n[calls]\nw = { tool = "t", writes = true }\n',
            "unknown top-level key",
        ),
        (
            'name = "x"\nturns = [["w"]]\n[calls]\nw = { tool = "t", writes = true }\n'
            'v = { tool = "t", writes = true }\n',
            "calls.v: defined but used in no turn",
        ),
        ('name = "x"\nturns = [[1]]\n', "turns[0]: expected a list of call IDs"),
        ('name = "x"\nturns = [["s"]]\n[calls]\ns = { tool = "t", writes = false, approval = true }\n', "only a write"),
        ('name = "x"\nturns = [["w"]]\n[calls]\nw = { tool = "t", writes = true, approval = "yes" }\n', "w.approval"),
        ("name = = 1\n", "not valid TOML"),
        (
            'name = "x"\nturns = [["w"]]\n[calls]\nw = { tool = "t", writes = true, args = 3 }\n',
            "w.args: expected a table",
        ),
        (
            'name = "x"\nturns = [["w"]]\n[calls]\nw = { tool = "t", writes = true, args = { a = [1] } }\n',
            "calls.w.args.a: expected a string, a number or true/false",
        ),
    ],
)
def test_bad_files_name_the_field(tmp_path: Path, text: str, message: str) -> None:
    """Each malformed file fails with one line that names the file and the field."""
    path = _write(tmp_path, text)
    with pytest.raises(JobError) as caught:
        load_job(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_write_options_load(tmp_path: Path) -> None:
    """fails_after_accept and approval are read from a write's table."""
    text = (
        'name = "o"\nturns = [["w"]]\n[calls]\n'
        'w = { tool = "t", writes = true, fails_after_accept = true, approval = true }\n'
    )
    job = load_job(_write(tmp_path, text))
    assert job.call("w") == Call("w", "t", True, fails_after_accept=True, approval=True)


def test_args_map_a_call_to_the_programs_own_tool(tmp_path: Path) -> None:
    """`args` (in the file's order) name the arguments of the program's tool; an empty table is no arguments."""
    text = (
        'name = "o"\nturns = [["w", "r"]]\n[calls]\n'
        'w = { tool = "refund", writes = true, args = { order_id = "A-1", amount = 20, notify = true } }\n'
        'r = { tool = "list_orders", writes = false, args = {} }\n'
    )
    job = load_job(_write(tmp_path, text))
    assert job.call("w").args == (("order_id", "A-1"), ("amount", 20), ("notify", True))
    assert job.call("r").args == ()
    assert (
        load_job(_write(tmp_path, 'name = "p"\nturns = [["w"]]\n[calls]\nw = { tool = "t", writes = true }\n'))
        .call("w")
        .args
        is None
    )  # no table: the tracker's tool plays it


def test_missing_file_is_a_job_error(tmp_path: Path) -> None:
    """An unreadable path is a JobError, not an OSError."""
    with pytest.raises(JobError, match="cannot read job file"):
        load_job(tmp_path / "absent.toml")


def test_non_utf8_file_is_a_job_error(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are a JobError."""
    path = tmp_path / "job.toml"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(JobError, match="not UTF-8"):
        load_job(path)


ONE = 'name = "one"\nturns = [["w"]]\n[calls]\nw = { tool = "mail", writes = true }\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\nturns = [["a\\u0000b"]]\n[calls]\n"a\\u0000b" = { tool = "t", writes = true }\n', "U+0000"),
        ('name = "x"\nturns = [["a\\nb"]]\n[calls]\n"a\\nb" = { tool = "t", writes = true }\n', "U+000A"),
        ('name = "x\\u0007"\nturns = []\n', "name: contains the control character U+0007"),
        ('name = "x"\nturns = [["w"]]\n[calls]\nw = { tool = "t\\u001b[31m", writes = true }\n', "calls.w.tool"),
    ],
)
def test_control_characters_are_refused_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    """NUL, newline, bell, escape: refused in call IDs, the name and tools, in a message of one line."""
    with pytest.raises(JobError, match=re.escape(message)) as caught:
        load_job(_write(tmp_path, text))
    assert "\n" not in str(caught.value)
    assert "\x00" not in str(caught.value)
    if "u0000" in text:
        assert "calls['a\\x00b'] (the call ID)" in str(caught.value)


def test_a_node_names_the_calls_a_resume_runs_again() -> None:
    """`node` on calls of one turn: the calls before one in its node (CONVERSATIONS.md 3)."""
    job = load_job(Path(__file__).resolve().parents[2] / "examples" / "approval-node.toml")
    assert job.call("create_a").node == "file_and_approve"
    assert job.node_before("comment_a") == ("create_a",)
    assert job.node_before("create_a") == ()
    assert job.gated == ("comment_a",)
    assert TRIAGE.node_before("comment_a") == ()


def test_a_node_must_be_a_non_empty_string(tmp_path: Path) -> None:
    path = tmp_path / "job.toml"
    path.write_text('name = "j"\nturns = [["a"]]\n[calls]\na = { tool = "t", writes = true, node = 3 }\n')
    with pytest.raises(JobError, match=re.escape("calls.a.node: expected a non-empty string")):
        load_job(path)


def test_the_shipped_triage_file_is_the_built_in_job() -> None:
    """examples/triage.toml (`--job triage`) is the job the commands run when none is given."""
    assert load_job(ROOT / "examples" / "triage.toml") == TRIAGE
