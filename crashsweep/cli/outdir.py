"""An output directory (`--out DIR`) that appears whole or not at all.

`check` runs as the option is parsed, before any search: it refuses a DIR that cannot be made
(a regular file or device in its place or above it, a place where nothing can be created, such
as /proc) and a non-empty DIR that crashsweep did not write. `publish` then builds the files in
a hidden sibling directory (`.DIR.XXXX.tmp`) and renames it into place in one step; a DIR that
an earlier run wrote is replaced whole, so no stale file of that run survives beside the new
ones. On any failure, Ctrl-C included, the sibling is removed and DIR is left as it was, and the
`Interrupted` message says so. While the rename runs, SIGINT is held back so that it cannot
split the swap in two.

A directory counts as crashsweep's when it holds an index.html with crashsweep's footer and
nothing but the kinds of files crashsweep writes there.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from crashsweep.cli import runs

MADE_BY = "<footer>Made by crashsweep."
"""Every index.html crashsweep writes has this footer (crashsweep.reports.html.page)."""
OURS = re.compile(
    r"^(index\.html|test_\w+\.py|[\w.-]+\.(trace\.txt|trace\.json|(graph|sequence)\.(dot|svg))"
    r"|frontier\.(json|svg)|cheapest\.toml)$"
)
"""The names of the files crashsweep writes into an output directory (a report, or the frontier's)."""


class OutDirError(ValueError):
    """An --out directory that cannot be used; the message is one line naming why."""


def _nearest_existing(path: Path) -> Path:
    """`path` itself or its closest ancestor that exists."""
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path


def made_by_crashsweep(directory: Path) -> bool:
    """Whether `directory` holds only what a crashsweep report holds, index.html included."""
    entries = list(directory.iterdir())
    if not all(entry.is_file() and not entry.is_symlink() and OURS.match(entry.name) for entry in entries):
        return False
    index = directory / "index.html"
    try:
        with index.open("rb") as file:  # the footer ends the page, however large its pictures
            file.seek(max(0, index.stat().st_size - 65_536))
            return MADE_BY.encode("utf-8") in file.read()
    except OSError:
        return False


def check(out_dir: Path) -> Path:
    """The absolute DIR to publish to; OutDirError if it cannot be used (nothing is left on disk)."""
    target = Path(os.path.abspath(out_dir))
    if target.is_symlink():
        raise OutDirError(f"{out_dir} is a symbolic link: name the directory itself")
    if target.exists():
        if not target.is_dir():
            raise OutDirError(f"{out_dir} exists and is not a directory")
        if Path.cwd() == target or target in Path.cwd().parents:
            raise OutDirError(f"{out_dir} is the current directory or holds it: name a directory to create")
        try:
            foreign = any(target.iterdir()) and not made_by_crashsweep(target)
        except OSError as error:
            raise OutDirError(f"{out_dir}: cannot read it: {error.strerror or error}") from None
        if foreign:
            raise OutDirError(f"{out_dir} is not empty and crashsweep did not write it: choose another --out")
    creatable(target, out_dir)
    return target


def creatable(target: Path, shown: Path) -> None:
    """Refuse (OutDirError naming `shown`) an absolute `target` whose hidden sibling cannot be made.

    Tried for real, since only creating tells (/proc takes no new folder, whatever its mode
    says); the folder made is removed at once. `crashsweep examples DIR` checks its DIR so too.
    """
    existing = _nearest_existing(target.parent)
    if not existing.is_dir():
        raise OutDirError(f"{shown}: {existing} is not a directory")
    try:
        os.rmdir(tempfile.mkdtemp(dir=existing, prefix=f".{target.name}.", suffix=".tmp"))
    except OSError as error:
        raise OutDirError(f"{shown}: cannot create anything in {existing}: {error.strerror or error}") from None


@contextmanager
def _sigint_held() -> Iterator[None]:
    """Hold Ctrl-C back until the block is done, then let it act as it would have.

    Python runs its signal handlers in the main thread whichever thread the signal reached, so
    masking the signal in one thread does not hold it back once any other thread runs (a pool,
    a library's background thread): the handler is swapped for one that only notes the signal.
    Elsewhere than the main thread no handler of Python's can run, and nothing is held.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: noted.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if noted:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt


def _swap(staging: Path, target: Path) -> None:
    """Rename `staging` to `target`; an old `target` is set aside first and removed after."""
    if not target.exists() or not any(target.iterdir()):
        os.replace(staging, target)  # over an empty directory, or into a free name
        return
    aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old.tmp"))
    os.replace(target, aside / "old")
    try:
        os.replace(staging, target)
    except BaseException:
        os.replace(aside / "old", target)
        raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def publish(
    target: Path, files: Iterable[tuple[str, str]], *, wrote: Callable[[Path], None] | None = None
) -> list[Path]:
    """Write `files` (name, content) as the directory `target`, whole or not at all; the paths written.

    `files` may be lazy: each is produced and written in turn into the hidden sibling. Ctrl-C
    becomes `runs.Interrupted` with a message that says what is on disk.
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    except OSError as error:
        raise OutDirError(f"cannot write {target}: {error.strerror or error}") from None
    names: list[str] = []
    committed = False
    try:
        for name, content in files:
            _write(staging / name, content)
            names.append(name)
        os.chmod(staging, 0o777 & ~umask())
        with _sigint_held():
            if target.exists() and any(target.iterdir()) and not made_by_crashsweep(target):
                raise OutDirError(f"{target} was filled by something else meanwhile; nothing was written")
            _swap(staging, target)
            committed = True
    except KeyboardInterrupt:
        shutil.rmtree(staging, ignore_errors=True)
        what = "it was written whole" if committed else "it was left as it was"
        raise runs.Interrupted(f"interrupted while writing {target}; {what}") from None
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutDirError(f"cannot write {target}: {error.strerror or error}; it was left as it was") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    written = [target / name for name in names]
    try:
        for path in written:
            if wrote is not None:
                wrote(path)  # a closed pipe (BrokenPipeError) goes on to the caller as it is
    except KeyboardInterrupt:
        raise runs.Interrupted(f"interrupted; {target} was written whole") from None
    return written


def _write(path: Path, content: str) -> None:
    """Write one file into the hidden sibling (no temp file needed: the directory is not yet visible)."""
    with path.open("x", encoding="utf-8", newline="\n") as file:
        file.write(content)
        file.flush()
        os.fsync(file.fileno())
    os.chmod(path, 0o666 & ~umask())


def umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
