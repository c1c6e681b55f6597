"""crashsweep.spec.points_file: a points file read and checked, and what it keeps (spec/POINTS.md section 6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crashsweep.spec.points_file import PointList, PointsFileError, numbered, parse, passes_words, read

RUN = ("start", "saved", "filed a", "saved", "saved")
"""The names a process passed, in order: saved#1 is point 2, saved#2 point 4, saved#3 point 5."""


def test_a_file_lists_name_and_pass_a_line_with_comments_and_blank_lines_ignored() -> None:
    """The from-trace file's shape: comments (also indented), blank lines, CRLF line ends; NAME up to the last '#'."""
    text = "# from a run\r\n\r\nsaved#2\r\n   # indented comment\nissue #7 filed#1\n  \n"
    listed = parse(text, "p.txt")
    assert listed == PointList("p.txt", (("saved", 2), ("issue #7 filed", 1)), (3, 5))


def test_it_keeps_the_listed_passes_only() -> None:
    listed = parse("saved#2\nfiled a#1\n", "p.txt")
    assert [point for point in numbered(RUN) if listed.keeps(*point)] == [("filed a", 1), ("saved", 2)]
    assert listed.kept(RUN) == 2
    assert not listed.keeps("saved", 1)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("saved\n", "p.txt:1: 'saved': expected NAME#PASS (PASS: which pass of the point, from 1)"),
        ("start#1\nsaved#\n", "p.txt:2: 'saved#': expected NAME#PASS (PASS: which pass of the point, from 1)"),
        ("saved#two\n", "p.txt:1: 'saved#two': expected NAME#PASS (PASS: which pass of the point, from 1)"),
        ("saved#-1\n", "p.txt:1: 'saved#-1': expected NAME#PASS (PASS: which pass of the point, from 1)"),
        ("saved#\u0661\n", "p.txt:1: 'saved#\u0661': expected NAME#PASS (PASS: which pass of the point, from 1)"),
        ("saved#2 \n", "p.txt:1: 'saved#2 ': expected NAME#PASS (PASS: which pass of the point, from 1)"),
        ("saved#0\n", "p.txt:1: 'saved#0': passes count from 1 (saved#1 is the first)"),
        (
            "a#" + "9" * 5000,
            f"p.txt:1: 'a#{'9' * 5000}': a pass beyond 1,000,000,000 (no sweep lists that many points)",
        ),
        ("saved#1\n\nstart#1\nsaved#1\n", "p.txt:4: 'saved#1' is listed already, on line 1"),
        ("# only a comment\n\t#2\n", "p.txt: lists no crash point (one NAME#PASS a line)"),
        ("", "p.txt: lists no crash point (one NAME#PASS a line)"),
    ],
)
def test_a_bad_file_is_one_line_naming_file_and_line(text: str, line: str) -> None:
    with pytest.raises(PointsFileError) as refused:
        parse(text, "p.txt")
    assert str(refused.value) == line


def test_a_file_that_cannot_be_read_or_is_not_utf8_is_named(tmp_path: Path) -> None:
    """No file, a folder, a FIFO (nothing hangs), bytes that are not UTF-8 (named by their line); a BOM is dropped."""
    with pytest.raises(PointsFileError, match=r"^nosuch.txt: cannot read points file: No such file or directory$"):
        read("nosuch.txt")
    with pytest.raises(PointsFileError, match=r": cannot read points file: it is a directory$"):
        read(str(tmp_path))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(
        PointsFileError, match=r": cannot read points file: it is not a regular file \(a device, FIFO or socket\)$"
    ):
        read(str(fifo))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"start#1\n# comment\nsaved\xff#1\n")
    with pytest.raises(PointsFileError) as refused:
        read(str(bad))
    assert str(refused.value) == f"{bad}:3: not UTF-8 text"
    good = tmp_path / "good.txt"
    good.write_bytes("\ufeffsaved#1\n".encode())
    assert read(str(good)).points == (("saved", 1),)


def test_a_point_the_run_does_not_pass_is_said_as_crash_says_it() -> None:
    """The first listed point the run does not pass, in --crash's words, with how many points the run passes."""
    listed = parse("saved#3\nsaved#4\nnosuch#1\n", "p.txt")
    assert listed.missing(RUN) == (
        "p.txt:2: 'saved#4': the program passes 'saved' 3 times (saved#1 to saved#3); "
        "the uninterrupted run passes 5 crash points: list them with --points marked --list-points"
    )
    assert parse("nosuch#1\n", "p.txt").missing(("start",)) == (
        "p.txt:1: 'nosuch#1': the program passes no such point; "
        "the uninterrupted run passes 1 crash point: list them with --points marked --list-points"
    )
    assert parse("saved#3\nstart#1\n", "p.txt").missing(RUN) is None


def test_passes_words() -> None:
    assert passes_words("start", RUN) == "the program passes 'start' once (start#1)"
    assert passes_words("saved", RUN) == "the program passes 'saved' 3 times (saved#1 to saved#3)"
    assert passes_words("nosuch", RUN) == "the program passes no such point"
