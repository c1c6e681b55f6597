"""The readers of recorded runs from-trace takes, by the kind `crashsweep audit` recognises a file as.

One reader a kind of record (crashsweep/importers/registry.py's names): each turns one file into
the `Recording` everything else is derived from (spec/FROM_TRACE.md 1 and 2), or refuses it in
one line (TraceError). A kind with no reader here is refused by the command, naming the kinds
it reads.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crashsweep.fromtrace import dbos_store, langgraph_store, recording, temporal_store
from crashsweep.fromtrace.recording import Recording

READERS: dict[str, Callable[[Path], Recording]] = {
    "otlp": recording.read,
    "dbos": dbos_store.read,
    "langgraph": langgraph_store.read,
    "temporal": temporal_store.read,
}
"""Each kind's reader, in the order the command's help names them."""
