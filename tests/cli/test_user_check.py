"""--check module:function: refused or made from the module's source, imported only where the source cannot say."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashsweep.cli.user_check import user_check
from crashsweep.realsweep.api import load_entry_point
from crashsweep.realsweep.process.forked_check import ForkedCheck

MODULES: dict[str, str] = {
    "uc_plain": "import uc_marker\n\ndef check(scenario):\n    return None\n",
    "uc_assigned": "import uc_marker\nfrom functools import partial\ncheck = partial(print)\n",
    "uc_in_blocks": "import uc_marker\ntry:\n    from json import dumps as check\nexcept ImportError:\n    pass\n",
    "uc_global": "import uc_marker\n\ndef make():\n    global check\n    check = print\n\nmake()\n",
    "uc_class": "import uc_marker\n\nclass check:\n    pass\n",
    "uc_absent": "import uc_marker\n\ndef run():\n    check = 1\n    return check\n",
    "uc_star": "from json import *\n\ncheck_of = 1\n",
    "uc_getattr": "def __getattr__(name):\n    return print\n",
    "uc_setattr": "import sys\nsetattr(sys.modules[__name__], 'check', print)\n",
    "uc_broken": "def check(:\n",
}


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The modules above in `tmp_path`, on sys.path, and a marker each imports: forgotten after the test."""
    for name, text in MODULES.items():
        (tmp_path / f"{name}.py").write_text(text)
    (tmp_path / "uc_marker.py").write_text("")
    (tmp_path / "uc_pkg").mkdir()
    (tmp_path / "uc_pkg" / "__init__.py").write_text("")
    (tmp_path / "uc_pkg" / "check.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [*MODULES, "uc_marker", "uc_pkg", "uc_pkg.check"]:
        sys.modules.pop(name, None)


@pytest.mark.parametrize("module", ["uc_plain", "uc_assigned", "uc_in_blocks", "uc_global", "uc_class"])
def test_a_check_its_source_binds_is_forked_and_its_module_not_imported(modules: Path, module: str) -> None:
    assert user_check(f"{module}:check") == ForkedCheck(f"{module}:check")
    assert module not in sys.modules
    assert "uc_marker" not in sys.modules


def _loads_say(spec: str) -> str:
    """What importing the check says of `spec` (the words a refusal keeps)."""
    with pytest.raises(ValueError, match=r".") as said:
        load_entry_point(spec)
    return str(said.value)


@pytest.mark.parametrize(
    "spec", ["uc_absent:check", "uc_plain:nothing", "uc_plain:nothing.deeper", "no_such_uc_module:check"]
)
def test_a_plainly_missing_module_or_name_is_refused_without_importing_in_loads_words(modules: Path, spec: str) -> None:
    with pytest.raises(ValueError, match=r".") as refused:
        user_check(spec)
    assert "uc_marker" not in sys.modules
    assert str(refused.value) == _loads_say(spec)


@pytest.mark.parametrize("spec", ["uc_star:check", "uc_getattr:check", "uc_setattr:check"])
def test_a_source_that_cannot_say_is_imported_as_before(modules: Path, spec: str) -> None:
    """`import *`, a module __getattr__, setattr by a string: the check is loaded here, the function itself."""
    if spec.startswith("uc_star"):
        with pytest.raises(ValueError, match=r".") as refused:
            user_check(spec)
        assert str(refused.value) == "uc_star:check: 'uc_star' has no 'check'"
        return
    made: object = user_check(spec)
    assert made is print


@pytest.mark.parametrize("spec", ["uc_broken:check", "uc_pkg:check", "no_such_uc_pkg.sub:check", "uc_plain.sub:check"])
def test_errors_the_source_cannot_settle_are_loads_own(modules: Path, spec: str) -> None:
    """A syntax error, a package's submodule, a missing or non-package parent: imported, and said as load says it."""
    with pytest.raises(ValueError, match=r".") as refused:
        user_check(spec)
    sys.modules.pop(spec.partition(":")[0], None)
    assert str(refused.value) == _loads_say(spec)


def test_a_malformed_spec_is_refused_as_the_entry_points_are(modules: Path) -> None:
    with pytest.raises(ValueError, match="expected module:function"):
        user_check("nothing")
