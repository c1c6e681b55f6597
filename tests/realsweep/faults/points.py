"""The points and pauses of one made-up process, shared by the fault kinds' tests.

Points 2, 4, 6 are `tracker accepted` (create_a twice, comment_a once); a person is asked
after point 1 and after point 5.
"""

from __future__ import annotations

POINTS = (
    "start: tmp written",
    "tracker accepted create_a",
    "tool returned create_a",
    "tracker accepted create_a",
    "tool returned create_a",
    "tracker accepted comment_a",
)
PAUSES = ((1, "person answers create_a"), (5, "person answers create_a"))
"""Two questions to a person: after the first point, and after the fifth."""
