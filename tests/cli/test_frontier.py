"""`crashsweep frontier` on the triage job: every design once, the safe set, the frontier, the cheapest.

The expected values are derived below from spec/SEMANTICS.md, the fields of spec/policy.py and
spec/COST.md, not copied from the program's output.

**How many designs (512).** Per field: startup_save 2, reply_save 2, result_saves 4, lock 2,
on_tool_error 2, i.e. 64 combinations, times the (markers, keys, ladder) choices that mean
something: no markers (no ladder), keys or not: 2; markers without keys: the ladder ends with a
person and cannot rerun an unkeyed write, so [person] or [lookup, person]: 2; markers with keys:
[person], [lookup, person], [rerun, person], [rerun, lookup, person]: 4. 64 x 8 = 512.

**Which are safe (keyed tracker, depth 2).** A design is safe exactly when it has markers, or it
has keys and a save before the first send (a startup save or a reply save):
- markers: a write is sent only after its marker is durable. A crash before that rename means
  it was not sent, and the restart sends it once; a crash after it leaves a marker without a
  result, which the ladder settles: a rerun with the same key (the tracker returns the first
  answer), or a person who says truthfully whether the tracker holds it (a lookup is not
  offered by a keyed tracker). No write is applied twice, and every write is applied.
- keys without markers: a repeated write carries Key(run, call), which the tracker honours,
  so a repeat is harmless if and only if the run ID is the same. The run ID becomes durable
  at the first save of the run. With a startup save or a reply save that is before any call
  goes out; without both, the first save comes after create_a is accepted (its result save,
  the turn save, or the final save), so a crash just after `tracker accepted create_a` makes
  the restart begin run-2, whose key is new: a duplicate with one crash.
- neither: save-after-reply's counterexample (a crash after `tracker accepted`, before the
  result save, repeats the write) applies whatever the saves: a duplicate.
So the 384 marker designs (64 x 6 ladder choices) and 48 keyed ones without markers (3 of the 4
startup/reply combinations save before the first send, x 4 result saves x 2 locks x 2 error
policies) are safe: 432; the other 80 are not.

**What the uninterrupted run costs.** From the crash points of SEMANTICS.md section 4 on the
triage job (two turns: 3 writes, 1 read): every design calls the model 3 times and sends 4
requests, asks nobody and looks nothing up. It saves: the lock (1 with a lock), start (1 with a
startup save), reply 1 and reply 2 (2 with a reply save), a marker before each write (3 with
markers), results (4 with each-call, 3 with writes-only, 0 otherwise), turn 1 and turn 2 (2
unless result_saves = "none"), final (1, always).

**Why #251 is the cheapest safe design.** The order (spec/COST.md) looks first at run
questions, model calls, requests and lookups: 0, 3, 4, 0 for every design, so the run's saves
decide. The fewest saves of a safe design: every design saves `final` (1). A safe design needs
markers (3 more saves) or keys with a startup save (1 more) or a reply save (2 more), so at
least 2 saves: a startup save, keys, no markers, no reply save, result_saves "none" (no result
or turn saves), no lock. That is "start no-reply none no-markers keys no-lock", with
on_tool_error "retry" (#251, enumerated first) or "model" (#252). No tool fails on triage, so
the two reach the same worlds: the same cost vector, a tie named after #251.

**The frontier.** Computed apart below, twice: from the reported cost vectors (the run part of
every design checked against the hand formula above), and from the replay oracle's own sweep
of every scenario of every design (tests/replay_oracle.py, which counts saves and requests in
its own loop); with these facts derived from the rules:
- #251 and #252 are on it: nothing safe is cheaper in the first figure where they differ.
- no design with a lock is on it: the lock adds one save at every start and changes no world
  the loop acts on, so the same design without a lock dominates it.
- no other design with a startup save is on it: with a reply save or a marker save before the
  first send, the startup save only adds a save at every start that finds an unfinished run
  (and a crash before the first save begins a new run either way, having sent nothing), so the
  same design without it dominates it; #251/#252 have neither, and need it.
- designs that differ only in on_tool_error are on it together or not at all (equal costs).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from crashsweep.cli import frontier as cmd_frontier
from crashsweep.cli.frontier import Task, explore_design
from crashsweep.cli.main import main
from crashsweep.spec.cost import Cost
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.policy import PAUSE_LOCKS, Lock, Policy, all_policies
from crashsweep.spec.retries import FRONTIER_STACKS, Stack
from crashsweep.variants import PRESETS
from crashsweep.variants.presets import BUILT_IN
from tests.paths import ROOT
from tests.replay_oracle import replay, sweep

BUILT_IN_POLICIES = [preset.policy.as_mapping() for preset in BUILT_IN]

CHEAPEST = "start no-reply none no-markers keys no-lock error-retry"


def _main(*args: str) -> tuple[int, str]:
    """Run `crashsweep frontier ARGS` in this process; its status and standard output."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(["frontier", *args])
    return status, buffer.getvalue()


