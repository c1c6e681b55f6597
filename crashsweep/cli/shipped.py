"""The files shipped with crashsweep: example jobs, design files and example programs, by name.

A wheel installs the checkout's examples/*.toml, docs/designs/*.toml, docs/my-design.toml and
docs/examples/*.py under crashsweep/shipped-files/, at the same paths (pyproject.toml's
package-data; in a checkout the folder holds links to them). So outside a checkout `--job` and
`--design` still find them: a value that names no file here is looked up there, either by the
path the docs use (`examples/one-write.toml`) or by name (`one-write`, `dbos`). A value that
names a file here is always that file: a shipped name never hides a user's own file.

A shipped file found so is a `Named` path that keeps the value typed: every command crashsweep
prints to run again names it by that value (`typed`), which works on any machine, and never by
the install path it resolved to.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

import click

import crashsweep
from crashsweep.cli.variant_names import did_you_mean

Kind: TypeAlias = Literal["job", "design"]

ROOT = Path(crashsweep.__file__).resolve().parent / "shipped-files"
"""The shipped files, laid out as in the checkout (examples/, docs/designs/, docs/examples/)."""

_FOLDERS = ("examples", "docs/designs", "docs")
"""Where names are looked up, in order: a design file's name in docs/designs/ is a preset's."""


def files(kind: Kind) -> dict[str, Path]:
    """The shipped files of `kind` by name (the file's stem), in folder order then by name.

    A design file sets `startup_save` (a required field of every design); a job file does not.
    """
    found: dict[str, Path] = {}
    for folder in _FOLDERS:
        for path in sorted((ROOT / folder).glob("*.toml")):
            if path.stem not in found and _kind_of(path) == kind:
                found[path.stem] = path
    return found


def _kind_of(path: Path) -> Kind | None:
    """Whether a shipped TOML file is a job or a design (None: unreadable, which no shipped file is)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return "design" if "startup_save" in data else "job"


if TYPE_CHECKING:
    _Concrete = Path
else:
    _Concrete = type(Path())  # a Path subclass must derive from the platform's concrete class before 3.12


class Named(_Concrete):
    """A shipped file found by its name or docs path: `typed` is the value the user gave.

    A path derived from it (its parent, its resolved path) is of this class too, with `typed` empty.
    """

    typed: str = ""


def named(path: Path, value: str) -> Named:
    """`path` as a `Named` path that remembers `value`."""
    found = Named(path)
    found.typed = value
    return found


def typed(path: Path, *, absolute: bool = False) -> str:
    """How a command printed to run again names `path`: a shipped file by the value typed, else the path.

    `absolute`: a user's own path made absolute, for a command that may run from another folder.
    """
    if isinstance(path, Named) and path.typed:
        return path.typed
    return str(path.resolve()) if absolute else str(path)


def find(value: str, kind: Kind) -> Path:
    """The file `value` names: itself when it exists here, else the shipped file it names, else itself.

    The last case leaves the "cannot read" message to the file's reader, as before.
    """
    given = Path(value)
    if not value or os.path.lexists(given):
        return given
    relative = Path(os.path.normpath(value)).as_posix()
    by_path = ROOT / relative
    if not given.is_absolute() and not relative.startswith("..") and by_path.is_file() and _kind_of(by_path) == kind:
        return named(by_path, value)
    by_name = files(kind).get(value.removesuffix(".toml")) if "/" not in value else None
    return named(by_name, value) if by_name is not None else given


class ShippedFile(click.Path):
    """A click type for --job/--design: a path, or the name or docs path of a shipped file (`find`).

    A name (no folder, no .toml) that is neither a file nor shipped is "no file or shipped job
    named ..." with the closest shipped name; otherwise click.Path(dir_okay=False) to the letter,
    and a missing FILE.toml is left to the file's reader ("cannot read ...").
    """

    def __init__(self, kind: Kind) -> None:
        super().__init__(path_type=Path, dir_okay=False)
        self.kind: Kind = kind

    def convert(
        self, value: str | os.PathLike[str], param: click.Parameter | None, ctx: click.Context | None
    ) -> str | bytes | os.PathLike[str]:
        """The path `find` resolves, as click.Path converts it; a shipped file stays `Named` (`typed`)."""
        if isinstance(value, str):
            found = find(value, self.kind)
            if isinstance(found, Named):
                super().convert(str(found), param, ctx)
                return found
            if value and "/" not in value and not value.endswith(".toml") and not os.path.lexists(found):
                other: Kind = "design" if self.kind == "job" else "job"
                if value in files(other):
                    self.fail(f"{value} is a shipped {other}: use --{other} {value}", param, ctx)
                close = did_you_mean(value, files(self.kind))
                self.fail(f"no file or shipped {self.kind} named {value!r}{close}", param, ctx)
        return super().convert(value, param, ctx)
