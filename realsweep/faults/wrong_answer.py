"""wrong-answer for real (spec/FAULTS.md section 4): a person asked on rung 3 answers wrongly.

It may strike at a pause "person answers <call>" (crashpoint.pause: no crash point), the q-th
pause of the process. The process is started with CRASHSWEEP_WRONG_ANSWER="q" (one line per
wrong answer, probe/faults_env.py), and its scripted person answers that question wrongly.
The sweep sees it struck when the process paused there again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crashsweep.realsweep.faults.kind import Kind, Passed
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.probe import faults_env
from crashsweep.spec import faults as model

PERSON = "person answers "
"""The prefix of the pauses where a person answers a question."""


@dataclass(frozen=True)
class WrongAnswer(Kind):
    """The person's answer is the wrong one; the process goes on with it."""

    name = model.WRONG_ANSWER.name
    in_process = True

    def chances(self, points: Sequence[str], pauses: Passed, after: tuple[int, int]) -> list[Fault]:
        """Each question to a person after `after`, named by its number among the process's pauses."""
        return [
            Fault(self, passed, name, q)
            for q, (passed, name) in enumerate(pauses, start=1)
            if name.startswith(PERSON) and (passed, q) > after
        ]

    def env(self, faults: Sequence[Fault]) -> dict[str, str]:
        """CRASHSWEEP_WRONG_ANSWER: one line "q" per wrong answer."""
        wrong = [str(f.occurrence) for f in faults]
        return {faults_env.WRONG_ANSWER: "\n".join(wrong)} if wrong else {}


WRONG_ANSWER = WrongAnswer()
