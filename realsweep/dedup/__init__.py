"""The merging sweep: the graph of real worlds, each distinct world's future run once.

- graph.py: the sweep over worlds: scenarios that reach the same files and tracker state
  share their future, counted by paths with the explorer's counting, faults included.
- worlds.py: the graph as data, its nodes and edges, and the scenarios read off it.

It hands units of work to a `values.Workers` and never imports an engine. This file imports
nothing.
"""
