"""`crashsweep view --serve` clicked through in real headless Chromium, driven by Selenium and chromedriver.

The server is the real CLI in a subprocess (`python -m crashsweep view --serve --port 0`), read
for its address on its first line and ended by its PID. The browser is Debian's chromium with
Debian's chromedriver, both passed by path, so Selenium Manager never downloads anything. The
page's `document.body.dataset.ready` says which state it has drawn: every wait is on that (or
on the discoveries being done), never on a fixed sleep.

Screenshots of a state mid-path and of a discovery's violation go to tmp_path always, and to
docs/images/serve-*.png only when CRASHSWEEP_UPDATE_SCREENSHOTS=1 (a 1280x900 viewport, the size
tests/docs/images.py shoots the guides' pictures at). In the slow tier (tests/conftest.py's
SLOW): it starts a browser and servers.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.cli.test_serve import Served
from tests.paths import ROOT

pytestmark = [pytest.mark.requires_tool("chromium"), pytest.mark.requires_tool("chromedriver")]

DESIGN = ("--variant", "save-after-reply", "--depth", "2")
WAIT = 60
"""Seconds a state may take to be drawn, or the discoveries to be done, on a loaded 2-core machine."""
SHOT = (1280, 900)
LINE = re.compile(r"serving (\S+) at (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops it\)\n")


@contextlib.contextmanager
def serving(*args: str) -> Iterator[str]:
    """The page's address while `crashsweep view --serve` runs with `args` (test_serve.Served); ended by its PID."""
    server = Served(*args, env={"CRASHSWEEP_PROG": "crashsweep"})  # replay commands as an installed user types them
    try:
        match = LINE.fullmatch(server.first)
        assert match, server.first
        yield match.group(2)
    finally:
        server.stop()


def chrome(scratch: Path) -> WebDriver:
    """Headless Chromium at a 1280x900 viewport, started by the system's chromedriver (no download).

    Its profile and temporary files go under `scratch` (pytest's): by default Chromium leaves two
    folders of its own in the system's temporary directory at every start.
    """
    options = webdriver.ChromeOptions()
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        f"--user-data-dir={scratch / 'profile'}",
    ):
        options.add_argument(flag)
    options.add_argument(f"--window-size={SHOT[0]},{SHOT[1]}")
    options.binary_location = str(shutil.which("chromium"))
    chromedriver = str(shutil.which("chromedriver"))
    service = Service(executable_path=chromedriver, env={**os.environ, "TMPDIR": str(scratch)})
    driver = webdriver.Chrome(options=options, service=service)
    size = {"width": SHOT[0], "height": SHOT[1], "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", size)
    return driver


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """The address of save-after-reply's walk at depth 2."""
    with serving(*DESIGN) as url:
        yield url


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    """One browser for the module's tests (each loads its own page)."""
    started = chrome(tmp_path_factory.mktemp("chromium"))
    try:
        yield started
    finally:
        started.quit()


def api(url: str) -> Any:
    """The JSON a GET of `url` answers (200 only)."""
    with urllib.request.urlopen(url, timeout=WAIT) as response:
        return json.load(response)


def discoveries(base: str) -> Any:
    """/api/discoveries once the background exploration is done."""
    deadline = time.monotonic() + WAIT
    found = api(base + "api/discoveries")
    while not found["done"] and time.monotonic() < deadline:
        time.sleep(0.2)
        found = api(base + "api/discoveries")
    assert found["done"], found
    return found


def ready(driver: WebDriver, code: str) -> None:
    """Wait until the page has drawn the state (or the error) of `code`."""
    WebDriverWait(driver, WAIT).until(lambda d: d.execute_script("return document.body.dataset.ready") == code)


def js(driver: WebDriver, script: str) -> Any:
    """What `script` (a function body) returns in the page."""
    return driver.execute_script(script)


def status(driver: WebDriver, invariant: str) -> str:
    """The status the page shows for `invariant`."""
    item = driver.find_element(By.CSS_SELECTOR, f'#invariants li[data-name="{invariant}"]')
    return str(item.get_attribute("data-status"))


def moves(driver: WebDriver) -> list[tuple[str, str, str]]:
    """The moves offered: (choice, kind, code) of each button."""
    buttons = driver.find_elements(By.CSS_SELECTOR, "#moves button[data-code]")
    return [
        (str(b.get_attribute("data-choice")), str(b.get_attribute("data-kind")), str(b.get_attribute("data-code")))
        for b in buttons
    ]


