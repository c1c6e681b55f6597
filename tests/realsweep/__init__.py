"""Tests of realsweep: real code, real crashes (real subprocesses, real sockets)."""
