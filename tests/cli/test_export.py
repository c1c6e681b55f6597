"""`explore --export graphml|itf FILE`: files written whole, checked before exploring, and what they hold."""

from __future__ import annotations

import io
import json
from pathlib import Path

import networkx as nx
import pytest

from crashsweep.cli import export
from crashsweep.cli.main import main
from crashsweep.reports import itf

EXPLORE = ["explore", "--variant", "save-after-reply", "--depth", "1"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_explore_exports_the_graph_and_the_counterexample_beside_its_json_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """stdout stays the JSON row; stderr says each file written; both files read back."""
    graph, trace = tmp_path / "g.graphml", tmp_path / "cx.itf.json"
    status, out, err = _run(
        capsys, *EXPLORE, "--format", "json", "--export", "graphml", str(graph), "--export", "itf", str(trace)
    )
    assert status == 1
    row = json.loads(out)
    assert err.splitlines() == [f"wrote {graph}", f"wrote {trace}"]
    read = nx.read_graphml(io.BytesIO(graph.read_bytes()))
    assert (read.number_of_nodes(), read.number_of_edges()) == (row["states"], row["edges"])
    document = json.loads(trace.read_text(encoding="utf-8"))
    assert itf.path_code(document) == row["invariants"]["no-duplicate"]["counterexample"]
    assert document["#meta"]["crashsweep::replay"].endswith("--path 10:7=1")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_with_nothing_violated_no_trace_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A design that keeps every invariant has no counterexample: stderr says so, no file appears."""
    trace = tmp_path / "cx.itf.json"
    status, _, err = _run(capsys, "explore", "--variant", "agent-loop", "--depth", "1", "--export", "itf", str(trace))
    assert status == 0
    assert "no counterexample, so no ITF trace was written" in err
    assert not trace.exists()


def test_further_counterexamples_go_beside_the_first_named_by_invariant() -> None:
    """cx.itf.json, then cx.no-loss.itf.json."""
    from crashsweep.reports.counterexample import Counterexample

    first = object.__new__(Counterexample)
    object.__setattr__(first, "invariant", "no-duplicate")
    second = object.__new__(Counterexample)
    object.__setattr__(second, "invariant", "no-loss")
    placed = export.itf_files(Path("out/cx.itf.json"), [first, second])
    assert [str(path) for path, _ in placed] == ["out/cx.itf.json", "out/cx.no-loss.itf.json"]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("/dev/null", "is not a regular file"),
        ("{tmp}/missing/g.graphml", "no such folder"),
        ("{tmp}", "is a directory"),
    ],
)
def test_a_file_that_cannot_be_written_whole_is_refused_before_exploring(
    given: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line, exit 2, nothing explored: a device is never replaced by a rename."""
    status, out, err = _run(capsys, *EXPLORE, "--export", "graphml", given.format(tmp=tmp_path))
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert said in err
    assert Path("/dev/null").is_char_device()


def test_the_same_file_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two exports to one file would overwrite each other."""
    path = str(tmp_path / "x")
    status, _, err = _run(capsys, *EXPLORE, "--export", "graphml", path, "--export", "itf", path)
    assert status == 2
    assert "named twice" in err


@pytest.mark.parametrize(
    ("given", "said"),
    [("x", "x is --out's directory: name a file outside it"), ("x/g.graphml", "x/g.graphml is inside --out {out}")],
)
def test_an_export_at_or_in_the_out_directory_is_refused_before_exploring(
    given: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--export FILE naming --out DIR, or a file in it (the directory's rename would drop it): one line, exit 2."""
    monkeypatch.chdir(tmp_path)
    if "/" in given:
        (tmp_path / "x").mkdir()  # an empty folder is a good --out, and the export's folder exists
    status, out, err = _run(capsys, *EXPLORE, "--out", "x", "--export", "graphml", given)
    assert (status, out) == (2, "")
    assert err.startswith(f"crashsweep: error: Invalid value for '--export': {said.format(out=tmp_path / 'x')}")
    assert err.count("\n") == 1
    assert [p.name for p in tmp_path.rglob("*")] == (["x"] if "/" in given else [])
