"""How a sweep finds a program's crash points (spec/POINTS.md): marked, auto, syscalls, and the filters.

- `marked`: the program's own `crashpoint(...)` calls (the default);
- `auto`: points at the program's effects, found in the process by audit hooks and a thin
  interposition (auto.py), for Python programs; combined with `marked` or alone (alone, the
  marks are passed silently: the program as if it had none);
- `syscalls`: points at the system calls that make an effect visible, found by tracing any
  program (crashsweep.realsweep.syscalls); alone.

`Points` is the value the sweep's options carry and the swept process reads back from its
environment (CRASHSWEEP_POINTS, CRASHSWEEP_POINTS_INCLUDE, CRASHSWEEP_POINTS_EXCLUDE).
Standard library only: the probe runs inside the swept program.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass

MODES_ENV = "CRASHSWEEP_POINTS"
INCLUDE_ENV = "CRASHSWEEP_POINTS_INCLUDE"
EXCLUDE_ENV = "CRASHSWEEP_POINTS_EXCLUDE"
MARKED, AUTO, SYSCALLS = "marked", "auto", "syscalls"
MODES = (MARKED, AUTO, SYSCALLS)
CHOICES = ("marked", "auto", "marked,auto", "syscalls")
"""The values `--points` takes: syscalls goes alone (a traced program's marks are its own business)."""


@dataclass(frozen=True)
class Points:
    """Which points a sweep uses, and which effects (kind or path glob) it keeps or drops."""

    modes: tuple[str, ...] = (MARKED,)
    include: tuple[str, ...] = ()
    """Kept effects, by kind (`fsync`, `send`, ...) or glob over the effect's file or call site; empty: all."""
    exclude: tuple[str, ...] = ()
    """Dropped effects, by kind or glob; applied after `include`."""

    @classmethod
    def parse(cls, text: str, include: str = "", exclude: str = "") -> Points:
        """`--points` and its filters as given; ValueError naming what is wrong."""
        modes = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
        unknown = [mode for mode in modes if mode not in MODES]
        if unknown or not modes:
            raise ValueError(f"--points {text!r}: expected one of {', '.join(CHOICES)}")
        if SYSCALLS in modes and len(modes) > 1:
            raise ValueError(f"--points {text!r}: syscalls goes alone")
        if (include or exclude) and modes == (MARKED,):
            raise ValueError(
                "--points-include and --points-exclude filter found points: give --points auto or syscalls"
            )
        return cls(tuple(m for m in MODES if m in modes), _items(include), _items(exclude))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Points:
        """The points a swept process is told to use (none set: its marks only)."""
        env = os.environ if env is None else env
        modes = tuple(m for m in env.get(MODES_ENV, MARKED).split(",") if m in MODES) or (MARKED,)
        return cls(modes, _items(env.get(INCLUDE_ENV, "")), _items(env.get(EXCLUDE_ENV, "")))

    @property
    def text(self) -> str:
        """As `--points` takes it: "marked", "auto", "marked,auto" or "syscalls"."""
        return ",".join(self.modes)

    @property
    def marked(self) -> bool:
        return MARKED in self.modes

    @property
    def auto(self) -> bool:
        return AUTO in self.modes

    @property
    def syscalls(self) -> bool:
        return SYSCALLS in self.modes

    def env(self) -> dict[str, str]:
        """The environment that tells a swept process (or the tracer) these points; empty for the default."""
        if self == Points():
            return {}
        found = {MODES_ENV: self.text}
        if self.include:
            found[INCLUDE_ENV] = ",".join(self.include)
        if self.exclude:
            found[EXCLUDE_ENV] = ",".join(self.exclude)
        return found

    def args(self) -> list[str]:
        """The command-line options that name these points again (none for the default)."""
        if self == Points():
            return []
        found = ["--points", self.text]
        if self.include:
            found += ["--points-include", ",".join(self.include)]
        if self.exclude:
            found += ["--points-exclude", ",".join(self.exclude)]
        return found

    def keeps(self, kind: str, *names: str) -> bool:
        """Is an effect of `kind` on `names` (its file, peer or call site) kept by the filters?"""
        if self.include and not _matches(self.include, kind, names):
            return False
        return not _matches(self.exclude, kind, names)


def _matches(patterns: tuple[str, ...], kind: str, names: tuple[str, ...]) -> bool:
    return any(p == kind or any(fnmatch.fnmatchcase(name, p) for name in names if name) for p in patterns)


def _items(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())
