"""The Ray engine: a sweep's processes run as Ray actor tasks across a cluster; its graph stays here.

`RayEngine` connects to a running Ray cluster (`address`) or starts a small local instance
(no dashboard, a small object store) and stops it at the end. For each sweep it hands the
engine's actors (`Host`, one per CPU the sweep may use, spread over the cluster's nodes) the
sweep's target, check, options and nemesis. Each actor runs the same `Runner` as the local
engine (runner.runner): its own tracker service process and zygote on its node, in a
temporary folder of its own, removed when the sweep ends. So every node has its own tracker
services, and no process ever reaches a service of another node.

The units of work are those of the local engine (local.py): a whole scenario (the sweep of
every scenario), or one unit from a saved world (process/units.py; the merging sweep: a process, which
may suffer faults, or a key-expiry's copy of the world with every key forgotten). A saved world
travels as a tar archive of its folder (files and the tracker space's SQLite copy): a leg
returns the archives of the worlds it claimed, the driver keeps each in Ray's object store
once (`ray.put`) and passes the reference to the processes that start from it. The actor's
side is host.py. A leg claims
a world unless the graph held its digest when the leg was sent; two legs that find the same
new world at once both ship it, and the driver keeps the first. Results are the local
engine's, because the graph, its counting and its ordering are the same code (dedup/graph.py).
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator, Set
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from crashsweep.realsweep import world as worlds
from crashsweep.realsweep.engines.host import Host, pack
from crashsweep.realsweep.faults.nemesis import Fault, Nemesis
from crashsweep.realsweep.values import Check, Crash, Leg, ScenarioResult, SweepError, SweepOptions, Target, Unit

INSTALL = "pip install 'crashsweep[ray]'"
OBJECT_STORE = 80 * 1024 * 1024
"""Bytes of object store for a local instance: worlds are kilobytes; Ray's floor is 75 MiB."""
CONNECT_TIMEOUT = 3.0
AUTH_HINT = " (a cluster started by `ray start` wants its token: RAY_AUTH_MODE=token, ~/.ray/auth_token)"


