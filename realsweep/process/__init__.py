"""One scenario's processes: started or forked, killed at their points, held and let go.

- runner.py: a scenario from a fresh work directory, each process in turn, then the check.
- zygote.py (the parent's side) and zygote_server.py (the warm process): processes of a
  Python entry point forked from a process that imported its modules.
- zygotes.py and trackers.py: a process's sweeps share their zygotes and tracker service
  (imported.py: which files a kept zygote imported, and whether one changed since).
- snapshots.py: the world at every crash point a process passes, taken while it waits there.
- pausing.py: two live processes on one disk and tracker (spec/FAULTS.md section 7).
- units.py: the merging sweep's unit of work: one process from a saved world, and the worlds
  it left.
- scratch.py: where a sweep keeps its scratch files.
- lifeline.py: children that die with their parent (Linux's PR_SET_PDEATHSIG).
- stage.py: a scenario under way, as a fault kind that ends a process acts on it.

This file imports nothing.
"""
