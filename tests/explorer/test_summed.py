"""A `Summed` measure (explorer/model.py): a counter summed along each path, reported as the measure.

The state key of a model may then leave out what the measure reads of the final state: the
figure comes from the path, not from the state a merged node kept. The counter itself is no
counter of the counts, and the graph keeps it apart from the edges' deltas.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

from crashsweep.explorer import explore
from crashsweep.explorer.counting import count_paths
from crashsweep.explorer.model import Action, Property, Summed
from crashsweep.explorer.worst import most

GO = Action("step", "go")
CRASH = Action("crash", "crash")
# A state: (position, bumps so far); a crash goes on, and bumps the figure when it strikes at position 1.
State = tuple[int, int]


@dataclass(frozen=True)
class Bumps:
    """Three steps; a crash at position 1 bumps the figure by one. Its key leaves the bumps out."""

    keyed: bool = True

    def initial(self) -> State:
        """Position 0, no bump."""
        return (0, 0)

    def actions(self, state: State) -> Sequence[Action]:
        """Go on, or crash (which goes on too)."""
        return () if state[0] == 3 else (GO, CRASH)

    def step(self, state: State, action: Action) -> tuple[State, Mapping[str, int]]:
        """One position on; a crash at position 1 counts one bump on its edge."""
        bumped = action.kind == "crash" and state[0] == 1
        return (state[0] + 1, state[1] + bumped), ({"bump": 1, "hops": 1} if bumped else {"hops": 1})

    @property
    def key(self) -> Callable[[State], Hashable] | None:
        """The position alone (the bumps are summed along the path instead)."""
        return (lambda state: state[0]) if self.keyed else None

    def is_finished(self, state: State) -> bool:
        """The third position ends the run."""
        return state[0] == 3

    def crash_point(self, state: State) -> str | None:
        """Every position is a point."""
        return str(state[0])

    @property
    def properties(self) -> Sequence[Property[State]]:
        """Nothing to break; the run ends."""
        return (
            Property.always("fine", lambda state: True, witness="ends"),
            Property.sometimes("ends", lambda state: state[0] == 3),
        )

    @property
    def measures(self) -> Mapping[str, Callable[[State], int]]:
        """The bumps of the final state, summed from the counter `bump`."""
        bumps: Summed[State] = Summed("bump", lambda state: state[1])
        return {"bumps": bumps}


def test_the_summed_measure_equals_the_final_states_figure_on_merged_nodes() -> None:
    """Merged by position (4 nodes per crash count at most) or not: the same measure, as the final states give it."""
    merged, full = explore(Bumps(), 3), explore(Bumps(keyed=False), 3, projection=False)
    assert merged.states < full.states
    assert merged.counts == full.counts
    # By hand: of the paths with k crashes among the three steps, those crashing at position 1 bump once.
    assert merged.counts.measures == {0: {"bumps": 0}, 1: {"bumps": 1}, 2: {"bumps": 2}, 3: {"bumps": 1}}
    assert merged.counts.counters == {k: {"hops": 3 * paths} for k, paths in enumerate((1, 3, 3, 1))}


def test_the_worst_case_and_the_graph_read_the_path() -> None:
    """The most bumps on one path is 1 (read off the path); the graph keeps the counter apart, and counts the same."""
    exploration = explore(Bumps(), 3)
    assert most(exploration, measure=exploration.model.measures["bumps"]) == 1
    graph = exploration.graph
    assert all("bump" not in data["deltas"] for _, _, data in graph.edges(data=True))
    assert any(data.get("summed") == {"bump": 1} for _, _, data in graph.edges(data=True))
    assert count_paths(graph, exploration.root, exploration.model.measures) == exploration.counts
