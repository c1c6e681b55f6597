"""What runs inside the swept program: crash points, the entry point, atomic saves, the file journal.

- crashpoint.py: `crashpoint(name)` and `count(...)`, the public API a swept program calls;
  nothing in normal runs, a kill (or a hold) at the chosen point under a sweep.
- entry.py: `python -m crashsweep.realsweep.probe.entry module:function`, one swept process.
- checkpoint.py: a real atomic save (temp file, fsync, rename, fsync the folder).
- fsjournal.py: the save's file operations on record, and the disk a power cut leaves.
- faults_env.py: the faults a process is told to suffer, read from its environment.

Standard library only, and nothing else of crashsweep (checked by import-linter): a swept
process imports only these, so each of the thousands of processes a sweep starts stays cheap.
This file imports nothing.
"""
