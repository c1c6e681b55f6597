"""Trace and span IDs a test can count by hand: the SDK's own extension point, an IdGenerator."""

from __future__ import annotations

from opentelemetry.sdk.trace.id_generator import IdGenerator


class Counting(IdGenerator):
    """Trace IDs 1, 2, ... and span IDs 1, 2, ... in the order they are asked for."""

    def __init__(self) -> None:
        self.spans = 0
        self.traces = 0

    def generate_span_id(self) -> int:
        self.spans += 1
        return self.spans

    def generate_trace_id(self) -> int:
        self.traces += 1
        return self.traces
