"""crashsweep.cli.sweep_plan: the sweep command's options as one request, its refusals as one table.

Every rule of `RULES` is exercised through the command line (crashsweep.cli.main.main, the
entry bin/crashsweep runs): one line on stderr, nothing on stdout, exit 2, before any process
starts. The request a good command line makes is read back: its mode, the values its options
name, the real sweep's options. And the sweep's modules stay readable: no function of
crashsweep/cli/sweep*.py is longer than a screen (MAX_FUNCTION_LINES).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.cli.main import main
from crashsweep.cli.sweep import sweep
from crashsweep.cli.sweep_plan import RULES, Given, Mode, SweepRequest, plan
from tests.paths import ROOT
from tests.realsweep.helpers import child_env

CLI = ROOT / "crashsweep" / "cli"
MAX_FUNCTION_LINES = 60
"""The most lines a function of the sweep's modules may take, its decorators included."""

JOB = str(ROOT / "examples" / "one-write.toml")
AGENT = ["--variant", "agent-loop"]
TARGET = ["--target", "m:f", "--check", "m:g"]

SOURCES = (
    "give either --variant or --design (the reference loop), --target (your own program) or --framework"
    " (an example agent)"
)
TARGET_ALONE = "--target needs --check module:function, and takes no --job"
FAULTS_ALONE = (
    "--faults goes with --variant or --design (the reference loop); your own program takes --faults power-loss"
    " with --points syscalls; --framework openai-agents takes --faults trim-context"
)
DEDUP_ONLY = "--state-key and --kill go with dedup (drop --no-dedup)"

CASES: list[tuple[list[str], str]] = [
    ([*AGENT, "--address", "127.0.0.1:6379"], "--address goes with --engine ray"),
    (
        [*AGENT, "--engine", "ray", "--crash", "x"],
        "--engine ray takes no --crash (they are about this machine's files)",
    ),
    (
        [*AGENT, "--engine", "ray", "--crash", "x", "--keep", "{kept}"],
        "--engine ray takes no --crash or --keep (they are about this machine's files)",
    ),
    ([], SOURCES),
    ([*AGENT, "--framework", "dbos"], SOURCES),
    (["--target", "m:f"], TARGET_ALONE),
    ([*TARGET, "--job", JOB], TARGET_ALONE),
    (["--framework", "dbos", "--check", "m:g"], "--check and --arg go with --target"),
    ([*AGENT, "--arg", "a=1"], "--check and --arg go with --target"),
    (
        [*AGENT, "--cassette", "c.jsonl"],
        "--cassette goes with --target or --framework: the reference loop plays its --job (from-trace writes one)",
    ),
    ([*AGENT, "--keys", "off"], "--keys and --durability go with --framework"),
    ([*TARGET, "--call-ids", "fresh"], "--call-ids goes with --framework, --variant or --design"),
    (["--framework", "dbos", "--durability", "sync"], "--durability goes with --framework langgraph"),
    (
        ["--framework", "langgraph", "--transcript-repair", "both-directions"],
        "--transcript-repair goes with --framework openai-agents",
    ),
    (
        ["--framework", "dbos", "--schedule-to-close", "one-attempt"],
        "--schedule-to-close goes with --framework temporal",
    ),
    (["--framework", "langgraph", "--faults", "trim-context"], FAULTS_ALONE),
    ([*AGENT, "--list-points", "--determinism"], "give --list-points or --determinism, not both"),
    (
        [*AGENT, "--determinism", "--engine", "ray"],
        "--list-points and --determinism run on this machine: they take no --engine ray",
    ),
    (
        [*AGENT, "--list-points", "--scenarios", "{kept}.jsonl"],
        "--list-points runs the program once, uninterrupted: it takes no --crash, --scenarios or --keep",
    ),
    ([*AGENT, "--list-points", "--format", "markdown"], "--list-points prints text or json, not markdown"),
    (
        [*AGENT, "--determinism", "--keep", "{kept}"],
        "--determinism runs its own scenarios: it takes no --crash, --scenarios or --keep",
    ),
    ([*AGENT, "--determinism", "--format", "junit"], "--determinism prints text or json, not junit"),
    (
        [*AGENT, "--crash", "x", "--format", "json"],
        "--crash re-runs one scenario: it takes no --scenarios and prints text",
    ),
    (["--framework", "dbos", "--faults", "lost-reply"], FAULTS_ALONE),
    ([*TARGET, "--faults", "power-loss"], FAULTS_ALONE),
    (
        [*AGENT, "--faults", "lost-reply", "--crash", "x"],
        "--crash re-runs a scenario of crashes, or with --faults power-loss a power cut: it takes no other --faults",
    ),
    (
        [*AGENT, "--faults", "power-loss", "--crash", "x", "--crash", "y"],
        "--faults power-loss with --crash re-runs one power cut: give one --crash (NAME or NAME#K)",
    ),
    (
        [*AGENT, "--faults", "power-loss", "--persistence", "ordered"],
        "--persistence ordered chooses what a power cut leaves at system calls: give --points syscalls"
        " --faults power-loss",
    ),
    (
        [*TARGET, "--points", "syscalls", "--faults", "power-loss", "--crash", "fsync s / state 2"],
        "--crash names a crash state (NAME#K / state S) only to re-run a power cut under --persistence ordered"
        " or alice, with --faults power-loss",
    ),
    (
        [*TARGET, "--points", "syscalls", "--faults", "power-loss", "--persistence", "alice", "--crash", "fsync s"],
        "--persistence alice re-runs one crash state of a cut: give --crash 'NAME#K / state S'",
    ),
    (
        [*AGENT, "--faults", "power-loss", "--points", "auto"],
        "--faults power-loss cuts at marked or syscall points: give --points marked,auto",
    ),
    (
        [*AGENT, "--points", "from:{kept}.txt", "--points-exclude", "fsync"],
        "--points from:FILE crashes at the marked points FILE lists: it takes no --points-include or --points-exclude",
    ),
    (
        [*AGENT, "--points", "from:{kept}.txt", "--faults", "lost-reply"],
        "--points from:FILE chooses where crashes strike: it takes no --faults (a fault's chances are at every point)",
    ),
    ([*AGENT, "--no-dedup", "--kill"], DEDUP_ONLY),
    ([*AGENT, "--no-dedup", "--state-key", "m:f"], DEDUP_ONLY),
    (
        ["--framework", "dbos", "--upgrade-to", "agent-loop"],
        "--upgrade-to goes with --variant, --design or --target (not --framework)",
    ),
]
"""(a command line, the one line it is refused with): every rule of RULES at least once."""