@pytest.fixture(scope="module")
def triage() -> dict[str, Any]:
    """`crashsweep frontier --depth 2 --format json` on triage, run once for the module."""
    status, out = _main("--depth", "2", "--format", "json")
    assert status == 0
    data: dict[str, Any] = json.loads(out)
    return data


def _safe_by_rule(policy: Mapping[str, object]) -> bool:
    """The safe-set rule derived in the module docstring."""
    if policy["markers"] == "before-writes":
        return True
    return policy["keys"] == "run-call" and (policy["startup_save"] is True or policy["reply_save"] != "never")


def _run_saves_by_hand(policy: Mapping[str, object]) -> int:
    """The uninterrupted triage run's saves, counted from SEMANTICS.md's crash points."""
    results = {"each-call": 4, "writes-only": 3, "whole-turn": 0, "none": 0}[str(policy["result_saves"])]
    return (
        int(policy["lock"] == "file")
        + int(policy["startup_save"] is True)
        + 2 * int(policy["reply_save"] == "before-first-send")
        + 3 * int(policy["markers"] == "before-writes")
        + results
        + 2 * int(policy["result_saves"] != "none")
        + 1
    )


def _pareto(vectors: Mapping[int, tuple[int, ...]]) -> set[int]:
    """The designs no other is at most as costly as everywhere and cheaper than somewhere (written apart)."""
    kept = set()
    for a, mine in vectors.items():
        if not any(
            theirs != mine and all(t <= m for t, m in zip(theirs, mine, strict=True))
            for b, theirs in vectors.items()
            if b != a
        ):
            kept.add(a)
    return kept


def _costs(entry: Mapping[str, Any]) -> tuple[int, ...]:
    cost = entry["row"]["cost"]
    return (*cost["run"].values(), *cost["extra"].values())


def test_every_combination_is_listed_once(triage: dict[str, Any]) -> None:
    """512 designs (derived above), numbered 1..512 in enumeration order, each policy once."""
    entries = triage["entries"]
    assert triage["designs"] == len(entries) == 512
    assert [e["number"] for e in entries] == list(range(1, 513))
    assert [e["policy"] for e in entries] == [p.as_mapping() for p in all_policies()]
    assert len({json.dumps(e["policy"], sort_keys=True) for e in entries}) == 512
    assert len({e["label"] for e in entries}) == 512


def test_safe_set_is_the_derived_rule(triage: dict[str, Any]) -> None:
    """Safe exactly when markers, or keys with a startup or reply save: 432 of 512."""
    expected = [e["number"] for e in triage["entries"] if _safe_by_rule(e["policy"])]
    assert len(expected) == 432
    assert triage["safe"] == expected
    for entry in triage["entries"]:
        assert entry["safe"] is (entry["number"] in expected)
        if not entry["safe"]:  # the unsafe ones fail by a duplicate, never by a loss
            assert not entry["row"]["invariants"]["no-duplicate"]["holds"]
            assert entry["row"]["invariants"]["no-loss"]["holds"]


def test_uninterrupted_run_cost_of_every_design_by_hand(triage: dict[str, Any]) -> None:
    """Every design's run cost is the hand formula: its saves, 4 requests, 3 model calls, nothing else."""
    for entry in triage["entries"]:
        run = entry["row"]["cost"]["run"]
        expected = Cost(saves=_run_saves_by_hand(entry["policy"]), requests=4, model_calls=3)
        assert run == expected.to_json(), entry["label"]


