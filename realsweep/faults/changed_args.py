"""changed-args for real (spec/CONVERSATIONS.md 2.3): the model, asked again, proposes other arguments.

Under a sweep with this kind every process is told so (CRASHSWEEP_ARGS_MAY_CHANGE, the
nemesis's environment): the reference loop's scripted model then counts its hand-outs of each
reply in a file of the world, and at the arrival of a reply it handed out before passes a pause
"reply k asked again" (no crash point). The q-th pause of the process may strike: the
process is started with CRASHSWEEP_CHANGED_ARGS="q" (one line per strike, probe/faults_env.py)
and the reply's calls carry the next version of their arguments. The sweep sees it struck
when the process paused there again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crashsweep.realsweep.faults.kind import Kind, Passed
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.probe import faults_env
from crashsweep.spec import faults as model


@dataclass(frozen=True)
class ChangedArgs(Kind):
    """A re-asked reply arrives with the next version of its calls' arguments; the process goes on with it."""

    name = model.CHANGED_ARGS_FAULT.name
    in_process = True
    keys_ignored = True
    """The changed write goes out under the same key: the model's keyed tracker answers it with the
    first answer, the real one, as Stripe's API, refuses a key reused with other parameters (422)."""

    def chances(self, points: Sequence[str], pauses: Passed, after: tuple[int, int]) -> list[Fault]:
        """Each re-asked reply's arrival after `after`, named by its number among the process's pauses."""
        return [
            Fault(self, passed, name, q)
            for q, (passed, name) in enumerate(pauses, start=1)
            if faults_env.is_args_chance(name) and (passed, q) > after
        ]

    def sweep_env(self) -> dict[str, str]:
        """CRASHSWEEP_ARGS_MAY_CHANGE: the scripted model counts its hand-outs of each reply (only here)."""
        return {faults_env.ARGS_MAY_CHANGE: "1"}

    def env(self, faults: Sequence[Fault]) -> dict[str, str]:
        """CRASHSWEEP_CHANGED_ARGS: one line "q" per strike."""
        changed = [str(f.occurrence) for f in faults]
        return {faults_env.CHANGED_ARGS: "\n".join(changed)} if changed else {}


CHANGED_ARGS = ChangedArgs()
