"""A small durable loop, swept by crashsweep: it files two issues and remembers what it filed.

Every place where a crash would matter is marked with `crashpoint(...)`: it does nothing in
a normal run, and under `crashsweep sweep` the process is killed there (SIGKILL: no finally,
no atexit) and started again, which must then finish the job from what is on disk.

Sweep it, from this folder (every crash point, then every crash point of the restart; once
crashsweep is installed, `crashsweep` instead of the checkout's launcher):

    ../../bin/crashsweep sweep --target my_loop:run --check my_loop_check:check --depth 2

With `--arg keys=off` it sends no idempotency keys, and the sweep finds the duplicates a
restart makes; `--list-points` lists the crash points (and where they are) without sweeping.

Run it for real against a tracker (`../../bin/crashsweep tracker serve` in another terminal):

    CRASHSWEEP_TRACKER_URL=http://127.0.0.1:8765 python -c "import my_loop; my_loop.run()"
"""

from __future__ import annotations

import os
from pathlib import Path

# crashsweep's public API (docs/guide/sweep.md, "The public API"): what a swept program uses, its
# crash points, fresh IDs, atomic saves (checkpoint), the tracker's client, its --arg values and
# idempotency keys. Each is imported from `crashsweep` itself: where crashsweep defines it may
# move from release to release, this path stays.
from crashsweep import TrackerClient, checkpoint, crashpoint, fresh_id, idempotency_key, target_args

TITLES = ("disk full on db-1", "fan noise on db-2")
STATE = Path("state.json")  # in the current directory: the sweep gives each scenario a fresh one
CRASHSWEEP_ARGS = {"keys": ("on", "off")}  # the --arg keys this program takes, and their values


def run() -> None:
    """File each issue once, saving after each, and resume from the saved state after a crash."""
    state = checkpoint.load(STATE)  # the committed file only: a temp file left by a crash is ignored
    if state is None:
        state = {"run": fresh_id(), "filed": {}}  # random, but derived from the world under a sweep
        checkpoint.save(STATE, state)  # the run ID is durable before any request goes out
        crashpoint("run started")
    tracker = TrackerClient(os.environ.get("CRASHSWEEP_TRACKER_URL", "http://127.0.0.1:8765"))
    keyed = target_args().get("keys", "on") == "on"  # `--arg keys=off`: no idempotency keys
    for title in TITLES:
        if title in state["filed"]:
            continue
        # The same key on every attempt of this write, in this process or after a restart:
        # a tracker that honours keys files the issue once, however often it is sent.
        key = idempotency_key(state["run"], title) if keyed else None
        number = tracker.create_issue(title, run=state["run"], call=title, key=key)
        crashpoint(f"filed {title}")
        state["filed"][title] = number
        checkpoint.save(STATE, state)
        crashpoint(f"saved {title}")
