"""Tests of the syscall points (crashsweep.realsweep.syscalls): the tracer, the names, the shim, power loss."""
