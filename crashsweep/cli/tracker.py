"""`crashsweep tracker serve`: the tracker service the real sweep writes to, in this process.

One SQLite database per space under --root (by default a temporary folder, removed when the
service stops), served over HTTP until Ctrl-C or SIGTERM (crashsweep.realsweep.tracker).
The service has no authentication: it listens on a loopback address (this machine only)
unless `--public` is given, and then says on stderr that anyone who reaches it can write.
Exit status: 0 once stopped, 2 for a root or an address it cannot use.
"""

from __future__ import annotations

import ipaddress
import shlex
from pathlib import Path

import click

from crashsweep.cli.sweep_modes import fail
from crashsweep.realsweep import api


def loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only: localhost, or a loopback address (127.0.0.0/8, ::1).

    A name other than localhost is not resolved: what it names can change, so it counts as public;
    "" and 0.0.0.0 (every interface) are not loopback.
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, public: bool, port: int) -> None:
    """Refuse an address beyond this machine without --public (UsageError); with --public, warn on stderr."""
    if public:
        why = "anyone who reaches it can read and change every space"
        warning = f"--public: the tracker at {host}:{port} has no authentication: {why}"
        click.echo(f"crashsweep: warning: {warning}", err=True)
    elif not loopback(host):
        raise click.UsageError(
            f"--host {shlex.quote(host)} is reachable from other machines and the tracker has no authentication: "
            "give --public to serve it anyway, or --host 127.0.0.1"
        )


TRACKERS = ("keyed", "keyless")


def tracker_kind(given: str | None, old: str | None) -> str:
    """--tracker's value (keyed by default); the deprecated --mode still works, with a one-line warning."""
    if old is None:
        return given or "keyed"
    if given is not None:
        raise click.UsageError("give --tracker only (--mode is its former name)")
    click.echo(f"crashsweep: warning: --mode is deprecated: give --tracker {old}", err=True)
    return old


@click.group()
def tracker() -> None:
    """The tracker service the real sweep writes to."""


@tracker.command()
@click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    help="keep the databases in this folder  [default: a temporary folder, removed when the service stops]",
)
@click.option(
    "--tracker",
    "mode",
    type=click.Choice(TRACKERS),
    help="what the tracker offers, as elsewhere  [default: keyed]",
)
@click.option("--mode", "old_mode", type=click.Choice(TRACKERS), hidden=True, help="--tracker's former name")
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="the address to listen on; beyond loopback, with --public"
)
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True)
@click.option(
    "--public",
    is_flag=True,
    help="listen on a --host other machines reach (0.0.0.0: every interface); the tracker has no authentication",
)
@click.option("--verbose", is_flag=True, help="log every request on stderr")
def serve(
    root: Path | None, mode: str | None, old_mode: str | None, host: str, port: int, public: bool, verbose: bool
) -> int:
    """Serve the tracker (one SQLite database per space under --root) until Ctrl-C or SIGTERM."""
    import shutil
    import tempfile

    mode = tracker_kind(mode, old_mode)
    check_host(host, public, port)
    temporary = root is None
    if root is None:
        root = Path(tempfile.mkdtemp(prefix="crashsweep-tracker-"))
    try:
        server = api.tracker_server(root, mode, host, port, quiet=not verbose)  # the port first, then the root
    except OSError as error:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
        if error.filename is not None:
            return fail(f"error: cannot use --root {root}: {error.strerror or error}", 2)
        return fail(f"error: cannot serve on {host}:{port}: {error.strerror or error}", 2)
    note = " (temporary: removed when stopped; --root DIR keeps the databases)" if temporary else ""
    click.echo(
        f"tracker ({mode}) serving {root}{note} at {server.url} (spaces at {server.url}/spaces/NAME); Ctrl-C stops"
    )
    try:
        api.serve_tracker(server)
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
    return 0
