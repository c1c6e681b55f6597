"""Tests of crashsweep."""
