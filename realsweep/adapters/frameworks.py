"""The frameworks crashsweep sweeps, as values: one record per adapter, in one registry.

Everything the rest of crashsweep needs to know about a framework sits in its `Framework`
record: the pip extra that installs it, the package whose presence says it is installed, its
adapter module and built-in example agent, whether its state lives outside the work folder
(a merging sweep then cannot save its worlds), whether its depth-1 sweep checks determinism
first, the guide page that explains it, and its durability modes if it has any. A new
framework is one adapter module, one agent module and one line in `REGISTRY`; the pyproject
extras and the guide pages are held against the records by tests/realsweep/adapters/
test_frameworks.py.

This module imports no framework (the `package` is looked for, not imported), so the CLI
starts without any of them and names the missing extra in one line.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from crashsweep.realsweep.values import SweepError

ADAPTERS = "crashsweep.realsweep.adapters"


@dataclass(frozen=True, slots=True, kw_only=True)
class Framework:
    """One framework's facts (see the module's docstring); the registry holds one per adapter."""

    name: str
    """What `crashsweep sweep --framework NAME` takes, and the row's label starts with."""
    extra: str
    """The optional dependency group in pyproject.toml: `pip install 'crashsweep[EXTRA]'`."""
    package: str
    """The import name whose presence says the extra is installed (looked for, never imported)."""
    module: str
    """The adapter: crash points, tracker tools and a scripted model for the framework."""
    agent: str
    """The built-in example agent `--framework NAME` sweeps (`python -m AGENT`, or forked from a zygote)."""
    docs_page: str
    """The guide page that explains the adapter, from the checkout's root."""
    state_outside_workdir: bool = False
    """Its state is not all in the work folder (Temporal's history is in its server): a merging
    sweep cannot save and restore its worlds, so its sweeps run every scenario from scratch."""
    checks_determinism: bool = False
    """Its engine replays what it recorded, so a run must take the same path again: its depth-1
    sweep checks determinism first by default."""
    durability: tuple[str, ...] = ()
    """The agent's `--durability` modes, if the framework has a choice of when it writes."""
    default_durability: str | None = None
    """The framework's own default among `durability`."""
    plays: tuple[str, ...] = ()
    """The job options (spec/job.py CALL_KEYS) its built-in agent plays beyond plain calls: the
    OpenAI Agents SDK's parks a call marked `approval` for a scripted person's yes."""

    provides: tuple[str, ...] = ()
    """Top-level modules its extra installs besides `package` (langgraph's brings langchain_core), so
    that a target failing on one of them is told which extra to install (`extra_for`)."""

    def missing(self) -> str | None:
        """None when the package is installed; else the one line that names the extra to install."""
        if importlib.util.find_spec(self.package) is not None:
            return None
        return f"{self.name} is not installed: pip install 'crashsweep[{self.extra}]'"


REGISTRY: tuple[Framework, ...] = (
    Framework(
        name="langgraph",
        extra="langgraph",
        package="langgraph",
        provides=("langchain_core", "langgraph_sdk"),
        module=f"{ADAPTERS}.langgraph",
        agent=f"{ADAPTERS}.langgraph_agent",
        docs_page="docs/guide/frameworks.md",
        durability=("sync", "async", "exit"),
        default_durability="async",
    ),
    Framework(
        name="dbos",
        extra="dbos",
        package="dbos",
        module=f"{ADAPTERS}.dbos",
        agent=f"{ADAPTERS}.dbos_agent",
        docs_page="docs/guide/frameworks.md",
        checks_determinism=True,
    ),
    Framework(
        name="openai-agents",
        extra="openai-agents",
        package="agents",
        module=f"{ADAPTERS}.openai_agents",
        agent=f"{ADAPTERS}.openai_agents_agent",
        docs_page="docs/guide/openai-agents.md",
        plays=("approval",),
    ),
    Framework(
        name="pydantic-ai",
        extra="pydantic-ai",
        package="pydantic_ai",
        module=f"{ADAPTERS}.pydantic_ai",
        agent=f"{ADAPTERS}.pydantic_ai_agent",
        docs_page="docs/guide/pydantic-ai.md",
        checks_determinism=True,
    ),
    Framework(
        name="temporal",
        extra="temporal",
        package="temporalio",
        module=f"{ADAPTERS}.temporal",
        agent=f"{ADAPTERS}.temporal_agent",
        docs_page="docs/guide/temporal.md",
        state_outside_workdir=True,
        checks_determinism=True,
    ),
)
"""Every framework, in the order `--help` and the messages list them."""


def named(name: str) -> Framework:
    """The record of framework `name`; an unknown name is refused in one line (SweepError)."""
    for framework in REGISTRY:
        if framework.name == name:
            return framework
    raise SweepError(f"unknown framework {name!r} (known: {', '.join(f.name for f in REGISTRY)})")


# Views of the registry under the names the facade (crashsweep.realsweep.api) has always offered.
# They are computed from the records, so there is nothing to keep in step by hand.
AGENTS: Mapping[str, str] = MappingProxyType({f.name: f.agent for f in REGISTRY})
"""Framework name -> its built-in agent's module (`api.FRAMEWORKS`; its keys are the `--framework` choices)."""
DURABILITY: tuple[str, ...] = tuple(dict.fromkeys(mode for f in REGISTRY for mode in f.durability))
"""Every `--durability` mode of any framework (`api.DURABILITY`)."""
FROM_SCRATCH: frozenset[str] = frozenset(f.name for f in REGISTRY if f.state_outside_workdir)
"""The frameworks whose sweeps run every scenario from scratch (`api.FROM_SCRATCH_FRAMEWORKS`)."""
REPLAYING: frozenset[str] = frozenset(f.name for f in REGISTRY if f.checks_determinism)
"""The frameworks whose depth-1 sweeps check determinism first (`api.REPLAYING_FRAMEWORKS`)."""


def extra_for(missing_module: str) -> str | None:
    """The line naming the extra that installs module `missing_module`, or None when no extra does.

    For a --target that fails with `No module named ...`: the top-level module is looked up.
    """
    top = missing_module.partition(".")[0]
    for framework in REGISTRY:
        if top == framework.package or top in framework.provides:
            return f"{top} comes with {framework.name}: pip install 'crashsweep[{framework.extra}]'"
    return None