def _nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make starting any real run an error of the test: a refusal comes before any process."""
    from crashsweep.realsweep import api

    def no_run(*_: object, **__: object) -> None:
        raise AssertionError("a real run started")

    for name in ("sweep", "replay", "reference_run", "list_points", "determinism", "ray_engine"):
        monkeypatch.setattr(api, name, no_run)


def _rule_of(line: str) -> int:
    """The place in RULES of the rule whose message is `line` (its {g.*} fields standing for any text)."""
    for number, rule in enumerate(RULES):
        pattern = ".+".join(re.escape(part) for part in re.split(r"\{g\.\w+\}", rule.message))
        if re.fullmatch(pattern, line):
            return number
    raise AssertionError(f"no rule says {line!r}")


def test_every_rule_is_exercised() -> None:
    assert {_rule_of(line) for _, line in CASES} == set(range(len(RULES)))


@pytest.mark.parametrize(("args", "line"), CASES, ids=[line[:40] for _, line in CASES])
def test_each_refusal_is_one_line_on_stderr_and_exit_2(
    args: list[str], line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rule's own line, its fields filled in: nothing on stdout, one line on stderr, exit 2, no process."""
    _nothing_runs(monkeypatch)
    assert main(["sweep", *(arg.format(kept=tmp_path / "kept") for arg in args)]) == 2
    assert capsys.readouterr() == ("", f"crashsweep: error: {line}\n")


def test_the_first_rule_that_applies_is_the_one_said(capsys: pytest.CaptureFixture[str]) -> None:
    """No source, --keys and --address: the table's order decides (the engine's rule comes first)."""
    assert main(["sweep", "--address", "x", "--keys", "on"]) == 2
    assert capsys.readouterr().err == "crashsweep: error: --address goes with --engine ray\n"


