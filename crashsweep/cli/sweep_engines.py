"""How and where `sweep` and `conform` run the real processes: their shared options, and the engine.

`process_options` is the group both commands take: --workers, --spawn, --dedup/--no-dedup,
--kill, --engine and --address. The local engine runs the processes on this machine; the Ray
engine (crashsweep.realsweep.engines.ray, the optional extra crashsweep[ray]) runs them across
a Ray cluster, or a local Ray instance started for the command. Ray missing, or an address
where no cluster answers, is refused before any sweep starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from crashsweep.cli import limits
from crashsweep.cli.options import group
from crashsweep.realsweep import api

F = TypeVar("F", bound=Callable[..., Any])

ENGINE_HELP = (
    "local: the processes run on this machine; ray: as Ray tasks across a cluster (pip install 'crashsweep[ray]')"
)
ADDRESS_HELP = "with --engine ray: the cluster's head (HOST:PORT, ray://HOST:PORT or auto)  [default: a local Ray]"
WORKERS_HELP = "scenarios run at once  [default: the core count; twice it where state lives in a server: Temporal]"
SPAWN_HELP = "fork: Python entry points are forked from a warm zygote; exec: a new interpreter per process"
DEDUP_HELP = "run once per distinct world (files and tracker) and count scenarios by paths; --no-dedup: run every one"
KILL_HELP = "with dedup: kill a process at every point for real instead of taking snapshots of one run"

ADDRESS_WITHOUT_RAY = "--address goes with --engine ray"
RAY_TAKES_NO = "--engine ray takes no {} (they are about this machine's files)"
"""The engine's refusals, with the options the Ray engine does not take in the braces."""


def engine_options(command: F) -> F:
    """The --engine and --address options."""
    command = click.option("--address", metavar="ADDR", help=ADDRESS_HELP)(command)
    return click.option(
        "--engine",
        "engine_name",
        type=click.Choice(("local", "ray")),
        default="local",
        show_default=True,
        help=ENGINE_HELP,
    )(command)


def process_options(command: F) -> F:
    """--workers, --spawn, --dedup/--no-dedup, --kill, --engine and --address: how and where processes run."""
    return group(
        click.option("--workers", type=limits.workers(), help=WORKERS_HELP),
        click.option(
            "--spawn", type=click.Choice(("fork", "exec")), default="fork", show_default=True, help=SPAWN_HELP
        ),
        click.option("--dedup/--no-dedup", default=True, show_default=True, help=DEDUP_HELP),
        click.option("--kill", is_flag=True, help=KILL_HELP),
        engine_options,
    )(command)


def refuse(engine: str, address: str | None, **others: object) -> None:
    """Refuse, before any work, --address without --engine ray, and options the Ray engine does not take."""
    if address is not None and engine != "ray":
        raise click.UsageError(ADDRESS_WITHOUT_RAY)
    if engine == "ray":
        given = [name for name, value in others.items() if value]
        if given:
            raise click.UsageError(RAY_TAKES_NO.format(" or ".join(given)))


@contextmanager
def opened(engine: str, address: str | None, workers: int | None) -> Iterator[api.Engine | None]:
    """The engine chosen (None: the local one), connected or started; stopped at the end.

    SweepError (Ray missing, no cluster at the address) comes before any sweep starts.
    """
    if engine == "local":
        yield None
        return
    with api.ray_engine(address, workers) as ray_engine:
        yield ray_engine
