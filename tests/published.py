"""The figures the seed document publishes (SEMANTICS.md sections 8 and 9), quoted once for every test."""

from __future__ import annotations

# Section 8, depth 2, keyed tracker: once, twice, with_dups, dups, missing, asks, calls+.
SEED_TABLE = {
    "save-once-per-turn": (18, 225, 164, 294, 0, 0, 338),
    "save-after-reply": (34, 654, 306, 360, 0, 0, 234),
    "idempotency-keys": (34, 654, 0, 0, 0, 0, 234),
    "attempt-markers": (43, 996, 0, 0, 0, 669, 288),
    "keys-and-markers": (43, 1014, 0, 0, 0, 0, 288),
}
