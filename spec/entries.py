"""What the loop keeps of an approval (spec/CONVERSATIONS.md 2): the entry `call@version#number`.

The call, the version of its arguments, and the approval's number in the world (the n-th the
person gave). Its own module, importing nothing, so that the reference loop (which runs with
the standard library alone) keeps and reads the same entries as the model (spec/approval.py).
"""

from __future__ import annotations


def entry(call: str, version: int, number: int) -> str:
    """What the loop keeps of approval `number`, given for `call` with arguments of `version`."""
    return f"{call}@{version}#{number}"


def parts(kept: str) -> tuple[str, int, int]:
    """(call, version, number) of an entry."""
    call, _, rest = kept.rpartition("@")
    version, _, number = rest.partition("#")
    return call, int(version), int(number)
