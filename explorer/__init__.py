"""A generic explicit-state explorer: breadth-first search over a model's crash/restart graph.

It knows nothing about agent loops. A model offers an initial state, enabled actions (of kind
step, crash or restart), a pure step function, named properties, and measures of finished
states; the explorer builds the deduplicated state graph, checks the properties, counts
scenarios by crash count with summed metrics, and gives shortest counterexamples as values.
"""

from crashsweep.explorer.counting import Counts, count_paths
from crashsweep.explorer.model import Action, Model, ModelDefinitionError, Property, validate_model
from crashsweep.explorer.path import Path, PathStep, decode_path, encode_path, replay, shortest_path
from crashsweep.explorer.search import Exploration, ExplorationInterrupted, StateLimitExceeded, Verdict, explore

__all__ = [
    "Action",
    "Counts",
    "Exploration",
    "ExplorationInterrupted",
    "Model",
    "ModelDefinitionError",
    "Path",
    "PathStep",
    "Property",
    "StateLimitExceeded",
    "Verdict",
    "count_paths",
    "decode_path",
    "encode_path",
    "explore",
    "replay",
    "shortest_path",
    "validate_model",
]
