"""The reference durable agent loop, swept for real and set beside the model.

- loop.py: the loop, real code, one code path per design, every crash point marked;
  parts.py: the parts every design is built from (memory, saves, the scripted model, sends).
- target.py: the loop as a sweep target, its check, and its row in the explorer's shape.
- conformance.py: the real sweep beside the model explorer, and every difference.

This file imports nothing: a swept process imports loop.py alone.
"""
