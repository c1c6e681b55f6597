"""Tests of the anomaly rules (spec/anomalies/), over the hand-written histories of fixtures.py."""
