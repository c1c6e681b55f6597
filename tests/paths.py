"""Where the checkout's files are, for tests at any depth of tests/: one root, named once."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The checkout's top folder (README.md, docs/, examples/)."""
