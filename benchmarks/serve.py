"""Benchmark: `crashsweep view --serve` clicked in real headless Chromium (issue 47's targets).

Starts the real server (`python -m crashsweep view --serve --port 0`) on a design with a
generated job (benchmarks/scaling.py's `generated`: turns of 4 calls, every third call reads,
written to a temporary TOML job file) and drives Debian's chromium through its chromedriver
(Selenium, no download). It measures:

- the first page load: from the navigation to the first state drawn (the page's own
  performance.now() when it sets body.dataset.ready), while the background search runs;
- --clicks scripted clicks (seeded): a random move of the state shown, or about one time in
  eight (and wherever no move is left) the page's Back button; each click's time is the page's,
  from performance.now() before its fetch to body.dataset.ready set (Selenium's own round trip
  is not counted); the 95th percentile, with the median and the worst;
- the server's peak resident memory (VmHWM of its /proc/PID/status) after the clicks and the
  background search;
- a long path drawn: a second server on a job of --long-calls calls at depth 1, the run's own
  path taken to --long-steps steps (or to its end, if shorter), loaded as `?path=N:`.

The table ends with each target (first load < 1 s, p95 click < 200 ms, memory < 400 MB,
2,000-step path < 2 s) met or not. Times are wall clock in the browser: run it on a quiet machine.

    .venv/bin/python benchmarks/serve.py [--design save-after-reply] [--calls 40] [--depth 4]
        [--clicks 500] [--seed 1] [--long-calls 500] [--long-steps 2000]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scaling import generated  # a script beside this one, run by path
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

from crashsweep.spec.job import Job
from crashsweep.variants import DESIGNS

LINE = re.compile(r"serving \S+ at (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops it\)\n")
WAIT = 120
"""Seconds a state may take to be drawn before the benchmark gives up."""
BACK = 1 / 8
"""The share of clicks that press Back rather than take a move."""


def job_toml(job: Job) -> str:
    """`job` as a job file (the format of examples/*.toml, read by spec/job.py's load_job)."""
    lines = [f"name = {json.dumps(job.name)}", "turns = ["]
    lines += ["  [" + ", ".join(json.dumps(call.id) for call in turn) + "]," for turn in job.turns]
    lines += ["]", "[calls]"]
    lines += [f'{call.id} = {{ tool = "{call.tool}", writes = {str(call.writes).lower()} }}' for call in job.calls]
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def serving(job: Path, design: str, depth: int) -> Iterator[tuple[str, int]]:
    """The address and PID of `view --serve` while it runs; ended by its PID."""
    command = [sys.executable, "-m", "crashsweep", "view", "--serve", "--port", "0", "--no-open"]
    command += ["--variant", design, "--depth", str(depth), "--job", str(job)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = LINE.fullmatch(line)
        if match is None:
            raise SystemExit(f"serve.py: the server did not start: {line!r}")
        yield match.group(1), proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def chrome(chromium: str, chromedriver: str, scratch: Path) -> WebDriver:
    """Headless Chromium at 1280x900, started by the given chromedriver (Selenium Manager never runs).

    Its profile and temporary files go under `scratch` (removed with it): by default Chromium
    leaves two folders of its own in the system's temporary directory at every start.
    """
    options = webdriver.ChromeOptions()
    flags = ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900")
    for flag in (*flags, f"--user-data-dir={scratch / 'profile'}"):
        options.add_argument(flag)
    options.binary_location = chromium
    service = Service(executable_path=chromedriver, env={**os.environ, "TMPDIR": str(scratch)})
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_script_timeout(WAIT)
    return driver


WAIT_FOR = """
var code = arguments[0], done = arguments[arguments.length - 1];
(function wait() { if (document.body.dataset.ready === code) { done(window.walkTimes[window.walkTimes.length - 1]); }
  else { setTimeout(wait, 2); } })();
"""
CLICK = """
var target = document.querySelector(arguments[0]), code = target.dataset.code, done = arguments[arguments.length - 1];
target.click();
(function wait() { if (document.body.dataset.ready === code) { done(window.walkTimes[window.walkTimes.length - 1]); }
  else { setTimeout(wait, 2); } })();
"""


def load(driver: WebDriver, url: str, code: str) -> dict[str, Any]:
    """Open `url` and wait for the state `code`; its walkTimes entry (`at`: ms since the navigation)."""
    driver.get(url)
    times: dict[str, Any] = driver.execute_async_script(WAIT_FOR, code)
    return times


def clicks(driver: WebDriver, count: int, seed: int) -> list[float]:
    """`count` clicks, a random move or Back; each one's milliseconds from its fetch to its state drawn."""
    rng = random.Random(seed)
    spent = []
    for _ in range(count):
        codes = driver.execute_script(
            "return Array.from(document.querySelectorAll('#moves button[data-code]')).map(b => b.dataset.code)"
        )
        back = driver.execute_script("return !document.getElementById('back').disabled")
        if codes and (not back or rng.random() >= BACK):
            selector = f'#moves button[data-code="{rng.choice(codes)}"]'
        elif back:
            selector = "#back"
        else:
            raise SystemExit("serve.py: the start offers no move")
        spent.append(float(driver.execute_async_script(CLICK, selector)["ms"]))
    return spent


def peak_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise SystemExit("serve.py: no VmHWM in /proc (Linux only)")


def discovered(url: str) -> None:
    """Wait until the background search is done (so that later figures are not measured beside it)."""
    deadline = time.monotonic() + 30 * WAIT
    while time.monotonic() < deadline:
        with urllib.request.urlopen(url + "api/discoveries", timeout=WAIT) as response:
            if json.load(response)["done"]:
                return
        time.sleep(0.5)
    raise SystemExit("serve.py: the background search did not finish")


def run_length(url: str, most: int) -> int:
    """The run's own path's length, up to `most` (the longest `N:` the server accepts, by bisection)."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        try:
            with urllib.request.urlopen(f"{url}api/state?path={middle}:", timeout=WAIT):
                low = middle
        except urllib.error.HTTPError as refused:
            if refused.code != 400:
                raise
            high = middle - 1
    return low


def percentile(values: list[float], share: float) -> float:
    """The `share` quantile (nearest rank) of `values`."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def row(name: str, value: str, target: str, met: bool) -> None:
    """One line of the table."""
    print(f"{name:<40} {value:>16}   target {target:<10} {'met' if met else 'NOT MET'}")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr and exit 2 (argparse would print the usage first)."""
        self.exit(2, f"serve.py: {message}\n")


def parse() -> argparse.Namespace:
    """The benchmark's sizes, from the command line; a bad value exits 2 with one line."""
    parser = _Parser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--design", default="save-after-reply", help="a shipped design")
    parser.add_argument("--calls", type=int, default=40, help="calls of the clicked job")
    parser.add_argument("--depth", type=int, default=4, help="depth of the clicked walk")
    parser.add_argument("--clicks", type=int, default=500, help="scripted clicks")
    parser.add_argument("--seed", type=int, default=1, help="seed of the clicks' choices")
    parser.add_argument("--long-calls", type=int, default=500, help="calls of the long path's job (depth 1)")
    parser.add_argument("--long-steps", type=int, default=2000, help="steps of the long path")
    args = parser.parse_args()
    if args.design not in DESIGNS:
        parser.error(f"--design {args.design!r}: not a shipped design")
    for name in ("calls", "clicks", "long_calls", "long_steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} {getattr(args, name)}: expected 1 or more")
    if args.depth < 0:
        parser.error(f"--depth {args.depth}: expected 0 or more")
    return args


def tools() -> tuple[str, str]:
    """The paths of chromium and chromedriver, or exit 2 naming what is missing."""
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        sys.exit("serve.py: chromium and chromedriver are needed (apt-get install chromium chromium-driver)")
    return chromium, chromedriver


def main() -> None:
    """Measure, then print the table with the targets."""
    args = parse()
    chromium, chromedriver = tools()
    with tempfile.TemporaryDirectory(prefix="crashsweep-serve-") as work:
        job, long_job = Path(work, "job.toml"), Path(work, "long.toml")
        job.write_text(job_toml(generated(args.calls, 4)), encoding="utf-8")
        long_job.write_text(job_toml(generated(args.long_calls, 4)), encoding="utf-8")
        driver = chrome(chromium, chromedriver, Path(work))
        try:
            with serving(job, args.design, args.depth) as (url, pid):
                first = load(driver, url, "0:")["at"]
                spent = clicks(driver, args.clicks, args.seed)
                discovered(url)
                memory = peak_mb(pid)
            with serving(long_job, args.design, 1) as (url, _):
                discovered(url)
                steps = run_length(url, args.long_steps)
                long = load(driver, f"{url}?path={steps}:", f"{steps}:")
        finally:
            driver.quit()
    print(
        f"{args.design}, generated {args.calls}-call job, depth {args.depth}, {os.cpu_count()} cores; headless chromium"
    )
    row("first page load", f"{first / 1000:.2f} s", "< 1 s", first < 1000)
    p95 = percentile(spent, 0.95)
    clicked = f"p95 click to drawn ({len(spent)} clicks)"
    row(clicked, f"{p95:.0f} ms", "< 200 ms", p95 < 200)
    print(f"  median {statistics.median(spent):.0f} ms, worst {max(spent):.0f} ms")
    row("server peak resident memory (VmHWM)", f"{memory:.0f} MB", "< 400 MB", memory < 400)
    drawn = f"{steps:,}-step path drawn ({args.long_calls} calls)"
    row(drawn, f"{long['ms'] / 1000:.2f} s", "< 2 s", long["ms"] < 2000)
    print(f"  of which the server's answer {long['fetch'] / 1000:.2f} s; since navigation {long['at'] / 1000:.2f} s")


if __name__ == "__main__":
    main()
