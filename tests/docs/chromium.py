"""Real headless Chromium for the docs' tests: a page's DOM after a measuring script, or a screenshot.

Each call starts one browser in its own session and waits for it; a browser that overstays its
timeout is killed with its whole process group (its group ID is the PID this module started),
so no renderer outlives a test.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

TIMEOUT = 180
"""Seconds a browser may take to load, lay out and dump or shoot one local page."""


def flags(chromium: str, profile: Path, width: int, height: int) -> list[str]:
    """The command line of a headless browser that fetches nothing of its own, its window `width`x`height`."""
    return [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--hide-scrollbars",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ]


def run(command: list[str]) -> str:
    """Run a browser to its end and return its stdout; AssertionError with its stderr if it fails or overstays."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the group this call started: the browser and its children
        proc.communicate()
        raise AssertionError(f"{command[0]} took more than {TIMEOUT} s") from None
    assert proc.returncode == 0, err[-2000:]
    return out


def dump_dom(chromium: str, page: Path, profile: Path, size: tuple[int, int] = (1280, 800)) -> str:
    """The DOM of `page` (a local file) once loaded, its scripts run, in a window of `size`."""
    return run([*flags(chromium, profile, *size), "--dump-dom", page.as_uri()])


def screenshot(chromium: str, page: Path, png: Path, profile: Path, size: tuple[int, int] = (1280, 800)) -> Path:
    """A PNG of `page` (a local file) as a window of `size` shows it, written to `png`."""
    run([*flags(chromium, profile, *size), f"--screenshot={png}", page.as_uri()])
    assert png.read_bytes().startswith(b"\x89PNG"), png
    return png


def with_script(page: Path, script: str, copy: Path) -> Path:
    """A copy of `page` at `copy` with `script` (a <script> element) run at the end of its body."""
    text = page.read_text(encoding="utf-8")
    assert "</body>" in text, page
    copy.write_text(text.replace("</body>", script + "</body>", 1), encoding="utf-8")
    return copy
