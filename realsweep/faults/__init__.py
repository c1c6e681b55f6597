"""The faults beside a crash (spec/FAULTS.md), carried out on real processes: the nemesis.

- kind.py: what a real fault kind is (`FaultKind`, the `Kind` defaults) and what it may ask
  of the runner (`Pauses`, `Stage`);
- move.py: `Fault`, one move of a kind, a frozen value;
- lost_reply.py, key_expiry.py, wrong_answer.py, power_loss.py, pause.py, changed_args.py,
  trim_context.py: one kind each;
- registry.py: every kind, in spec/faults.py's order;
- nemesis.py: `Nemesis`, the kinds a sweep enables, and where they may strike.

What a swept process reads of its faults is the probe's (probe/faults_env.py).
This file imports nothing.
"""
