"""Real code, real crashes: sweep a real program by killing its real processes at every crash point.

The model explorer (explorer/, variants/) counts what crashes do to a loop design on paper;
this package does it to running code. `crashpoint` marks a point in any program; `engine`
runs the program once to list its points, then again in fresh subprocesses that die at each
point (and at each point of the restart, up to a depth), and a check reads what was left.
The tracker service is a real outside world on SQLite, the reference loop a real durable
loop, one code path per design, and `conformance` sets the real sweep beside the model.

This file imports nothing: a swept process imports only the modules it uses, so that each of
the thousands of processes a sweep starts stays quick to start.
"""
