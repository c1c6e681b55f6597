"""The frameworks' registry: one record per adapter, held against pyproject's extras, the guide and the modules."""

from __future__ import annotations

import ast
import dataclasses
import importlib.metadata
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

from crashsweep.realsweep import api
from crashsweep.realsweep.adapters import frameworks
from crashsweep.realsweep.adapters.frameworks import REGISTRY, Framework, named
from crashsweep.realsweep.values import SweepError
from tests.paths import ROOT

NOT_FRAMEWORKS = {"dev", "ray", "otel", "storage-engines"}
"""The extras that install no framework adapter (tests, Ray, OpenTelemetry, the ALICE table's engines): every
other one needs a record."""


def extras() -> dict[str, list[str]]:
    """pyproject.toml's optional dependency groups: extra -> its requirements."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    groups: dict[str, list[str]] = project["optional-dependencies"]
    return groups


def test_every_record_names_an_extra_of_pyproject_and_every_framework_extra_has_a_record() -> None:
    """The registry and `[project.optional-dependencies]` agree both ways (no extra without its record)."""
    declared = set(extras())
    assert {f.extra for f in REGISTRY} <= declared, {f.extra for f in REGISTRY} - declared
    assert declared - NOT_FRAMEWORKS == {f.extra for f in REGISTRY}


@pytest.mark.parametrize("framework", REGISTRY, ids=lambda f: f.name)
def test_an_installed_package_comes_from_a_distribution_its_extra_installs(framework: Framework) -> None:
    """The import name looked for is one the extra's distributions provide (openai-agents installs `agents`)."""
    if framework.missing() is not None:
        pytest.skip(f"{framework.extra} is not installed")
    wanted = {re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower() for requirement in extras()[framework.extra]}
    providers = {name.lower() for name in importlib.metadata.packages_distributions()[framework.package]}
    assert providers & wanted, (framework.package, providers, wanted)


@pytest.mark.parametrize("framework", REGISTRY, ids=lambda f: f.name)
def test_every_docs_page_adapter_and_agent_exists(framework: Framework) -> None:
    """The guide page is a file of the checkout; the adapter and agent modules are found (not imported)."""
    assert (ROOT / framework.docs_page).is_file(), framework.docs_page
    assert framework.docs_page.startswith("docs/guide/")
    for module in (framework.module, framework.agent):
        assert importlib.util.find_spec(module) is not None, module


@pytest.mark.parametrize("framework", REGISTRY, ids=lambda f: f.name)
def test_state_outside_the_work_folder_is_what_the_adapter_declares(framework: Framework) -> None:
    """A record's `state_outside_workdir` and its adapter's module-level `CRASHSWEEP_FROM_SCRATCH = True` agree.

    Read from the adapter's source, so the framework need not be installed or imported.
    """
    spec = importlib.util.find_spec(framework.module)
    assert spec is not None
    assert spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text())
    declared = any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "CRASHSWEEP_FROM_SCRATCH" for t in node.targets)
        and isinstance(node.value, ast.Constant)
        and node.value.value is True
        for node in tree.body
    )
    assert declared == framework.state_outside_workdir


def test_names_are_unique_and_durability_defaults_are_among_the_modes() -> None:
    """One record per name; a default durability is one of the record's modes, and only with modes."""
    names = [f.name for f in REGISTRY]
    assert len(set(names)) == len(names)
    for framework in REGISTRY:
        if framework.durability:
            assert framework.default_durability in framework.durability
        else:
            assert framework.default_durability is None


def test_a_record_is_a_frozen_slotted_value() -> None:
    """A record cannot be changed in place, nor take attributes beyond its fields."""
    record = named("temporal")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.name = "other"  # type: ignore[misc]
    assert not hasattr(record, "__dict__")


def test_an_unknown_name_is_refused_in_one_line_naming_the_known_ones() -> None:
    """named("ray"): one SweepError line listing every framework in the registry's order."""
    with pytest.raises(SweepError) as refused:
        named("ray")
    assert (
        str(refused.value) == "unknown framework 'ray' (known: langgraph, dbos, openai-agents, pydantic-ai, temporal)"
    )


def test_a_missing_package_is_named_with_its_extra() -> None:
    """A record whose package cannot be found says which extra to install; an installed one says nothing."""
    gone = dataclasses.replace(named("openai-agents"), package="no_such_package_here")
    assert gone.missing() == "openai-agents is not installed: pip install 'crashsweep[openai-agents]'"
    assert dataclasses.replace(gone, package="json").missing() is None


def test_the_facades_old_tables_are_views_of_the_records() -> None:
    """api.FRAMEWORKS, DURABILITY, FROM_SCRATCH_FRAMEWORKS and REPLAYING_FRAMEWORKS, as they always read."""
    assert dict(api.FRAMEWORKS) == {
        "langgraph": "crashsweep.realsweep.adapters.langgraph_agent",
        "dbos": "crashsweep.realsweep.adapters.dbos_agent",
        "openai-agents": "crashsweep.realsweep.adapters.openai_agents_agent",
        "pydantic-ai": "crashsweep.realsweep.adapters.pydantic_ai_agent",
        "temporal": "crashsweep.realsweep.adapters.temporal_agent",
    }
    assert api.DURABILITY == ("sync", "async", "exit")
    assert {"temporal"} == api.FROM_SCRATCH_FRAMEWORKS
    assert {"dbos", "pydantic-ai", "temporal"} == api.REPLAYING_FRAMEWORKS
    assert api.FRAMEWORK_REGISTRY is frameworks.REGISTRY
    assert api.framework("dbos") is named("dbos")


def test_a_missing_module_of_an_extra_names_the_extra() -> None:
    """langchain_core (what `--target my_graph:run` lacks without the langgraph extra) names langgraph's extra."""
    from crashsweep.realsweep.adapters.frameworks import extra_for

    said = "langchain_core comes with langgraph: pip install 'crashsweep[langgraph]'"
    assert extra_for("langchain_core.messages") == said
    assert extra_for("temporalio") == "temporalio comes with temporal: pip install 'crashsweep[temporal]'"
    assert extra_for("numpy") is None
