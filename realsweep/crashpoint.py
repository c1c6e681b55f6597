"""Deprecated: the last release's path of `crashsweep.realsweep.probe.crashpoint`.

Import `crashpoint, count, fresh_id` from `crashsweep` instead (docs/guide/sweep.md, "The public API"). Kept
one release, for programs written against the last one: importing it warns
(DeprecationWarning) and gives the module it became (crashsweep.moved).
"""

from crashsweep import moved

moved(__name__)
