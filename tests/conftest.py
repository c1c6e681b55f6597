"""Hypothesis profiles for the suite: "ci" (the default) and "thorough".

- ci: quick and reproducible. Hypothesis's usual 100 examples, derandomized (the same
  examples on every run and machine), no example database, no deadline.
- thorough: ten times the examples, random, with the local example database (.hypothesis/)
  so that a failure found once is replayed first next time.

Choose with `pytest --hypothesis-profile=thorough` or `HYPOTHESIS_PROFILE=thorough pytest`
(the option wins). Costly tests size their work from `settings().max_examples` (the
stateful ones run a quarter of it: each of their examples is hundreds of model steps).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", max_examples=100, derandomize=True, database=None, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
