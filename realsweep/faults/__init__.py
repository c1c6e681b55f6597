"""The faults beside a crash (spec/FAULTS.md), carried out on real processes: the nemesis.

This file imports nothing.
"""
