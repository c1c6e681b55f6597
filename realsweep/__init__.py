"""Real code, real crashes: sweep a real program by killing its real processes at every crash point.

The model explorer (explorer/, variants/) counts what crashes do to a loop design on paper;
this package does it to running code. `probe.crashpoint` marks a point in any program; `sweep`
runs the program once to list its points, then again in fresh subprocesses that die at each
point (and at each point of the restart, up to a depth), and a check reads what was left.
The tracker service is a real outside world on SQLite, the reference loop a real durable
loop, one code path per design, and `reference.conformance` sets the real sweep beside the model.

Its modules, top to bottom in the import-linter layers of pyproject.toml (docs/ARCHITECTURE.md
"Packages and who may import whom"; a module imports only those below it):

- api.py: the facade, all the CLI imports of the real side;
- reference/: the reference loop, its sweep target and conformance with the model;
  adapters/: sweeps of agents built on real frameworks (LangGraph, DBOS, ...);
- rows.py: a real sweep's figures as the explorer's row, and its text report;
- sweep.py: `sweep()`, `replay()`, the points a program passes and the determinism check;
- engines/: where the processes run (threads here, or Ray across a cluster);
  dedup/: the merging sweep, the graph of real worlds with each world's future run once;
- process/: one scenario's processes: started or forked from a zygote, killed, held, snapshot;
- histories.py: a scenario as a History (spec/HISTORY.md), judged by the registered invariants;
- values.py: the value types and the seams (`Target`, `Unit`, `Leg`, `Workers`, `Engine`);
- faults/: the faults beside a crash, carried out on real processes, and the nemesis;
- world.py: a real world as a value (the work folder's files and the tracker space), its digest;
- syscalls/: any program traced, its system calls as crash points and power loss over its files;
- tracker/: the outside world, an HTTP/JSON issue tracker on SQLite, its service and client;
  probe/: what runs inside the swept program (crash points, the entry point, atomic saves).

This file imports nothing: a swept process imports only the modules it uses, so that each of
the thousands of processes a sweep starts stays quick to start.
"""
