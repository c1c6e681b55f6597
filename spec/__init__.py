"""The vocabulary of durable agent loops: world, job, keys, saves, tracker, ladder, invariants.

It imports nothing else of crashsweep's. SEMANTICS.md in this folder is the contract.
"""
