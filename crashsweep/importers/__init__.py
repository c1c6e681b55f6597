"""Importers: recorded runs (spans, sessions, checkpoints, workflow histories, ledgers) as Histories.

Each module reads one kind of record (spec/HISTORY.md 7) and is one `Kind` value of
registry.py; base.py holds what they share.
"""
