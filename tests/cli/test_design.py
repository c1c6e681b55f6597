"""Tests of crashsweep.cli.design, and of every design and preset used by name (issue 24, items 15 and 25)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from crashsweep.cli import shipped
from crashsweep.cli.design import TEMPLATE, known
from crashsweep.cli.main import cli, main
from crashsweep.spec.policy import CHOICES, DURABILITY
from crashsweep.spec.retries import SCOPES, TRIGGERS, UNBOUNDED
from crashsweep.variants import PRESETS, is_preset, names
from crashsweep.variants.design_file import load_design
from crashsweep.variants.presets import Preset
from tests.paths import ROOT


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("name", list(PRESETS))
def test_show_reads_back_to_the_same_preset(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    """`design show NAME > FILE`, then `--design FILE`: the very same name, summary and policy."""
    status, out, err = _run(capsys, "design", "show", name)
    assert (status, err) == (0, "")
    (tmp_path / "shown.toml").write_text(out)
    assert load_design(tmp_path / "shown.toml") == PRESETS[name]


@pytest.mark.parametrize("name", list(PRESETS))
def test_show_agrees_with_the_docs_design_files(capsys: pytest.CaptureFixture[str], name: str) -> None:
    """Apart from the comments, what `show` prints is docs/designs/NAME.toml line for line."""
    _, out, _ = _run(capsys, "design", "show", name)
    docs = (ROOT / "docs" / "designs" / f"{name}.toml").read_text()

    def fields(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("#")]

    assert fields(out) == fields(docs)
    assert out.splitlines()[0].startswith(f"# {name}: a {'framework preset' if is_preset(name) else 'built-in design'}")


def test_show_prints_a_shipped_design_file_as_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "design", "show", "agent-loop-lease")
    assert status == 0
    assert out == (ROOT / "examples" / "agent-loop-lease.toml").read_text()


def test_show_of_an_unknown_name_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "design", "show", "nope")
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert "unknown design 'nope' (known: save-once-per-turn," in err
    assert "dbos, agent-loop-lease" in err


def test_new_prints_a_template_that_reads_back(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = _run(capsys, "design", "new", "mine")
    assert status == 0
    (tmp_path / "mine.toml").write_text(out)
    preset = load_design(tmp_path / "mine.toml")
    assert preset.name == "mine"
    assert out.replace('"mine"', '"my-design"', 1).splitlines()[1:] == TEMPLATE.splitlines()[1:]
    status, out, _ = _run(capsys, "design", "new")
    assert (status, tomllib.loads(out)["name"]) == (0, "my-design")


def test_the_template_names_every_allowed_value() -> None:
    """Each field's line (commented or not) names each of its values: the template keeps up with spec/policy.py."""
    lines = {line.lstrip("# ").split(" ", 1)[0]: line for line in TEMPLATE.splitlines() if " = " in line}
    assert set(lines) == {"name", "summary", *CHOICES, *DURABILITY, "retries"}
    for field, values in {**CHOICES, **DURABILITY}.items():
        for value in values:
            shown = str(value).lower() if isinstance(value, bool) else f'"{value}"'
            assert shown in lines[field] or field == "startup_save", (field, value)
    retries = TEMPLATE[TEMPLATE.index("# Retry layers") :]
    for value in (*SCOPES, *TRIGGERS, UNBOUNDED):
        assert f'"{value}"' in retries, value


def test_new_refuses_a_name_no_table_can_show(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "design", "new", "a\nb")
    assert (status, out) == (2, "")
    assert "control character" in err


# Every preset by name (item 15): --variant, --variants and the variants command.


@pytest.mark.parametrize("name", ["langgraph-sync", "dbos"])
def test_a_framework_preset_explores_by_name_as_its_design_file(capsys: pytest.CaptureFixture[str], name: str) -> None:
    """`--variant NAME` gives the row `--design docs/designs/NAME.toml` gives."""
    by_name = _run(capsys, "explore", "--variant", name, "--depth", "1", "--format", "json")
    by_file = _run(capsys, "explore", "--design", str(ROOT / "docs" / "designs" / f"{name}.toml"), "--depth", "1")
    by_file_json = _run(
        capsys,
        "explore",
        "--design",
        str(ROOT / "docs" / "designs" / f"{name}.toml"),
        "--depth",
        "1",
        "--format",
        "json",
    )
    assert by_name[0] == by_file[0] == 1
    assert by_name[1] == by_file_json[1]
    assert by_file[1].startswith(f"{name}  (job triage, tracker keyed, depth 1)")


