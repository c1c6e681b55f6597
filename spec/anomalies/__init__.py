"""The anomalies of a recorded history (spec/HISTORY.md 8): named findings, each proved by a witness.

value.py is what an anomaly and a rule are; calls.py the reading of a history every rule shares
(each call's events, the writes, the attempts); effects.py, transcript.py, approvals.py and
runs.py the rules; registry.py their order and `find`.
"""

from __future__ import annotations

from crashsweep.spec.anomalies.registry import RULES, find
from crashsweep.spec.anomalies.value import Anomaly, Rule

__all__ = ["RULES", "Anomaly", "Rule", "find"]
