"""docs/guide/walk.md's command run as the guide shows it: `view --serve` blocks, so test_blocks.py only parses it.

test_blocks.py runs every command block whose output a page shows; a server runs until it is
stopped, so the guide shows this one in a block without output, and its one line in the prose.
Here it runs exactly as shown (from the checkout, through bash), prints that line, answers a
state, and stops on SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.request

from tests.paths import ROOT

DEADLINE = 120.0
"""Seconds the server may take to start and answer before the test fails (not a timing check)."""


def test_the_guide_s_command_serves_what_the_guide_says() -> None:
    """docs/guide/walk.md's command, run as shown (from the checkout, through bash), prints the line shown.

    Its browser is `true` (BROWSER): the command opens the page as a user's would, in nothing.
    """
    page = (ROOT / "docs" / "guide" / "walk.md").read_text(encoding="utf-8").splitlines()
    (command,) = [line for line in page if line.startswith("bin/crashsweep view --serve")]
    (shown,) = [line for line in page if line.startswith("serving ")]
    env = {**os.environ, "BROWSER": "true"}
    process = subprocess.Popen(["bash", "-c", command], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().rstrip("\n") == shown
        url = shown.split(" at ", 1)[1].split(" ", 1)[0]
        with urllib.request.urlopen(url + "api/state?path=10:7=1", timeout=DEADLINE) as answer:
            view = json.loads(answer.read())
        assert {i["name"]: i["status"] for i in view["invariants"]}["no-duplicate"] == "violated"
    finally:
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=DEADLINE)
    assert (process.returncode, out) == (0, "stopped serving\n")
