"""Run a `module:function` entry point as one process of a sweep.

`python -m crashsweep.realsweep.probe.entry mod:func [ARG...]`: the function is called with no
arguments (further arguments become its sys.argv[1:]), after the hooks of `--points auto` are
installed when the sweep asks for them (auto.py); the process exits 0 when it returns (or the
number it returns), and 1 with the traceback on stderr when it raises. Under a sweep the
function's crash points kill the process (crashsweep.realsweep.probe.crashpoint); it finds its
work directory as the current directory (and in $CRASHSWEEP_WORKDIR) and the tracker at
$CRASHSWEEP_TRACKER_URL.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable

_ENTRY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def parse_entry_point(spec: str) -> tuple[str, str]:
    """Split "module:function"; ValueError when it is not of that form."""
    if not _ENTRY.match(spec):
        raise ValueError(f"{spec!r}: expected module:function, e.g. my_loop:run")
    module, function = spec.split(":")
    return module, function


def load(spec: str) -> Callable[..., object]:
    """The callable named by "module:function"; ValueError naming what is missing."""
    module_name, attribute = parse_entry_point(spec)
    try:
        target: object = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"{spec}: cannot import {module_name!r}: {error}") from None
    except Exception as error:  # the module itself fails as it loads (a syntax error, its top level raises)
        raise ValueError(f"{spec}: cannot import {module_name!r}: {type(error).__name__}: {error}") from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"{spec}: {module_name!r} has no {attribute!r}") from None
    if not callable(target):
        raise ValueError(f"{spec}: {attribute!r} is not callable")
    return target


def main(argv: list[str] | None = None) -> int:
    """Call the entry point named by the one argument."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m crashsweep.realsweep.probe.entry module:function [ARG...]", file=sys.stderr)
        return 2
    try:
        function = load(args[0])
    except ValueError as error:
        print(f"crashsweep.realsweep.probe.entry: {error}", file=sys.stderr)
        return 2
    sys.argv = [function.__module__, *args[1:]]
    from crashsweep.realsweep.probe import auto
    from crashsweep.realsweep.probe.crashpoint import REFUSED_STATUS, SweepRefused

    auto.install(function)
    try:
        result = function()
    except SweepRefused as refused:  # the program cannot be swept this way: the sweep stops with its words
        print(refused, file=sys.stderr)
        return REFUSED_STATUS
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
