"""Idempotency keys: Key(run, call), the one value a retry must repeat exactly.

A key must be the same for every retry of one call (in this process or after a restart) and
different for every other call. Joining the run ID with the call ID gives both, because the
call ID was saved with the model's reply before the call went out. Each ID is prefixed by its
length so that run "a:b" with call "c" and run "a" with call "b:c" stay apart.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

KEY_HEX_CHARS = 32


@lru_cache(maxsize=1 << 16)
def key(run: str, call: str) -> str:
    """Return the idempotency key of call `call` in run `run` (32 hex characters).

    Pure, and asked for the same few (run, call) pairs in state after state of a search, so
    the digests are kept (a bounded cache: a digest costs more than the rest of a send).
    """
    digest = hashlib.sha256()
    for part in (run, call):
        data = part.encode("utf-8")
        # The prefix counts UTF-8 bytes, not characters, so the decoder of the hashed stream is
        # unambiguous for any Unicode ID.
        digest.update(str(len(data)).encode("ascii") + b":" + data)
    return digest.digest()[:16].hex()
