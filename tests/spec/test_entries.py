"""Tests of crashsweep.spec.entries: what the loop keeps of an approval."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from crashsweep.spec import entries


def test_an_entry_names_the_call_the_version_and_the_number() -> None:
    assert entries.entry("w", 2, 3) == "w@2#3"
    assert entries.parts("w@2#3") == ("w", 2, 3)
    assert entries.parts("x@y@1#4") == ("x@y", 1, 4)  # a call ID may hold "@"


def test_it_imports_with_the_standard_library_alone() -> None:
    """The reference loop runs with `python -S` (no site-packages) and reads entries from here."""
    module = Path(entries.__file__).resolve()
    code = f"import importlib.util as u; s = u.spec_from_file_location('e', {str(module)!r}); u.module_from_spec(s)"
    code += "; s.loader.exec_module(u.module_from_spec(s))"
    subprocess.run([sys.executable, "-S", "-c", code], check=True)
