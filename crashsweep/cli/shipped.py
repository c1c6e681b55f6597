"""The files shipped with crashsweep: example jobs, design files and example programs, by name.

A wheel installs the checkout's examples/*.toml, docs/designs/*.toml, docs/my-design.toml and
docs/examples/*.py under crashsweep/shipped-files/, at the same paths (pyproject.toml's
package-data; in a checkout the folder holds links to them). So outside a checkout `--job` and
`--design` still find them: a value that names no file here is looked up there, either by the
path the docs use (`examples/one-write.toml`) or by name (`one-write`, `dbos`). A value that
names a file here is always that file: a shipped name never hides a user's own file.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal, TypeAlias

import click

import crashsweep

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
        return by_path
    by_name = files(kind).get(value.removesuffix(".toml")) if "/" not in value else None
    return by_name if by_name is not None else given


class ShippedFile(click.Path):
    """A click type for --job/--design: a path, or the name or docs path of a shipped file (`find`).

    Otherwise click.Path(dir_okay=False) to the letter: the same checks and the same messages.
    """

    def __init__(self, kind: Kind) -> None:
        super().__init__(path_type=Path, dir_okay=False)
        self.kind: Kind = kind

    def convert(
        self, value: str | os.PathLike[str], param: click.Parameter | None, ctx: click.Context | None
    ) -> str | bytes | os.PathLike[str]:
        """The path `find` resolves, as click.Path converts it."""
        if isinstance(value, str):
            found = find(value, self.kind)
            value = str(found) if found.is_relative_to(ROOT) else value
        return super().convert(value, param, ctx)