def take(driver: WebDriver, choice: int) -> str:
    """Click the move of `choice` and wait for its state; its code."""
    button = driver.find_element(By.CSS_SELECTOR, f'#moves button[data-choice="{choice}"]')
    code = str(button.get_attribute("data-code"))
    button.click()
    ready(driver, code)
    return code


def click(driver: WebDriver, selector: str) -> str:
    """Click the element of `selector` carrying data-code and wait for its state; its code."""
    element = driver.find_element(By.CSS_SELECTOR, selector)
    code = str(element.get_attribute("data-code"))
    element.click()
    ready(driver, code)
    return code


def shoot(driver: WebDriver, tmp_path: Path, name: str) -> Path:
    """A PNG of the viewport in tmp_path; also docs/images/`name` under CRASHSWEEP_UPDATE_SCREENSHOTS=1."""
    driver.execute_script("window.scrollTo(0, 0)")
    shot = tmp_path / name
    assert driver.save_screenshot(str(shot))
    assert shot.read_bytes().startswith(b"\x89PNG")
    if os.environ.get("CRASHSWEEP_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(shot, ROOT / "docs" / "images" / name)
    return shot


def choices(code: str) -> dict[int, int]:
    """The choice of each step of a path code that is not the run's own step (0)."""
    _, _, rest = code.partition(":")
    return {int(step): int(choice) for step, choice in (part.split("=") for part in rest.split(",") if part)}


def test_clicking_through_a_counterexample_then_back_and_forward(base: str, driver: WebDriver, tmp_path: Path) -> None:
    """The discovery's path clicked move by move: each state, what changed, the verdicts; then back and forward."""
    (found, *_) = discoveries(base)["discoveries"]
    assert found["invariant"] == "no-duplicate"
    driver.get(base)
    ready(driver, "0:")
    js(driver, "window.keptAcrossClicks = true")  # gone if any click reloaded the page
    assert moves(driver) == [("0", "step", "1:")]
    assert status(driver, "no-duplicate") == "not yet exercised"
    assert driver.find_element(By.ID, "back").get_attribute("disabled")
    path = choices(found["code"])
    for step in range(1, found["steps"] + 1):
        code = take(driver, path.get(step, 0))
        assert driver.current_url == f"{base}?path={code}"
        assert driver.find_element(By.ID, "code").text == code
        if step == 6:  # create_a filed: the record is new, and a crash at that point is offered
            assert driver.find_elements(By.CSS_SELECTOR, '#world tr.changed[data-path="tracker.records"]')
            assert "+record #1 create_a" in driver.find_element(By.ID, "changed").text
            assert "crash" in [kind for _, kind, _ in moves(driver)]
            assert status(driver, "no-duplicate") == "holds"
        if step == 7:
            assert driver.find_elements(By.CSS_SELECTOR, "#lanes tr.crash")
            assert driver.find_elements(By.CSS_SELECTOR, '#world tr.changed[data-path="process"]')
        if step == found["steps"] - 1:  # one crash deep, a second crash still offered: the guide's picture
            assert "crash" in [kind for _, kind, _ in moves(driver)]
            assert driver.find_elements(By.CSS_SELECTOR, "#lanes tr.restart")
            shoot(driver, tmp_path, "serve-state.png")
    assert driver.current_url == f"{base}?path={found['code']}"
    assert status(driver, "no-duplicate") == "violated"
    assert found["violation"] in driver.find_element(By.ID, "callout").text
    replay = driver.find_element(By.ID, "replay").text
    assert replay.startswith("crashsweep replay --variant save-after-reply --depth 2 ")
    assert replay.endswith(f" --path {found['code']}")
    lanes = driver.find_elements(By.CSS_SELECTOR, "#lanes tr[data-step]")
    assert {row.get_attribute("data-step") for row in lanes} - {""} == {str(n) for n in range(1, found["steps"] + 1)}
    assert found["violation"] in driver.find_element(By.CSS_SELECTOR, "#lanes tr.violation").text

    driver.back()  # the browser's back: one state before the violation, drawn from the URL
    ready(driver, "9:7=1")
    assert driver.current_url == f"{base}?path=9:7=1"
    assert status(driver, "no-duplicate") == "holds"
    assert not driver.find_element(By.ID, "callout").is_displayed()
    click(driver, "#back")  # the page's Back: the parent state, the restart
    assert driver.current_url == f"{base}?path=8:7=1"
    assert driver.find_elements(By.CSS_SELECTOR, "#trace li.here.kind-restart")
    assert driver.find_element(By.ID, "forward").get_attribute("data-code") == "9:7=1"
    click(driver, "#forward")
    click(driver, "#forward")  # along the line walked, back to the violation
    assert status(driver, "no-duplicate") == "violated"
    click(driver, '#trace a[data-code="6:"]')  # a step of the trace: the state after it
    assert driver.find_elements(By.CSS_SELECTOR, '#world tr.changed[data-path="tracker.records"]')
    assert len(driver.find_elements(By.CSS_SELECTOR, "#trace li.ahead")) == found["steps"] - 6
    driver.back()
    ready(driver, found["code"])
    assert js(driver, "return window.keptAcrossClicks") is True


def test_a_discovery_opens_its_violation(base: str, driver: WebDriver, tmp_path: Path) -> None:
    """Once the background search is done, each discovery is a link; the first opens a state that violates it."""
    expected = discoveries(base)["discoveries"]
    driver.get(base)
    ready(driver, "0:")
    WebDriverWait(driver, WAIT).until(lambda d: d.execute_script("return document.body.dataset.discoveries") == "done")
    assert "states" in driver.find_element(By.ID, "progress").text
    links = driver.find_elements(By.CSS_SELECTOR, "#discoveries a[data-code]")
    assert [link.get_attribute("data-code") for link in links] == [d["code"] for d in expected]
    first = expected[0]
    click(driver, "#discoveries a[data-code]")
    assert driver.current_url == f"{base}?path={first['code']}"
    assert status(driver, first["invariant"]) == "violated"
    detail = driver.find_element(By.CSS_SELECTOR, f'#invariants li[data-name="{first["invariant"]}"] .detail').text
    assert first["violation"] in detail
    assert driver.find_elements(By.CSS_SELECTOR, "#lanes tr.crash")
    assert driver.find_elements(By.CSS_SELECTOR, "#discoveries li.here")
    shoot(driver, tmp_path, "serve-violation.png")


def test_a_bad_path_shows_the_servers_error(base: str, driver: WebDriver) -> None:
    """A path past the run, or malformed: 400 and one line of JSON; the page shows that line in its error box."""
    for bad in ("bad", "9999:", "1:1=1"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            api(f"{base}api/state?path={bad}")
        assert refused.value.code == 400
        error = json.loads(refused.value.read())["error"]
        assert isinstance(error, str)
        assert error
        assert "\n" not in error
        assert "Traceback" not in error
    driver.get(base + "?path=9999:")
    ready(driver, "9999:")
    box = driver.find_element(By.ID, "error")
    assert box.is_displayed()
    with pytest.raises(urllib.error.HTTPError) as refused:
        api(f"{base}api/state?path=9999:")
    assert json.loads(refused.value.read())["error"] in box.text
    assert not driver.find_element(By.ID, "main").is_displayed()
    click(driver, "#error a[data-code]")  # the way back to the start
    assert not box.is_displayed()
    assert moves(driver) == [("0", "step", "1:")]


def test_names_from_a_job_file_are_shown_as_text(driver: WebDriver, tmp_path: Path) -> None:
    """A job whose name and call hold markup: the page shows it literally and runs none of it."""
    job = tmp_path / "job.toml"
    job.write_text(
        'name = "<img src=x onerror=\\"document.body.dataset.pwned=1\\">"\n'
        'turns = [["<i>a</i>"]]\n[calls]\n"<i>a</i>" = { tool = "create_issue", writes = true }\n'
    )
    with serving("--variant", "save-after-reply", "--depth", "1", "--job", str(job)) as url:
        driver.get(url)
        ready(driver, "0:")
        while not driver.find_elements(By.CSS_SELECTOR, "#world ol.records li"):
            take(driver, 0)
        assert '<img src=x onerror="document.body.dataset.pwned=1">' in driver.find_element(By.ID, "meta").text
        assert "#1 <i>a</i>" in driver.find_element(By.ID, "world").text
        assert "<i>a</i>" in driver.find_element(By.ID, "lanes").text
        assert js(driver, "return document.querySelectorAll('img, #world i, #lanes i, #trace i').length") == 0
        assert js(driver, "return document.body.dataset.pwned") is None
