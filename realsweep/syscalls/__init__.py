"""Crash points at any program's system calls (`--points syscalls`), and power loss over every file it writes.

- ptrace.py: the program under ptrace(2), each system call of each thread and child stopped at
  its entry (where a kill skips it) and its exit;
- calls.py: which calls, and what one does, read off its arguments (files, peers, data);
- names.py: a call's point name ("write state.json.tmp", "connect <tracker>"), the noise
  that is no point, and where a power cut is at risk, read off names;
- trace.py: the shim, one swept process: `python -m crashsweep.realsweep.syscalls.trace -- ARGV`;
- journal.py: the calls on the work folder, on record for power loss;
- durable.py: what a power cut leaves of the work folder (spec/POINTS.md section 4).

- command.py: `wrap` (the shim's command line) and `check` (can this machine trace?), what the
  runner calls.

The standard library and the probe only. This file imports nothing (tests/test_layers.py).
"""