LOOPBACK = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch (read when ray is imported) that, set to 0, keeps a node on the loopback address, as
Ray does on macOS and Windows; otherwise even a local instance talks to the machine's own network
address. Set for a local instance only: a node of a real cluster must be reachable from the others."""


def load_ray(local: bool = False) -> ModuleType:
    """The ray module, or SweepError naming the extra to install; `local`: keep a new instance on loopback."""
    if local and "ray" not in sys.modules:
        os.environ.setdefault(LOOPBACK, "0")
    try:
        import ray
    except ImportError:
        raise SweepError(f"--engine ray needs Ray, which is not installed: {INSTALL}") from None
    module: ModuleType = ray  # Ray is not analysed (pyproject.toml): the module is a value here
    return module


def check_address(address: str) -> None:
    """Refuse an address no Ray cluster answers on (no TCP connection within a few seconds), before any work."""
    if address == "auto":
        return
    where = address.removeprefix("ray://")
    host, _, port = where.rpartition(":")
    if not host or not port.isdigit():
        raise SweepError(f"--address {address}: expected HOST:PORT (the head node's GCS), ray://HOST:PORT or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as error:
        raise SweepError(f"--address {address}: no Ray cluster answers there ({error.strerror or error})") from None


class RayEngine:
    """An engine (values.Engine) on Ray; a context manager that connects, or starts a local instance."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self.ray = load_ray(local=address is None)
        if address is not None:
            check_address(address)
        self.address, self.requested = address, workers
        self.hosts: list[Any] = []
        self.owned = False

    def __enter__(self) -> RayEngine:
        """Connect to the cluster at the address, or start a local instance ("local": never one found running).

        A process already connected (it called ray.init) keeps its connection, and it is not closed at the end.
        """
        self.owned = not self.ray.is_initialized()
        if not self.owned:
            return self
        quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": "error"}
        try:
            if self.address is None:
                cpus = self.requested or os.cpu_count() or 1
                self.ray.init(
                    address="local", num_cpus=cpus, include_dashboard=False, object_store_memory=OBJECT_STORE, **quiet
                )
            else:
                self.ray.init(address=self.address, **quiet)
        except Exception as error:  # Ray's own (ConnectionError, RuntimeError, a client extra missing): one line
            where = self.address or "a new local instance"
            hint = "" if self.address is None or os.environ.get("RAY_AUTH_MODE") else AUTH_HINT
            raise SweepError(f"cannot reach Ray at {where}: {_first_line(error)}{hint}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the actors; disconnect (and stop a local instance this engine started)."""
        for host in self.hosts:
            self.ray.kill(host)
        self.hosts = []
        if self.owned:
            self.ray.shutdown()

    def _hosts(self) -> list[Any]:
        """The actors, started on first use and kept for every sweep of this engine."""
        if not self.hosts:
            cpus = int(self.ray.cluster_resources().get("CPU", 1))
            count = max(1, min(self.requested or cpus, cpus))
            remote = self.ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(Host)
            self.hosts = [remote.remote() for _ in range(count)]
        return self.hosts

    @contextmanager
    def workers(
        self, target: Target, check: Check, options: SweepOptions, nemesis: Nemesis | None
    ) -> Iterator[RayWorkers]:
        """The engine's actors, each set up for this sweep (its own runner and tracker service)."""
        sweep = (target, check, replace(options, engine=None, root=None, keep=False), nemesis)
        try:
            setup = self.ray.cloudpickle.dumps(sweep)
        except Exception as error:  # a check or state key that cannot travel (a lock, an open file, ...)
            raise SweepError(f"cannot send the sweep to Ray: {type(error).__name__}: {_first_line(error)}") from None
        hosts = self._hosts()
        begun = [host.begin.remote(setup, [os.getcwd()]) for host in hosts]
        try:
            _get(self.ray, begun)
            workers = RayWorkers(self.ray, hosts)
            yield workers
        finally:
            _get(self.ray, [host.end.remote() for host in hosts])


class RayWorkers:
    """Units of work (values.Workers) sent to the actor with the fewest in flight; worlds as archives."""

    def __init__(self, ray: ModuleType, hosts: list[Any]) -> None:
        self.ray, self.hosts = ray, hosts
        self.load = [0] * len(hosts)
        self.count = 0
        self.refs: dict[int, Any] = {}
        self.flying: dict[Any, Future[Any]] = {}
        self.lock = threading.Lock()
        self.stopped = False

    def empty(self) -> bytes:
        with tempfile.TemporaryDirectory(prefix="crashsweep-") as folder:
            (Path(folder) / worlds.FILES).mkdir()
            return pack(Path(folder))

    def leg(self, unit: Unit[bytes], known: Set[str]) -> Future[Leg[bytes]]:
        world = self.refs.get(id(unit.world))
        if world is None:
            world = self.refs[id(unit.world)] = self.ray.put(unit.world)
        shipped = replace(unit, world=b"")
        return self._call("leg", shipped, world, frozenset(known))

    def scenario(self, crashes: tuple[Crash, ...], fault: Fault | None = None) -> Future[ScenarioResult]:
        return self._call("scenario", crashes, fault)

    def release(self, world: bytes) -> None:
        self.refs.pop(id(world), None)

    def processes(self) -> int:
        return self.count

    def first_start(self) -> float | None:
        return None  # the processes start on the cluster's machines, each on a clock of its own

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            refs = list(self.flying)
        for ref in refs:
            self.ray.cancel(ref)

    def _call(self, method: str, *args: Any) -> Future[Any]:
        """Call `method` on the least loaded actor; a future of its result (the count of processes kept here)."""
        mine: Future[Any] = Future()
        with self.lock:
            if self.stopped:
                raise SweepError("stopped")
            index = self.load.index(min(self.load))
            self.load[index] += 1
            ref = getattr(self.hosts[index], method).remote(*args)
            self.flying[ref] = mine
        ref.future().add_done_callback(lambda done: self._done(ref, index, done))
        return mine

    def _done(self, ref: Any, index: int, done: Future[Any]) -> None:
        with self.lock:
            self.load[index] -= 1
            mine = self.flying.pop(ref)
        if not mine.set_running_or_notify_cancel():
            return
        try:
            result, processes = done.result()
        except BaseException as error:
            mine.set_exception(_cause(self.ray, error))
            return
        with self.lock:
            self.count += processes
        mine.set_result(result)


def _get(ray: ModuleType, refs: list[Any]) -> None:
    try:
        ray.get(refs)
    except BaseException as error:
        raise _cause(ray, error) from None


def _cause(ray: ModuleType, error: BaseException) -> BaseException:
    """The error a task raised (a SweepError stays one), not Ray's wrapper with its remote traceback."""
    if isinstance(error, ray.exceptions.RayTaskError) and isinstance(error.cause, BaseException):
        return error.cause
    if isinstance(error, ray.exceptions.RayError):
        return SweepError(f"a Ray worker failed: {_first_line(error)}")
    return error


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
