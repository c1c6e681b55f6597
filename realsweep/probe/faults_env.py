"""The faults a swept process is told to suffer, read from its environment (spec/FAULTS.md).

The sweep's nemesis (crashsweep.realsweep.faults) writes these variables when it starts a
process; the program under test reads them here. The names are defined once, in this module,
for both sides: the swept process imports only the probe (standard library only), so the
writers import the names from here, not the other way round.

- CRASHSWEEP_LOSE_REPLY: lines "k:<call>", the k-th write request of <call> in this process
  loses its reply (faults/lost_reply.py);
- CRASHSWEEP_FAIL_ATTEMPT: lines "k:<call>", the k-th write request of <call> in this process
  fails after the tracker applied it, where a retry layer catches it (faults/retry.py: the
  move `retry`, spec/RETRIES.md 1.4); the program marks each such chance with a pause named
  `retry_chance(layer, call)`;
- CRASHSWEEP_TIMED_OUT: "<index> <scope> <where>", set on the new attempt a timeout layer
  starts beside the attempt it gave up on (faults/timeout.py): the process records the
  layer's retry (its index among the layers, the instance `where`) before anything else, and
  begins a new run for scope `run`; the attempt marks each chance with a pause named
  `timeout_chance(index, scope, where)` right after the crash point;
- CRASHSWEEP_WRONG_ANSWER: lines "q", the q-th pause of this process (a person's answer) is a
  wrong answer (faults/wrong_answer.py);
- CRASHSWEEP_CALL_IDS: "fresh" for new call IDs on every ask of the scripted model (no move:
  the nemesis's call-ID mode, `--call-ids fresh`);
- CRASHSWEEP_ARGS_MAY_CHANGE: "1" in every process of a sweep with `changed-args`: the scripted
  model counts its hand-outs of each reply, and marks each re-asked reply's arrival with a pause
  named `args_chance(k)`, "reply k asked again" (faults/changed_args.py);
- CRASHSWEEP_CHANGED_ARGS: lines "q", at the q-th pause of this process (a re-asked reply's
  arrival) the reply's calls carry the next version of their arguments.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

LOSE_REPLY = "CRASHSWEEP_LOSE_REPLY"
"""Environment: lines "k:<call>", the k-th write request of <call> in this process loses its reply."""
FAIL_ATTEMPT = "CRASHSWEEP_FAIL_ATTEMPT"
"""Environment: lines "k:<call>", the k-th write request of <call> in this process fails (a retry move)."""
RETRY = "retry "
"""The prefix of the pauses where a retry layer would catch a failed write: `retry_chance`."""
TIMED_OUT = "CRASHSWEEP_TIMED_OUT"
"""Environment: "<index> <scope> <where>", this process is the new attempt of a timeout layer."""
TIMEOUT = "timeout "
"""The prefix of the pauses where a timeout layer may give up on the attempt: `timeout_chance`."""
WRONG_ANSWER = "CRASHSWEEP_WRONG_ANSWER"
"""Environment: lines "q", the q-th pause of this process (a person's answer) is a wrong answer."""
CALL_IDS = "CRASHSWEEP_CALL_IDS"
"""Environment: "fresh" for new call IDs on every ask of the scripted model; else stable."""
FRESH = "fresh"
"""The value of CALL_IDS that asks for fresh call IDs."""
ARGS_MAY_CHANGE = "CRASHSWEEP_ARGS_MAY_CHANGE"
"""Environment: "1" when the sweep may change a re-asked reply's arguments (`changed-args`)."""
CHANGED_ARGS = "CRASHSWEEP_CHANGED_ARGS"
"""Environment: lines "q", the q-th pause of this process (a re-asked reply's arrival) changes its arguments."""
ASKED_AGAIN = " asked again"
"""The end of the pauses where a re-asked reply's arguments may change: `args_chance`."""


def _lines(environ: Mapping[str, str], name: str) -> list[str]:
    return [line for line in environ.get(name, "").splitlines() if line]


def _writes(environ: Mapping[str, str], name: str) -> set[tuple[str, int]]:
    """The (call, k) of every line "k:<call>" of variable `name`."""
    found = set()
    for raw in _lines(environ, name):
        occurrence, _, call = raw.partition(":")
        if not occurrence.isdigit() or not call:
            raise ValueError(f"{name}={raw!r}: expected K:CALL")
        found.add((call, int(occurrence)))
    return found


def lost_replies(environ: Mapping[str, str] = os.environ) -> set[tuple[str, int]]:
    """Every (call, k) whose k-th write of `call` is to lose its reply."""
    return _writes(environ, LOSE_REPLY)


def failed_attempts(environ: Mapping[str, str] = os.environ) -> set[tuple[str, int]]:
    """Every (call, k) whose k-th write of `call` is to fail after the tracker applied it (a retry move)."""
    return _writes(environ, FAIL_ATTEMPT)


def retry_chance(layer: str, call: str) -> str:
    """The pause that marks a write a retry layer would catch a failure of: "retry call x3 on error at create_a".

    The program passes it just before it sends the write, so the pause comes right before the
    point `tracker accepted <call>`; `layer` is the layer's label (spec/retries.py).
    """
    return f"{RETRY}{layer} at {call}"


def retry_call(pause: str) -> str | None:
    """The call of a `retry_chance` pause; None for another pause."""
    if not pause.startswith(RETRY) or " at " not in pause:
        return None
    return pause.rsplit(" at ", 1)[1]


def lost_reply(environ: Mapping[str, str] = os.environ) -> tuple[str, int] | None:
    """(call, k) when the k-th write of `call` is to lose its reply (the earliest k); None for none."""
    found = sorted(lost_replies(environ), key=lambda pair: pair[1])
    return found[0] if found else None


def timeout_chance(index: int, scope: str, where: str) -> str:
    """The pause that marks a crash point where timeout layer `index` (of scope `scope`) may give up on `where`.

    The program passes it right after the point; its words after the prefix are what the new
    attempt is told (CRASHSWEEP_TIMED_OUT).
    """
    return f"{TIMEOUT}{index} {scope} {where}"


def timeout_detail(pause: str) -> str | None:
    """What a `timeout_chance` pause tells the new attempt ("<index> <scope> <where>"); None for another pause."""
    return pause[len(TIMEOUT) :] if pause.startswith(TIMEOUT) else None


def timed_out(environ: Mapping[str, str] = os.environ) -> tuple[int, str, str] | None:
    """(layer index, scope, instance) when this process is a timeout layer's new attempt; else None."""
    raw = environ.get(TIMED_OUT, "")
    if not raw:
        return None
    index, _, rest = raw.partition(" ")
    scope, _, where = rest.partition(" ")
    if not index.isdigit() or not scope or not where:
        raise ValueError(f"{TIMED_OUT}={raw!r}: expected INDEX SCOPE WHERE")
    return int(index), scope, where


def wrong_answers(environ: Mapping[str, str] = os.environ) -> set[int]:
    """The numbers of the pauses (a person's answers) that are to be wrong."""
    return _pauses(environ, WRONG_ANSWER)


def _pauses(environ: Mapping[str, str], name: str) -> set[int]:
    """The numbers of pauses, one a line, of variable `name`."""
    found = set()
    for raw in _lines(environ, name):
        if not raw.isdigit():
            raise ValueError(f"{name}={raw!r}: expected the number of a pause")
        found.add(int(raw))
    return found


def args_chance(k: int) -> str:
    """The pause that marks the arrival of reply `k` handed out before: "reply 2 asked again"."""
    return f"reply {k}{ASKED_AGAIN}"


def is_args_chance(pause: str) -> bool:
    """Whether `pause` is an `args_chance` pause."""
    return pause.startswith("reply ") and pause.endswith(ASKED_AGAIN)


def args_may_change(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the sweep may change a re-asked reply's arguments (the scripted model then counts hand-outs)."""
    return environ.get(ARGS_MAY_CHANGE, "") == "1"


def changed_args(environ: Mapping[str, str] = os.environ) -> set[int]:
    """The numbers of the pauses (re-asked replies arriving) whose arguments change."""
    return _pauses(environ, CHANGED_ARGS)


def fresh_ids(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the scripted model hands out new call IDs on every ask."""
    return environ.get(CALL_IDS, "") == FRESH
