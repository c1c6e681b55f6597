"""`crashsweep examples DIR`: the shipped example jobs, design files and programs, copied to a folder.

The docs' commands name these files by their place in a checkout (examples/one-write.toml,
docs/examples/my_loop.py). `--job` and `--design` find the TOML files by those paths or by name
anywhere (crashsweep.cli.shipped), but `sweep --target my_loop:run` imports a module from the
current folder, so an installed crashsweep copies them out, laid out as in the checkout: DIR
then stands for the checkout's top in every docs command. DIR appears whole or not at all
(built beside it, then renamed into place), and an existing non-empty DIR is refused.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from crashsweep.cli import outdir, shipped

RUN_ONE = "cd {docs} && crashsweep sweep --target my_loop:run --check my_loop_check:check --depth 2"


def _check_dir(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    """DIR must be new, or an empty directory (nothing of the user's is replaced), in a place that takes one."""
    target = Path(os.path.abspath(value))
    if target.is_symlink() or (target.exists() and (not target.is_dir() or any(target.iterdir()))):
        raise click.BadParameter(f"{value} exists and is not an empty directory: name a new one")
    try:
        outdir.creatable(target, value)  # e.g. under /proc, where no folder can be made
    except outdir.OutDirError as error:
        raise click.BadParameter(str(error)) from None
    return target


@click.command()
@click.argument("out_dir", metavar="DIR", type=click.Path(path_type=Path), callback=_check_dir)
def examples(out_dir: Path) -> int:
    """Copy the example jobs, design files and programs into DIR, laid out as in a checkout."""
    copied = copy(out_dir)
    click.echo(f"copied {copied} files into {out_dir} (examples/, docs/designs/, docs/examples/, docs/my-design.toml)")
    click.echo(f"e.g. {RUN_ONE.format(docs=out_dir / 'docs' / 'examples')}")
    return 0


def copy(target: Path) -> int:
    """Copy the shipped files into `target` (new or empty) in one rename; the number of files copied."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        count = 0
        for path in shipped_files():
            into = staging / path.relative_to(shipped.ROOT)
            into.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, into)
            count += 1
        os.chmod(staging, 0o777 & ~outdir.umask())  # mkdtemp's 0700 would keep DIR from others
        if target.exists():
            target.rmdir()  # empty, as checked: the rename needs the name free
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return count


def shipped_files() -> list[Path]:
    """Every shipped file, sorted; in a checkout the folder's links are followed (Path.rglob would not)."""
    found = []
    for folder, subfolders, names in os.walk(shipped.ROOT, followlinks=True):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        found += [Path(folder) / name for name in names if name.endswith((".toml", ".py"))]
    return sorted(found)