def test_cheapest_safe_design_and_its_tie(triage: dict[str, Any]) -> None:
    """#251 is the cheapest (2 saves, the fewest of any safe design); #252 differs only in on_tool_error."""
    safe = [e for e in triage["entries"] if _safe_by_rule(e["policy"])]
    fewest = min(_run_saves_by_hand(e["policy"]) for e in safe)
    assert fewest == 2
    at_fewest = [e["number"] for e in safe if _run_saves_by_hand(e["policy"]) == fewest]
    assert at_fewest == [251, 252]
    assert triage["cheapest"] == 251
    assert triage["ties"] == [252]
    entries = triage["entries"]
    assert entries[250]["label"] == CHEAPEST
    assert entries[251]["policy"] == {**entries[250]["policy"], "on_tool_error": "model"}


def test_frontier_is_the_pareto_set_of_the_safe_designs(triage: dict[str, Any]) -> None:
    """The frontier, recomputed apart from the reported costs, with the facts derived above."""
    entries = {e["number"]: e for e in triage["entries"]}
    safe = {n: _costs(e) for n, e in entries.items() if e["safe"]}
    frontier = set(triage["frontier"])
    assert frontier == _pareto(safe)
    assert {251, 252} <= frontier
    assert not any(entries[n]["policy"]["lock"] == "file" for n in frontier)
    assert {n for n in frontier if entries[n]["policy"]["startup_save"]} == {251, 252}
    for n in frontier:  # twins: odd numbers retry, the next even number hands errors to the model
        twin = n + 1 if n % 2 else n - 1
        assert twin in frontier
        assert _costs(entries[twin]) == _costs(entries[n])
    # Hence no built-in design is on it: the five safe ones all have a startup save and a reply
    # or marker save (save-after-reply and save-once-per-turn are not safe).
    built_in = [n for n, e in entries.items() if e["policy"] in BUILT_IN_POLICIES]
    assert len(built_in) == 7
    for preset in BUILT_IN:  # and each is named in the listing
        (number,) = [n for n in built_in if entries[n]["policy"] == preset.policy.as_mapping()]
        assert preset.name in entries[number]["presets"]
    assert not frontier & set(built_in)
    order = triage["frontier"]
    assert order[0] == 251
    run_saves = [entries[n]["row"]["cost"]["run"]["saves"] for n in order]
    assert run_saves == sorted(run_saves)  # cheapest first: on triage the run differs only in saves


def test_the_cheapest_design_at_depth_one_by_hand() -> None:
    """#251 at depth 1: saves+ 12, requests+ 27, calls+ 19, counted by hand.

    Its 14 crash points: 1 start: tmp written, 2 start: renamed, 3 reply 1 arrived, 4/5 create_a
    accepted/returned, 6/7 create_b accepted/returned, 8 reply 2 arrived, 9 search returned,
    10/11 comment_a accepted/returned, 12 final reply arrived, 13 final: tmp written, 14 final:
    renamed. Only `start` and `final` are saved. A crash at 1 begins a new run having sent and
    asked nothing (+0); at 14 the run is done (+0). A crash at 2..13 restarts run-1 from its
    empty checkpoint: one more `start` save (12 in all), and every request and model call the
    crashed process made is made again. Requests made by point i (a write's at `accepted`, a
    read's at `returned`): 0 0 1 1 2 2 2 3 4 4 4 4 at points 2..13, summing to 27. Model calls:
    0 at 2, 1 at 3..7 (5), 2 at 8..11 (8), 3 at 12..13 (6): 19.
    """
    policy = all_policies()[250]
    row = explore_design(Task(251, policy, TRIAGE, "keyed", 1, 100_000))
    assert not isinstance(row, str)
    assert row.crash_points == 14
    assert row.run_cost == Cost(saves=2, requests=4, model_calls=3)
    assert row.extra_cost == Cost(saves=12, requests=27, model_calls=19)


TRIAGE_DEPTH_2_WORK = {"states": 210_034, "edges": 271_722, "largest": 1_024}
"""The whole space at depth 2 on triage: states and edges summed over the 512 designs; the largest design's states."""


@pytest.fixture(scope="module")
def triage_full() -> dict[str, Any]:
    """`crashsweep frontier --depth 2 --no-projection --format json` on triage: every world its own node."""
    status, out = _main("--depth", "2", "--no-projection", "--format", "json")
    assert status == 0
    data: dict[str, Any] = json.loads(out)
    return data


