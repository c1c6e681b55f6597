"""The lazy top-level group (crashsweep/cli/lazy.py): a command's module imported when it is used, all when listed."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from crashsweep.cli.lazy import Commands, LazyGroup
from crashsweep.cli.main import COMMANDS, cli

HERE = f"{__name__}:"

first = click.Command("first", callback=lambda: None, help="The first.")
second = click.Command("second", callback=lambda: None, help="The second.")
not_a_command = object()


def _group(seen: list[str]) -> LazyGroup:
    lazy = {"one": f"{HERE}first", "two": f"{HERE}second"}
    return LazyGroup(
        "top", commands={"own": click.Command("own")}, lazy=lazy, loaded=lambda c: seen.append(str(c.name))
    )


def test_a_lookup_imports_that_command_alone() -> None:
    seen: list[str] = []
    group = _group(seen)
    with click.Context(group) as ctx:
        assert group.get_command(ctx, "one") is first
        assert seen == ["first"]
        assert group.get_command(ctx, "one") is first
        assert seen == ["first"], "a command is imported and given to `loaded` once"
        assert group.get_command(ctx, "three") is None
    assert "two" in group.commands
    assert seen == ["first"], "asking whether a command is there imports nothing"
    assert group.commands.lazy == {"two": f"{HERE}second"}


def test_listing_imports_every_command_and_keeps_the_groups_own() -> None:
    seen: list[str] = []
    group = _group(seen)
    with click.Context(group) as ctx:
        assert group.list_commands(ctx) == ["one", "own", "two"]
    assert sorted(seen) == ["first", "second"]
    assert dict(group.commands.items()) == {"own": group.commands["own"], "one": first, "two": second}


@pytest.mark.parametrize("walk", [list, len, lambda c: list(c.keys()), lambda c: list(c.values())])
def test_every_way_of_walking_the_commands_sees_them_all(walk: Callable[[Commands], object]) -> None:
    commands = Commands({"one": f"{HERE}first"}, lambda c: None)
    walk(commands)
    assert commands.lazy == {}
    assert dict.get(commands, "one") is first


def test_a_name_that_is_not_a_command_is_refused_when_imported() -> None:
    commands = Commands({"bad": f"{HERE}not_a_command"}, lambda c: None)
    with pytest.raises(TypeError, match=r"^tests\.cli\.test_lazy:not_a_command is not a click command$"):
        commands["bad"]


def test_two_threads_that_look_up_one_command_both_get_it_and_it_is_imported_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The module takes a while to import: the second lookup waits for the first, and `loaded` sees it once."""
    (tmp_path / "slow_command.py").write_text(
        "import time\nimport click\ntime.sleep(0.3)\nslow = click.Command('slow', callback=lambda: None)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[str] = []
    group = LazyGroup("top", lazy={"slow": "slow_command:slow"}, loaded=lambda c: seen.append(str(c.name)))
    found: list[click.Command | None] = []

    def look() -> None:
        with click.Context(group) as ctx:
            found.append(group.get_command(ctx, "slow"))

    threads = [threading.Thread(target=look) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    command = sys.modules["slow_command"].slow
    assert found == [command, command]
    assert seen == ["slow"]
    del sys.modules["slow_command"]


def test_the_help_lists_every_command_and_each_takes_color() -> None:
    with click.Context(cli, info_name="crashsweep") as ctx:
        names = cli.list_commands(ctx)
        assert set(COMMANDS) <= set(names)
        for name in COMMANDS:
            command = cli.get_command(ctx, name)
            assert command is not None
            assert "--color" in [opt for param in command.params for opt in param.opts], name


def test_explore_imports_neither_the_real_side_nor_another_commands_module() -> None:
    """In a new interpreter: explore's run leaves the real sweep, the page and the other commands unimported."""
    script = (
        "import json, sys\n"
        "from crashsweep.cli.main import main\n"
        "status = main(['explore', '--variant', 'save-after-reply', '--depth', '1'])\n"
        "print(json.dumps([status, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    status, modules = json.loads(done.stdout.splitlines()[-1])
    assert status == 1  # save-after-reply duplicates a write: a finding
    others = {spec.partition(":")[0] for spec in COMMANDS.values()}
    imported = set(modules)
    assert not imported & others
    assert not [m for m in imported if m.startswith(("crashsweep.realsweep", "crashsweep.reports.html"))]
    assert "crashsweep.reports.dot" not in imported
