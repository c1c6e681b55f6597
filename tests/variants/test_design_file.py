"""Design files: read into the same record as the presets, and refused with one line naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.spec.policy import PolicyError
from crashsweep.variants import PRESETS
from crashsweep.variants.design_file import load_design
from crashsweep.variants.presets import Preset

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("preset", list(PRESETS.values()), ids=lambda preset: preset.name)
def test_each_design_file_is_its_preset(preset: Preset) -> None:
    assert load_design(DOCS / "designs" / f"{preset.name}.toml") == preset


def test_design_files_are_exactly_the_presets() -> None:
    assert sorted(path.stem for path in (DOCS / "designs").glob("*.toml")) == sorted(PRESETS)


def test_the_example_reads() -> None:
    example = load_design(DOCS / "my-design.toml")
    assert example.name == "my-design"
    assert example.policy.keyed
    assert example.policy.result_saves == "writes-only"
    assert example.design.name == "my-design"


GOOD = """\
name = "mine"
startup_save = true
reply_save = "never"
result_saves = "whole-turn"
markers = "none"
keys = "none"
lock = "none"
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace('name = "mine"\n', ""), "name: expected a non-empty string"),
        (GOOD + "summary = 3\n", "summary: expected a string"),
        (GOOD.replace('"never"', '"later"'), "reply_save: expected one of"),
        (GOOD + 'ladder = ["person"]\n', "ladder: without markers"),
        (GOOD + "colour = 1\n", "unknown key 'colour'"),
        (GOOD.replace("lock", "# lock"), "lock: missing"),
        ("name = [", "not valid TOML"),
    ],
)
def test_bad_files_are_one_line_naming_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "design.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError) as caught:
        load_design(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read design file"):
        load_design(tmp_path / "absent.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(PolicyError, match="not UTF-8 text"):
        load_design(tmp_path / "bin.toml")


def test_defaults_and_summary(tmp_path: Path) -> None:
    path = tmp_path / "design.toml"
    path.write_text(GOOD, encoding="utf-8")
    preset = load_design(path)
    assert preset.summary == f"the design in {path}"
    assert preset.policy.on_tool_error == "retry"
    assert preset.policy.ladder == ()


def test_the_readme_shows_the_example_as_it_is() -> None:
    """README's "Your own design" block is docs/my-design.toml from its `name` line on, line for line."""
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Your own design", 1)[1]
    block = section.split("```toml\n", 1)[1].split("```", 1)[0]
    example = (DOCS / "my-design.toml").read_text(encoding="utf-8")
    assert example.endswith(block)
    assert block.startswith('name = "my-design"\n')