def test_a_refusal_through_bin_crashsweep_is_one_line_and_exit_2() -> None:
    """The installed command as a user runs it: the same line, no traceback."""
    command = [str(Path(sys.executable).with_name("crashsweep")), "sweep", *AGENT, "--no-dedup", "--kill"]
    done = subprocess.run(command, env=child_env(), capture_output=True, text=True, check=False)
    expected = "crashsweep: error: --state-key and --kill go with dedup (drop --no-dedup)\n"
    assert (done.returncode, done.stdout, done.stderr) == (2, "", expected)


def _planned(*args: str) -> SweepRequest:
    """The request the sweep command's options make (parsed by the command itself, then planned)."""
    context = sweep.make_context("sweep", list(args))
    return plan(**context.params)


def test_the_options_are_the_commands_parameters() -> None:
    """Given's fields are exactly the click command's parameters (their types declared once, in Given)."""
    assert {field.name for field in dataclasses.fields(Given)} == {p.name for p in sweep.params if p.expose_value}


@pytest.mark.parametrize(
    ("args", "mode"),
    [
        ([], Mode.SWEEP),
        (["--list-points"], Mode.LIST_POINTS),
        (["--determinism", "--format", "json"], Mode.DETERMINISM),
        (["--crash", "reply 1 arrived", "--crash", "x#2"], Mode.CRASH),
    ],
)
def test_the_request_names_its_mode(args: list[str], mode: Mode) -> None:
    assert _planned(*AGENT, *args).mode is mode


def test_a_power_cut_is_re_run_by_one_crash_with_power_loss_at_any_depth() -> None:
    """--faults power-loss --crash NAME#K: the one cut named as the row names it (a scenario of one move)."""
    request = _planned(*AGENT, "--faults", "power-loss", "--crash", "reply 1 arrived#2")
    assert (request.mode, request.given.cut, request.crashes) == (Mode.CRASH, True, (("reply 1 arrived", 2),))
    assert request.nemesis.faults == ("power-loss",)
    assert not _planned(*AGENT, "--crash", "x").given.cut


def test_the_request_reads_what_the_options_name() -> None:
    """--crash as (name, pass), the design's name, the fault set, the points, the real sweep's options."""
    request = _planned(*AGENT, "--crash", "x#2", "--crash", "y", "--timeout", "5", "--workers", "2", "--kill")
    assert request.crashes == (("x", 2), ("y", 1))
    assert (request.variant, request.nemesis.faults, request.points.text, request.dedup) == (
        "agent-loop",
        (),
        "marked",
        True,
    )
    options = request.options()
    assert (options.depth, options.workers, options.timeout, options.dedup, options.snapshots) == (2, 2, 5, True, False)
    assert (options.every, options.keep) == (False, False)


def test_a_design_file_names_the_reference_loop_by_its_name() -> None:
    request = _planned("--design", str(ROOT / "docs" / "my-design.toml"), "--depth", "1")
    assert (request.variant, request.given.variant) == ("my-design", None)


@pytest.mark.parametrize(
    ("args", "dedup"),
    [
        ([*AGENT], True),
        ([*AGENT, "--no-dedup"], False),
        ([*AGENT, "--faults", "power-loss", "--depth", "1"], False),  # every scenario of one move, from scratch
        (["--framework", "temporal"], False),  # its history lives in a server, not the work folder
        (["--framework", "dbos"], True),
    ],
)
def test_the_sweep_merges_worlds_where_it_can(args: list[str], dedup: bool) -> None:
    assert _planned(*args).dedup is dedup


def test_scenarios_or_keep_record_every_scenario(tmp_path: Path) -> None:
    assert _planned(*AGENT, "--scenarios", str(tmp_path / "s.jsonl")).options().every
    kept = _planned(*AGENT, "--keep", str(tmp_path / "kept")).options()
    assert (kept.every, kept.keep, kept.root) == (True, True, (tmp_path / "kept").resolve())


