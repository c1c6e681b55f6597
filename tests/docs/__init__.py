"""Tests of README.md and the docs site: their command blocks, examples and build."""