def test_triage_depth_two_explores_the_pinned_number_of_states(triage_full: dict[str, Any]) -> None:
    """The whole space at depth 2 on triage is 210,034 states and 271,722 edges; no design over 1,024 states.

    The work of the full graph (--no-projection), counted, not timed: a change that explores
    more (worlds once merged kept apart, a new crash point) moves these figures on any
    machine, however loaded. How fast the work is done (under 60 s on a machine's cores) is
    benchmarks/scaling.py's --frontier target.
    """
    rows = [entry["row"] for entry in triage_full["entries"]]
    work = {
        "states": sum(row["states"] for row in rows),
        "edges": sum(row["edges"] for row in rows),
        "largest": max(row["states"] for row in rows),
    }
    assert work == TRIAGE_DEPTH_2_WORK


def test_the_state_key_changes_no_figure_of_any_design(triage: dict[str, Any], triage_full: dict[str, Any]) -> None:
    """Merged by the state key or not, each of the 512 designs has the same row but for states and edges.

    The frontier, the safe set and the cheapest design follow from the rows, so they agree too.
    """
    unmerged = {"states", "edges", "projection"}
    for merged, full in zip(triage["entries"], triage_full["entries"], strict=True):
        assert merged["row"]["projection"] is True
        assert full["row"]["projection"] is False
        assert merged["row"]["states"] <= full["row"]["states"]
        assert {k: v for k, v in merged["row"].items() if k not in unmerged} == {
            k: v for k, v in full["row"].items() if k not in unmerged
        }
        assert {k: v for k, v in merged.items() if k != "row"} == {k: v for k, v in full.items() if k != "row"}


ONE_WRITE = 'name = "one"\nturns = [["w"]]\n[calls]\nw = { tool = "create_issue", writes = true }\n'

# The runs on the one-write job below are made once for the module and read by every test they
# serve: 512 designs take a few seconds each time, and a run's output is the same bytes whichever
# test reads it.


