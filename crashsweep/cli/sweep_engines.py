"""`--engine local|ray` and `--address` of `sweep` and `conform`: where the real processes run.

The local engine runs them on this machine; the Ray engine (crashsweep.realsweep.engines.ray,
the optional extra crashsweep[ray]) runs them across a Ray cluster, or a local Ray instance
started for the command. Ray missing, or an address where no cluster answers, is refused
before any sweep starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from crashsweep.realsweep import api

F = TypeVar("F", bound=Callable[..., Any])

ENGINE_HELP = (
    "local: the processes run on this machine; ray: as Ray tasks across a cluster (pip install 'crashsweep[ray]')"
)
ADDRESS_HELP = "with --engine ray: the cluster's head (HOST:PORT, ray://HOST:PORT or auto)  [default: a local Ray]"


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


def refuse(engine: str, address: str | None, **others: object) -> None:
    """Refuse, before any work, --address without --engine ray, and options the Ray engine does not take."""
    if address is not None and engine != "ray":
        raise click.UsageError("--address goes with --engine ray")
    if engine == "ray":
        given = [name for name, value in others.items() if value]
        if given:
            raise click.UsageError(f"--engine ray takes no {' or '.join(given)} (they are about this machine's files)")


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
