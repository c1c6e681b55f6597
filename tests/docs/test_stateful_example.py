"""The stateful-testing example of the docs runs as written.

The example is a complete user test file, docs/examples/test_my_design.py; this test runs
pytest on it in a fresh process (with the suite's hypothesis profile), as a user would. A
python code block of README.md or a docs page whose first line is
`# docs/examples/test_my_design.py` must be an excerpt of that file: its lines appear there,
in the same order ("..." stands for lines left out).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.paths import ROOT

EXAMPLE = ROOT / "docs" / "examples" / "test_my_design.py"
MARKER = "# docs/examples/test_my_design.py"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_the_example_test_file_passes_under_pytest(pytestconfig: pytest.Config) -> None:
    profile = pytestconfig.getoption("hypothesis_profile", None) or os.environ.get("HYPOTHESIS_PROFILE", "ci")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.conftest",  # the suite's profiles; a user's suite has its own
            f"--hypothesis-profile={profile}",
            str(EXAMPLE),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\b4 passed\b", done.stdout), done.stdout


def _excerpts(text: str) -> list[list[str]]:
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    return [block.splitlines()[1:] for block in blocks if block.startswith(MARKER)]


def test_the_docs_show_excerpts_of_the_example() -> None:
    """Some page has a python block that starts with the marker, and each such block is an excerpt."""
    excerpts = [excerpt for page in PAGES for excerpt in _excerpts(page.read_text(encoding="utf-8"))]
    assert excerpts, f"no page has a python code block starting with {MARKER!r}"
    example = EXAMPLE.read_text(encoding="utf-8").splitlines()
    for excerpt in excerpts:
        assert any(line.strip() and line.strip() != "..." for line in excerpt), "an empty excerpt shows nothing"
        position = 0
        for line in filter(str.strip, excerpt):
            if line.strip() == "...":
                continue
            assert line in example[position:], f"docs line not in {EXAMPLE.name} (in this order): {line!r}"
            position = example.index(line, position) + 1