@pytest.fixture(scope="module")
def one_write(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A job of one write: the whole space explores in a second or two."""
    path = tmp_path_factory.mktemp("job") / "one.toml"
    path.write_text(ONE_WRITE)
    return path


@pytest.fixture(scope="module")
def every_design(one_write: Path) -> dict[int, tuple[int, str]]:
    """`frontier --depth 1 --job one.toml --every` (text) in this process, with one worker and with two."""
    return {
        workers: _main("--depth", "1", "--job", str(one_write), "--every", "--workers", str(workers))
        for workers in (1, 2)
    }


@pytest.fixture(scope="module")
def pages(
    one_write: Path, tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[subprocess.CompletedProcess[str], Path]]:
    """`python -m crashsweep frontier --depth 1 --job one.toml --out DIR` as a program, under PYTHONHASHSEED 0 and 1."""
    runs = []
    for seed in ("0", "1"):
        out = tmp_path_factory.mktemp(f"seed{seed}") / "page"
        command = [sys.executable, "-m", "crashsweep", "frontier", "--depth", "1", "--job", str(one_write)]
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [*command, "--out", str(out)], capture_output=True, text=True, env=env, check=False, timeout=300
        )
        assert done.returncode == 0, done.stderr
        runs.append((done, out))
    return runs


def test_text_names_the_cheapest_and_lists_every_design(every_design: dict[int, tuple[int, str]]) -> None:
    """Text: the headline, one numbered line per design in order, the cheapest by name."""
    status, out = every_design[2]
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("512 designs (every valid policy combination), job one, tracker keyed, depth 1: ")
    every = lines[
        lines.index("every design:") : next(i for i, line in enumerate(lines) if line.startswith("the frontier"))
    ]
    numbered = [line for line in every if line.split() and line.split()[0].isdigit()]
    assert [int(line.split()[0]) for line in numbered] == list(range(1, 513))
    assert sum(line.startswith("cheapest safe design: #") for line in lines) == 1


def test_one_worker_and_two_give_the_same_output(every_design: dict[int, tuple[int, str]]) -> None:
    """Rows come back in enumeration order however the pool schedules them (every design's row, --every)."""
    assert every_design[1] == every_design[2]
    assert every_design[1][0] == 0


def test_out_writes_the_page_the_chart_the_json_and_the_cheapest_design(
    pages: list[tuple[subprocess.CompletedProcess[str], Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    """--out DIR: index.html (the SVG chart inline), frontier.svg, frontier.json, cheapest.toml.

    The printed command explores the cheapest design from its file, and it holds as the frontier said.
    """
    done, out = pages[0]
    text = done.stdout
    assert sorted(p.name for p in out.iterdir()) == ["cheapest.toml", "frontier.json", "frontier.svg", "index.html"]
    assert f"wrote {out / 'index.html'}" in text
    html = (out / "index.html").read_text()
    assert "<svg" in html
    data = json.loads((out / "frontier.json").read_text())
    assert data["designs"] == 512
    cheapest = data["entries"][data["cheapest"] - 1]
    assert cheapest["label"] in html
    command = text.splitlines()[-1]
    assert command.startswith("explore the cheapest safe design: ")
    words = shlex.split(command.split(": ", 1)[1])
    assert words[:3] == [sys.executable, "-m", "crashsweep"]  # the program as it was started (prog.current)
    assert words[3:5] == ["explore", "--design"]
    capsys.readouterr()
    assert main([*words[3:], "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["variant"] == f"frontier-{data['cheapest']}"
    assert (row["job"], row["depth"], row["tracker"]) == ("one", 1, "keyed")
    assert row["cost"] == cheapest["row"]["cost"]


@pytest.mark.parametrize("under", ["", "sub/dir"])
def test_an_out_that_cannot_be_a_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], under: str
) -> None:
    """--out naming a file, or a path under one: one line on stderr, exit 2, the file untouched."""
    existing = tmp_path / "file"
    existing.write_text("keep me")
    assert main(["frontier", "--out", str(existing / under)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert "--out" in err
    assert existing.read_text() == "keep me"


def test_a_bad_job_file_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A job file with an unknown key: one line naming it, exit 2."""
    job = tmp_path / "job.toml"
    job.write_text('name = "x"\nturns = [["a"]]\n[calls]\na = { tool = "t", writes = true, colour = 1 }\n')
    assert main(["frontier", "--job", str(job)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert "colour" in err


def test_ctrl_c_stops_the_pool_and_writes_nothing(tmp_path: Path) -> None:
    """SIGINT while the pool explores: one line saying how far it got, exit 130, no output, no files."""
    out = tmp_path / "page"
    command = [sys.executable, "-m", "crashsweep", "frontier", "--depth", "3", "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Depth 3 over 512 designs runs for several seconds. The pool's first worker process says
    # the designs are being explored (the pool starts inside the loop that Ctrl-C stops), so
    # the signal lands mid-way however slowly the interpreter started.
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    deadline = time.monotonic() + 120
    while not children.read_text().split() and time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130
    assert stdout == ""
    assert stderr.startswith("crashsweep: frontier: interrupted after ")
    assert stderr.count("\n") == 1
    assert not out.exists()


_CTRL_C_AT_FORK = """
import multiprocessing, os, signal, sys
from crashsweep.cli import runs
from crashsweep.cli.frontier import Task, explore_all
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.policy import all_policies

# A Ctrl-C that lands while a fork's handlers run in the parent: exactly when the pool forks.
os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGINT))
tasks = [Task(n, policy, TRIAGE, "keyed", 1, 100_000) for n, policy in enumerate(all_policies()[:32], start=1)]
try:
    rows = explore_all(tasks, 2)
except runs.Interrupted as error:
    print(error, "; workers left:", len(multiprocessing.active_children()))
    sys.exit(0)
print(f"ran to the end: {len(rows)} designs")
sys.exit(1)
"""


def test_a_ctrl_c_while_the_pool_forks_is_not_lost_and_the_pool_is_gone_after() -> None:
    """SIGINT during the workers' fork: interrupted after no design, every worker ended before the error is raised.

    A KeyboardInterrupt raised in a fork handler (logging's) is reported as ignored and lost:
    the frontier then ran every design and exited 0 after a Ctrl-C (1 run in 6 under load).
    And the pool was shut down twice (without waiting, then waiting), which waited for
    nothing: its workers could go on through the queued designs while the process exited.
    """
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AT_FORK], capture_output=True, text=True, check=False, timeout=300
    )
    expected = "frontier: interrupted after 0 of 32 designs ; workers left: 0\n"
    assert (done.returncode, done.stdout) == (0, expected), done.stderr
    assert "Exception ignored" not in done.stderr


_WORKER_SIGNALS = """
from concurrent.futures import ProcessPoolExecutor
import os, signal
from crashsweep.cli.frontier import _ctrl_c_held, _worker_start

def held() -> bool:
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])

def state() -> tuple[bool, bool]:
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN, held()

with ProcessPoolExecutor(max_workers=2, initializer=_worker_start, initargs=(os.getpid(),)) as pool:
    with _ctrl_c_held():
        futures = [pool.submit(state) for _ in range(4)]
    print(sorted({future.result() for future in futures}), held())
"""


def test_a_worker_ignores_ctrl_c_and_the_parent_holds_it_back_only_while_forking() -> None:
    """A worker, forked with SIGINT held back, ignores it and no longer holds it; the parent holds it no more."""
    done = subprocess.run(
        [sys.executable, "-c", _WORKER_SIGNALS], capture_output=True, text=True, check=False, timeout=300
    )
    assert (done.returncode, done.stdout) == (0, "[(True, False)] False\n"), done.stderr


def test_same_files_whatever_the_hash_seed(pages: list[tuple[subprocess.CompletedProcess[str], Path]]) -> None:
    """The page (chart included) and the JSON are the same bytes under two PYTHONHASHSEEDs."""
    files = [
        {name: (out / name).read_bytes() for name in ("index.html", "frontier.svg", "frontier.json")}
        for _, out in pages
    ]
    assert files[0] == files[1]


def _oracle_design(policy: Policy) -> tuple[bool, tuple[int, ...]]:
    """Whether the replay oracle finds `policy` safe on triage at depth 2, and its ten cost figures."""
    base = replay(policy, TRIAGE, "keyed", ())
    assert base is not None
    w = base.world
    run = (w.saves, w.requests, w.model_calls, w.asks + w.approvals, w.lookups)
    result = sweep(policy, TRIAGE, "keyed", 2)
    scenarios = result.total("scenarios")
    summed = (
        result.total("saves"),
        result.total("requests"),
        result.total("model_calls"),
        result.total("asks") + result.total("approvals"),
        result.total("lookups"),
    )
    safe = result.total("dups") == 0 and result.total("missing") == 0
    return safe, (*run, *(s - scenarios * r for s, r in zip(summed, run, strict=True)))


def test_safe_set_and_frontier_from_the_replay_oracle(triage: dict[str, Any]) -> None:
    """The replay oracle, sweeping every scenario itself, gives the same safe set and frontier.

    One design of each on_tool_error pair is swept (the other is the same loop when no tool
    fails, which the pair's policies show: they differ in that field alone).
    """
    policies = all_policies()
    safe: set[int] = set()
    vectors: dict[int, tuple[int, ...]] = {}
    for number in range(1, len(policies) + 1, 2):
        policy, twin = policies[number - 1], policies[number]
        assert (policy.on_tool_error, twin) == ("retry", replace(policy, on_tool_error="model"))
        holds, costs = _oracle_design(policy)
        if holds:
            safe |= {number, number + 1}
            vectors[number] = vectors[number + 1] = costs
    assert sorted(safe) == triage["safe"]
    assert _pareto(vectors) == set(triage["frontier"])
    for number in triage["frontier"]:
        assert _costs(triage["entries"][number - 1]) == vectors[number]


def test_a_design_beyond_the_state_limit_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """--max-states too small for the first design: the worker's limit comes back as one line, exit 2."""
    assert main(["frontier", "--depth", "1", "--max-states", "10", "--workers", "2"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("crashsweep: error: design #1 (start reply each-call markers keys lock [person] error-retry)")
    assert "state limit reached" in err
    assert err.count("\n") == 1


def test_out_is_replaced_whole_on_a_second_run_and_a_foreign_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--out follows crashsweep.cli.outdir: a directory the frontier wrote is replaced; one it did not is refused.

    Over the first two designs only (as test_the_lock_axis_widens_only_with_pause): what --out
    does with a directory does not depend on how many designs the page shows.
    """
    monkeypatch.setattr(cmd_frontier, "all_policies", lambda *args, **kwargs: all_policies(*args, **kwargs)[:2])
    one_write = tmp_path / "one.toml"
    one_write.write_text('name = "one"\nturns = [["w"]]\n[calls]\nw = { tool = "create_issue", writes = true }\n')
    out = tmp_path / "page"
    assert _main("--depth", "1", "--job", str(one_write), "--out", str(out))[0] == 0
    assert _main("--depth", "1", "--job", str(one_write), "--out", str(out))[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["cheapest.toml", "frontier.json", "frontier.svg", "index.html"]
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["frontier", "--depth", "1", "--job", str(one_write), "--out", str(foreign)]) == 2
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_faults_reach_every_design_of_the_frontier(triage: dict[str, Any]) -> None:
    """--faults lost-reply: every design is explored under the fault, as `explore --faults` explores it.

    spec/FAULTS.md: a lost reply at a write makes save-after-reply duplicate with no crash at
    all, while a design that sends keys settles the re-send at the tracker; so the preset of
    save-after-reply is unsafe and idempotency-keys' is safe, and each preset's row equals the
    explorer's row of its design file under the same fault.
    """
    status, out = _main("--depth", "1", "--faults", "lost-reply", "--format", "json")
    data: dict[str, Any] = json.loads(out)
    assert status == 0
    assert (data["faults"], data["call_ids"]) == (["lost-reply"], "stable")
    by_preset = {name: entry for entry in data["entries"] for name in entry["presets"]}
    assert by_preset["idempotency-keys"]["number"] in data["safe"]
    assert by_preset["save-after-reply"]["number"] not in data["safe"]
    for name in ("save-after-reply", "idempotency-keys", "keys-and-markers"):
        design = ROOT / "docs" / "designs" / f"{name}.toml"
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            code = main(
                ["explore", "--design", str(design), "--depth", "1", "--faults", "lost-reply", "--format", "json"]
            )
        row = json.loads(buffer.getvalue())
        assert code == (0 if by_preset[name]["number"] in data["safe"] else 1)
        assert row["faults"] == ["lost-reply"]
    assert "faults" not in triage  # without --faults (the module's run of triage), no faults key


def test_power_loss_enumerates_the_durability_fields(
    one_write: Path, pages: list[tuple[subprocess.CompletedProcess[str], Path]]
) -> None:
    """--faults power-loss: the 512 designs each with the 4 valid (fsync, unreadable) pairs: 2048.

    spec/FAULTS.md 6: under fsync "none" no design is safe. With "fresh-run", a cut at `final:
    renamed` (every design saves `final` after its one write) leaves the checkpoint unreadable and
    the restart sends the write again under a new run. With "ask-person", if some save comes before
    the write, a cut right after its rename leaves the checkpoint unreadable and the run stops with
    the write missing; if none does, a crash at `tracker accepted w` restarts from nothing and
    sends it again. Under "full" a cut is a crash: at `tmp written` the disk a crash leaves there,
    at `renamed` the disk of a crash at `tmp synced`; so the safe designs are those safe under
    crashes alone.
    """
    status, out = _main("--depth", "1", "--job", str(one_write), "--faults", "power-loss", "--format", "json")
    data: dict[str, Any] = json.loads(out)
    assert status == 0
    entries = data["entries"]
    assert len(entries) == 2048
    safe = set(data["safe"])
    durability = {
        e["number"]: (e["policy"].get("fsync", "none"), e["policy"].get("unreadable", "ask-person")) for e in entries
    }
    assert not {n for n in safe if durability[n][0] == "none"}
    plain = json.loads((pages[0][1] / "frontier.json").read_text())  # the same job and depth, no faults
    assert (plain["job"], plain["depth"], plain.get("faults")) == ("one", 1, None)
    crash_safe = {entry["number"] for entry in plain["entries"] if entry["number"] in plain["safe"]}
    full_safe = {(n - 1) // 4 + 1 for n in safe if durability[n][0] == "full"}
    assert full_safe == crash_safe


@pytest.mark.parametrize(("faults", "locks"), [((), ("file", "none")), (("--faults", "pause"), PAUSE_LOCKS)])
def test_the_lock_axis_widens_only_with_pause(
    faults: tuple[str, ...], locks: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """POLICIES.md 1.6: os-lock and lease+fencing are enumerated only under --faults pause (1024 designs, else 512)."""
    asked: list[tuple[str, ...]] = []

    def first_two(
        chosen: tuple[Lock, ...],
        power_loss: bool = False,
        stacks: tuple[Stack, ...] = ((),),
        conversation: tuple[str, ...] = (),
    ) -> tuple[Policy, ...]:
        assert not power_loss
        assert stacks == ((),)
        assert conversation == ()  # the conversation fields only with --conversation
        asked.append(chosen)
        every = all_policies(chosen)
        assert len(every) == 256 * len(chosen)
        return every[:2]

    monkeypatch.setattr(cmd_frontier, "all_policies", first_two)
    job = ROOT / "examples" / "one-write.toml"
    main(["frontier", "--depth", "1", "--job", str(job), "--workers", "1", *faults])
    assert asked == [locks]
    assert capsys.readouterr().out.startswith("2 designs")


def test_the_workers_die_with_a_frontier_killed_by_sigkill() -> None:
    """SIGKILL to `frontier --workers 2`: the kernel kills its pool's workers (they would explore on for minutes)."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from tests.realsweep.helpers import child_env
    from tests.realsweep.process.kin import alive, children, wait_until

    command = [str(Path(sys.executable).with_name("crashsweep")), "frontier", "--workers", "2", "--depth", "2"]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env(), start_new_session=True
    )
    try:
        wait_until(lambda: len(children(process.pid)) >= 2 or process.poll() is not None, 60, "two workers")
        workers = children(process.pid)
        assert process.poll() is None
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        wait_until(lambda: not any(alive(pid) for pid in workers), 10, "the workers' end")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_retry_stacks_cross_every_design_and_show_the_worst_scenario(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--retry-stacks asks the space for the six stacks of RETRIES.md 1.5; the table gains the worst scenario.

    Cut to idempotency-keys' policy with each stack, on one-write at depth 1: one move is one
    failure at most, caught by the innermost layer; a call or turn retry sends create_a again
    under its key, a run retry under a new run's key. So only the stack "run x2" duplicates.
    """
    asked: list[tuple[Stack, ...]] = []

    def keyed(
        chosen: tuple[Lock, ...],
        power_loss: bool = False,
        stacks: tuple[Stack, ...] = ((),),
        conversation: tuple[str, ...] = (),
    ) -> tuple[Policy, ...]:
        asked.append(stacks)
        base = PRESETS["idempotency-keys"].policy
        return tuple(replace(base, retries=stack) for stack in stacks)

    monkeypatch.setattr(cmd_frontier, "all_policies", keyed)
    job = ROOT / "examples" / "one-write.toml"
    main(["frontier", "--depth", "1", "--job", str(job), "--workers", "1", "--retry-stacks", "--every"])
    assert asked == [FRONTIER_STACKS]
    out = capsys.readouterr().out
    assert out.startswith("6 designs (every valid policy combination, each with every retry stack)")
    assert "worst dups" in out
    assert "5 hold every invariant" in out
    (run_retry,) = [line for line in out.splitlines() if "retries[run x2 on error]" in line]
    assert "no-duplicate violated" in run_retry


def test_conversation_crosses_the_designs_with_the_fields_that_matter_on_the_job(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--conversation` asks for the fields of spec.policy.conversation_fields: on one-write, what a restart sends.

    idempotency-keys with each transcript_on_restart value, at depth 1 on one-write: a crash at
    `reply 1: renamed` leaves the filing orphaned, so `as-is` is stuck there and `repair` loses
    it; only `resume-pending` (keys make its resend harmless) is safe.
    """
    asked: list[tuple[str, ...]] = []

    def transcripts(
        chosen: tuple[Lock, ...],
        power_loss: bool = False,
        stacks: tuple[Stack, ...] = ((),),
        conversation: tuple[str, ...] = (),
    ) -> tuple[Policy, ...]:
        asked.append(conversation)
        base = PRESETS["idempotency-keys"].policy
        return tuple(replace(base, transcript_on_restart=how) for how in ("resume-pending", "repair", "as-is"))

    monkeypatch.setattr(cmd_frontier, "all_policies", transcripts)
    job = ROOT / "examples" / "one-write.toml"
    main(["frontier", "--depth", "1", "--job", str(job), "--workers", "1", "--conversation", "--every"])
    assert asked == [("transcript_on_restart", "persist_granularity")]
    out = capsys.readouterr().out
    assert "1 hold every invariant" in out
    (as_is,) = [line for line in out.splitlines() if "transcript-on-restart-as-is" in line]
    assert "well-formed-transcript violated" in as_is
    assert "  transcript_on_restart: resume-pending (never safe: repair, as-is)" in out.splitlines()
