"""The top-level command group: a command that lives in a module of its own is imported when used.

`crashsweep explore` needs the model side alone; importing every command's module (the real
sweep and its adapters, the page server, the importers) to run it cost more than half of the
command's start. So the group knows those commands by name ("module:attribute") and imports
one the first time it is looked up: running it imports its own module only. Listing them (the
help, shell completion, iterating the group's `commands`) imports every one first, so code
that walks the commands sees them all, as with a plain click group. Each command, once
imported, is passed to `loaded` (main.py gives it and its subcommands the --color option).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values


class Commands(dict[str, click.Command]):
    """A group's commands by name: looking one up imports it alone, listing them imports them all."""

    def __init__(self, lazy: Mapping[str, str], loaded: Callable[[click.Command], None]) -> None:
        super().__init__()
        self.lazy = dict(lazy)
        """The commands not imported yet: name -> "module:attribute"."""
        self.loaded = loaded
        self._lock = threading.RLock()

    def load(self, name: object) -> None:
        """Import command `name` if it is one not imported yet.

        Under a lock, and taken off `lazy` only once it is in place: a thread that looks the
        same command up meanwhile waits for it, and `loaded` sees each command once.
        """
        if not isinstance(name, str) or name not in self.lazy:
            return
        with self._lock:
            spec = self.lazy.get(name)
            if spec is None:
                return
            module, _, attribute = spec.partition(":")
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{spec} is not a click command")
            self.loaded(command)
            super().__setitem__(name, command)
            del self.lazy[name]

    def load_all(self) -> None:
        """Import every command not imported yet."""
        for name in list(self.lazy):
            self.load(name)

    def __getitem__(self, name: str) -> click.Command:
        self.load(name)
        return super().__getitem__(name)

    def __contains__(self, name: object) -> bool:
        return name in self.lazy or super().__contains__(name)

    def __iter__(self) -> Iterator[str]:
        self.load_all()
        return super().__iter__()

    def __len__(self) -> int:
        self.load_all()
        return super().__len__()

    def keys(self) -> dict_keys[str, click.Command]:
        self.load_all()
        return super().keys()

    def values(self) -> dict_values[str, click.Command]:
        self.load_all()
        return super().values()

    def items(self) -> dict_items[str, click.Command]:
        self.load_all()
        return super().items()


class LazyGroup(click.Group):
    """A click group whose commands named in `lazy` ({name: "module:attribute"}) are imported on first lookup."""

    def __init__(
        self, *args: Any, lazy: Mapping[str, str], loaded: Callable[[click.Command], None], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        commands = Commands(lazy, loaded)
        for name, command in self.commands.items():  # those given to the group itself
            dict.__setitem__(commands, name, command)
        self.commands: Commands = commands

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command `cmd_name`, imported now if it was not yet (None: no such command)."""
        self.commands.load(cmd_name)
        return super().get_command(ctx, cmd_name)