def test_compare_takes_framework_presets_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "compare", "--variants", "dbos,langgraph-exit@keyless", "--depth", "1")
    assert (status, err) == (1, "")
    assert " dbos (keyed) " in out
    assert " langgraph-exit (keyless) " in out


def test_variants_lists_the_presets_marked_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "variants")
    assert status == 0
    lines = out.splitlines()[: len(names())]
    assert [line.split()[0] for line in lines] == list(names())
    first = ["save-once-per-turn", "--variant", "saves once per turn; no reply save, keys or markers"]
    assert lines[0].split(None, 2) == first
    assert lines[-1].split(None, 2)[2].startswith("(framework preset) DBOS: ")
    assert sum("(framework preset)" in line for line in lines) == 4


# Shipped files by name (item 15): --job and --design outside a checkout.


def test_jobs_and_designs_are_found_by_name_and_by_docs_path_from_any_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for job in ("one-write", "one-write.toml", "examples/one-write.toml"):
        for chosen in (("--variant", "dbos"), ("--design", "dbos"), ("--design", "docs/designs/dbos.toml")):
            status, out, err = _run(capsys, "explore", *chosen, "--job", job, "--depth", "1")
            assert (status, err) == (1, ""), (job, chosen)
            assert out.startswith("dbos  (job one-write, tracker keyed, depth 1)")
    status, out, _ = _run(capsys, "compare", "--design", "my-design", "--design", "agent-loop-lease", "--depth", "1")
    assert status == 0
    assert " my-design " in out
    assert " agent-loop-lease " in out


def test_a_file_here_wins_over_a_shipped_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "one-write").write_text(
        'name = "mine"\nturns = [["create_a"]]\n[calls]\ncreate_a = { tool = "t", writes = true }\n'
    )
    status, out, _ = _run(capsys, "explore", "--variant", "dbos", "--job", "one-write", "--depth", "1")
    assert status == 1
    assert out.startswith("dbos  (job mine, ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--variant", "dbos", "--job", "dbos"], "dbos is a shipped design: use --design dbos"),
        (["--design", "one-write"], "one-write is a shipped job: use --job one-write"),
        (["--variant", "dbos", "--job", "no-such-job"], "no file or shipped job named 'no-such-job'"),
        (["--variant", "dbos", "--job", "../examples/one-write.toml"], "cannot read job file"),
    ],
)
def test_a_name_of_the_other_kind_or_of_nothing_says_which_option_or_that_nothing_has_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = _run(capsys, "explore", *args, "--depth", "1")
    assert (status, out) == (2, "")
    assert message in err


def test_every_shipped_file_is_found_by_its_name() -> None:
    """Each example job and design file of the checkout, by its stem; none hides another."""
    jobs, designs = shipped.files("job"), shipped.files("design")
    assert set(jobs) | set(designs) == {path.stem for path in (ROOT / "examples").glob("*.toml")} | set(PRESETS) | {
        "my-design"
    }
    assert not set(jobs) & set(designs)
    assert all(isinstance(load_design(path), Preset) for path in designs.values())


def test_list_and_variants_name_every_design_and_job_with_its_option() -> None:
    """One listing: the built-in designs (--variant), the shipped design files (--design), the jobs (--job)."""
    listed = CliRunner().invoke(cli, ["design", "list"]).output
    assert CliRunner().invoke(cli, ["variants"]).output == listed
    rows = {line.split()[0]: line.split()[1] for line in listed.splitlines()}
    assert set(known()) | set(shipped.files("job")) == set(rows)
    assert (rows["dbos"], rows["keys-run-retry"], rows["one-write"]) == ("--variant", "--design", "--job")


def test_show_suggests_a_close_name() -> None:
    done = CliRunner().invoke(cli, ["design", "show", "dbo"])
    assert done.exit_code == 2
    assert "did you mean 'dbos'?" in done.output
