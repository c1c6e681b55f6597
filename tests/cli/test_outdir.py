"""Tests of crashsweep.cli.outdir: an --out directory is checked first, then appears whole or not at all."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashsweep.cli import outdir, runs

PAGE = "<html><body><footer>Made by crashsweep. Re-run any counterexample with the replay command above it.</footer>"


def leftovers(parent: Path) -> list[str]:
    """Hidden siblings and temp files an interrupted or failed write could leave in `parent`."""
    return sorted(p.name for p in parent.rglob("*") if p.name.startswith(".") or p.name.endswith(".tmp"))


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("file", "exists and is not a directory"),
        ("file/sub", "is not a directory"),
        ("/dev/null", "exists and is not a directory"),
        ("/dev/null/x", "/dev/null is not a directory"),
        ("/proc/x", "cannot create anything in /proc"),
        ("foreign", "is not empty and crashsweep did not write it"),
        ("link", "is a symbolic link"),
    ],
)
def test_unusable_directories_are_refused_and_nothing_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, message: str
) -> None:
    """A file in the way, a file or device above, /proc, another program's files, a link: refused."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("mine", encoding="utf-8")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "foreign")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(outdir.OutDirError, match=message):
        outdir.check(Path(where))
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_the_current_directory_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Replacing the directory the user stands in (or one above it) would pull it from under them."""
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    with pytest.raises(outdir.OutDirError, match="current directory"):
        outdir.check(Path("."))
    with pytest.raises(outdir.OutDirError, match="current directory"):
        outdir.check(tmp_path)


def test_usable_directories_are_accepted_as_absolute_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new name (parents included), an empty directory, and one crashsweep wrote are accepted."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "earlier").mkdir()
    (tmp_path / "earlier" / "index.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "earlier" / "no-loss.trace.txt").write_text("trace", encoding="utf-8")
    for name in ("new/deeper/out", "empty", "earlier"):
        assert outdir.check(Path(name)) == tmp_path / name
    assert not (tmp_path / "new").exists()
    assert leftovers(tmp_path) == []


def test_a_directory_is_crashsweeps_only_with_its_page_and_its_kinds_of_file(tmp_path: Path) -> None:
    """index.html with crashsweep's footer, and nothing but trace, DOT, SVG and test files beside it."""
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    for name in ("no-duplicate.trace.json", "no-duplicate.graph.svg", "test_x_violates_no_duplicate.py"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    assert outdir.made_by_crashsweep(tmp_path)
    (tmp_path / "thesis.tex").write_text("x", encoding="utf-8")
    assert not outdir.made_by_crashsweep(tmp_path)
    (tmp_path / "thesis.tex").unlink()
    (tmp_path / "index.html").write_text("<html>my own page</html>", encoding="utf-8")
    assert not outdir.made_by_crashsweep(tmp_path)


def test_publish_replaces_an_earlier_report_whole(tmp_path: Path) -> None:
    """No stale file of an earlier run survives beside the new ones; the paths written are returned."""
    target = tmp_path / "out"
    outdir.publish(target, [("index.html", PAGE), ("no-loss.trace.txt", "old")])
    written = outdir.publish(target, iter([("no-duplicate.trace.txt", "new"), ("index.html", PAGE + "2")]))
    assert written == [target / "no-duplicate.trace.txt", target / "index.html"]
    assert sorted(p.name for p in target.iterdir()) == ["index.html", "no-duplicate.trace.txt"]
    assert (target / "index.html").read_text(encoding="utf-8") == PAGE + "2"
    assert leftovers(tmp_path) == []
    assert oct((target / "index.html").stat().st_mode & 0o777) == oct(0o666 & ~outdir.umask())


def failing(error: BaseException, good: int = 2) -> Iterator[tuple[str, str]]:
    """`good` files, then `error`: a render that breaks or is interrupted half-way."""
    for i in range(good):
        yield f"f{i}.trace.txt", "x"
    raise error


@pytest.mark.parametrize("earlier", [False, True])
def test_an_interrupted_write_leaves_the_directory_as_it_was(tmp_path: Path, earlier: bool) -> None:
    """Ctrl-C half-way: no new directory (or the earlier one untouched), no hidden sibling, and a true message."""
    target = tmp_path / "out"
    if earlier:
        outdir.publish(target, [("index.html", PAGE)])
    with pytest.raises(runs.Interrupted, match=f"interrupted while writing {target}; it was left as it was"):
        outdir.publish(target, failing(KeyboardInterrupt()))
    assert leftovers(tmp_path) == []
    if earlier:
        assert [p.name for p in target.iterdir()] == ["index.html"]
        assert (target / "index.html").read_text(encoding="utf-8") == PAGE
    else:
        assert not target.exists()


def test_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    """Any other error half-way (here a bug in rendering) also leaves no directory and no temp file."""
    with pytest.raises(RuntimeError, match="dot failed"):
        outdir.publish(tmp_path / "out", failing(RuntimeError("dot failed")))
    assert list(tmp_path.iterdir()) == []


def test_a_directory_filled_meanwhile_is_not_replaced(tmp_path: Path) -> None:
    """Files another program puts in DIR during the search are kept: the write is refused instead."""
    target = tmp_path / "out"
    target.mkdir()

    def files() -> Iterator[tuple[str, str]]:
        yield "index.html", PAGE
        (target / "notes.txt").write_text("mine", encoding="utf-8")

    with pytest.raises(outdir.OutDirError, match="filled by something else meanwhile"):
        outdir.publish(target, files())
    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    assert leftovers(tmp_path) == []


def test_an_interrupt_after_the_rename_says_the_directory_was_written(tmp_path: Path) -> None:
    """Ctrl-C while the written paths are reported: the directory is whole, and the message says so."""
    target = tmp_path / "out"

    def report(path: Path) -> None:
        raise KeyboardInterrupt

    with pytest.raises(runs.Interrupted, match=f"interrupted; {target} was written whole"):
        outdir.publish(target, [("index.html", PAGE)], wrote=report)
    assert [p.name for p in target.iterdir()] == ["index.html"]
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("other_thread", [False, True])
def test_sigint_is_held_back_during_the_swap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, other_thread: bool
) -> None:
    """A SIGINT raised inside the rename waits until the new directory is in place.

    Also while another thread runs: the kernel may hand the signal to that thread, and Python
    still runs the handler in the main thread (a mask of the main thread alone held nothing).
    """
    stop = threading.Event()
    waiter = threading.Thread(target=stop.wait, daemon=True)
    if other_thread:
        waiter.start()
    monkeypatch.setattr(os, "replace", _replace_then_signal)
    _CALLS.clear()
    try:
        target = tmp_path / "out"
        with pytest.raises(runs.Interrupted, match="it was written whole"):
            outdir.publish(target, [("index.html", PAGE)])
        assert [str(target)] == _CALLS
        assert [p.name for p in target.iterdir()] == ["index.html"]
    finally:
        stop.set()


_REAL_REPLACE = os.replace
_CALLS: list[str] = []


def _replace_then_signal(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    _REAL_REPLACE(src, dst)
    _CALLS.append(str(dst))
    os.kill(os.getpid(), 2)  # SIGINT, held back until the swap is done
    time.sleep(0.05)  # time for a handler that was not held back to run here, inside the swap


def test_a_large_page_of_crashsweeps_is_still_recognised(tmp_path: Path) -> None:
    """The footer is looked for at the end of the page, where it is, so big inline SVGs do not hide it."""
    (tmp_path / "index.html").write_text("<svg>" + "x" * 9_000_000 + "</svg>" + PAGE, encoding="utf-8")
    assert outdir.made_by_crashsweep(tmp_path)


def test_a_closed_pipe_while_reporting_is_not_a_write_error(tmp_path: Path) -> None:
    """`explore --out DIR | head -1`: the directory is whole, and the broken pipe goes on as it is."""
    target = tmp_path / "out"

    def report(path: Path) -> None:
        raise BrokenPipeError

    with pytest.raises(BrokenPipeError):
        outdir.publish(target, [("index.html", PAGE)], wrote=report)
    assert [p.name for p in target.iterdir()] == ["index.html"]