def test_args_keep_their_order_and_the_last_of_a_key() -> None:
    request = _planned("--target", "m:f", "--check", "m:g", "--arg", "b=1", "--arg", "a=2", "--arg", "b=3")
    assert request.args == (("b", "3"), ("a", "2"))
    assert request.arguments == {"b": "3", "a": "2"}


def test_a_request_is_a_frozen_value() -> None:
    request = _planned(*AGENT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.mode = Mode.CRASH  # type: ignore[misc]
    assert not hasattr(request, "__dict__")  # slotted


def _functions(path: Path) -> list[tuple[str, int]]:
    """Each function of a module (methods and nested ones too), with its lines from its first decorator."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            assert node.end_lineno is not None
            found.append((node.name, node.end_lineno - first + 1))
    return found


def test_no_function_of_the_sweeps_modules_is_longer_than_a_screen() -> None:
    modules = sorted(CLI.glob("sweep*.py"))
    assert {path.name for path in modules} >= {"sweep.py", "sweep_plan.py", "sweep_modes.py"}
    long = [
        f"{path.name}:{name} ({lines} lines)"
        for path in modules
        for name, lines in _functions(path)
        if lines > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_the_length_check_sees_a_long_function(tmp_path: Path) -> None:
    """A check that cannot fail checks nothing: a 61-line function is found, its decorator counted."""
    body = "".join(f"    x{n} = {n}\n" for n in range(MAX_FUNCTION_LINES - 2))
    (tmp_path / "sweep_long.py").write_text(f"@decorator\ndef long() -> None:\n{body}    return None\n")
    assert _functions(tmp_path / "sweep_long.py") == [("long", MAX_FUNCTION_LINES + 1)]


def test_parse_errors_after_the_rules_are_one_line_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the options name, read after the rules: a bad value is one line and exit 2 as well."""
    _nothing_runs(monkeypatch)
    for args, message in (
        ([*AGENT, "--faults", "bogus"], "unknown fault 'bogus'"),
        ([*AGENT, "--points-include", "fsync"], "--points-include and --points-exclude filter found points"),
        ([*AGENT, "--crash", "#1"], "has no name before '#'"),
        ([*AGENT, "--state-key", "nocolon"], "expected module:function"),
        (["--variant", "error-to-model"], "the reference loop does not implement 'error-to-model'"),
        (["--target", "m:f", "--check", "m:g", "--arg", "a\u202eb=1"], "invisible or reordering character U+202E"),
        (["--target", "m:f", "--check", "m:g", "--arg", "k\u200b=1"], "invisible or reordering character U+200B"),
        (["--target", "m:f", "--check", "m:g", "--arg", "k\x07=1"], "the control character U+0007"),
    ):
        assert main(["sweep", *args]) == 2
        out, err = capsys.readouterr()
        assert (out, err.count("\n")) == ("", 1), err
        assert message in err


@pytest.mark.parametrize(
    ("module", "source", "said"),
    [
        ("key_of_none", "def key():\n    return None\n", "key()"),
        ("key_of_two", "def key(world, other):\n    return world\n", "key(world, other)"),
        ("key_by_keyword", "def key(*, world):\n    return world\n", "key(*, world)"),
    ],
)
def test_a_state_key_of_the_wrong_signature_is_refused_before_sweeping(
    module: str,
    source: str,
    said: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--state-key names a function of one World: another signature is one line, exit 2, before any process."""
    _nothing_runs(monkeypatch)
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    assert main(["sweep", *AGENT, "--state-key", f"{module}:key"]) == 2
    out, err = capsys.readouterr()
    assert (out, err.count("\n")) == ("", 1), err
    why = "cannot take one argument: a state key takes a World and returns one"
    assert err == f"crashsweep: error: Invalid value for --state-key: {module}:key: {said} {why}\n"


def test_a_state_key_of_one_world_is_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One positional argument, further ones with defaults: the function is the request's state key."""
    (tmp_path / "key_of_one.py").write_text("def key(world, extra=None):\n    return world\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "key_of_one", raising=False)
    request = _planned(*AGENT, "--state-key", "key_of_one:key")
    assert request.state_key is not None
    assert request.state_key.__name__ == "key"
