"""Key(run, call): one key per pair, the same in every process, 32 hex characters (SEMANTICS.md 5)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
import sys

import pytest
from hypothesis import assume, example, given

from crashsweep.spec.keys import KEY_HEX_CHARS, key
from tests.strategies import ids, same_concatenation

HEX = frozenset("0123456789abcdef")


@given(ids(), ids())
@example("", "")
@example("ünïcødé 🔑", "调用")
def test_a_key_is_32_lowercase_hex_characters(run: str, call: str) -> None:
    value = key(run, call)
    assert len(value) == KEY_HEX_CHARS == 32
    assert set(value) <= HEX


@given(ids(ascii_only=True), ids(ascii_only=True))
@example("run-1", "create_a")
@example("", "")
def test_ascii_ids_hash_with_the_documented_length_prefixes(run: str, call: str) -> None:
    layout = f"{len(run)}:{run}{len(call)}:{call}".encode("ascii")
    assert key(run, call) == hashlib.sha256(layout).hexdigest()[:32]


@given(ids(), ids())
@example("é", "")
def test_any_id_is_prefixed_by_its_length_in_utf8_bytes(run: str, call: str) -> None:
    layout = b"".join(str(len(data)).encode() + b":" + data for data in (run.encode(), call.encode()))
    assert key(run, call) == hashlib.sha256(layout).hexdigest()[:32]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (("a:b", "c"), ("a", "b:c")),
        (("a", ""), ("", "a")),
        (("", ""), ("", ":")),
        (("1:a", ""), ("1", ":a")),
        (("run", "1:x"), ("run1", ":x")),
        (("é", "e"), ("e", "é")),
        (("🔑", ""), ("", "🔑")),
    ],
)
def test_pairs_a_careless_encoding_confuses_get_different_keys(one: tuple[str, str], other: tuple[str, str]) -> None:
    assert key(*one) != key(*other)


@given(same_concatenation(separator=":"))
def test_pairs_that_join_to_the_same_text_with_a_colon_get_different_keys(
    pairs: tuple[tuple[str, str], tuple[str, str]],
) -> None:
    one, other = pairs
    assert one != other
    assert key(*one) != key(*other)


@given(same_concatenation())
def test_pairs_that_concatenate_to_the_same_text_get_different_keys(
    pairs: tuple[tuple[str, str], tuple[str, str]],
) -> None:
    one, other = pairs
    assert one != other
    assert key(*one) != key(*other)


@given(ids(), ids(), ids(), ids())
def test_distinct_pairs_get_distinct_keys(run: str, call: str, other_run: str, other_call: str) -> None:
    assume((run, call) != (other_run, other_call))
    assert key(run, call) != key(other_run, other_call)


def test_every_pair_of_short_tricky_ids_gets_its_own_key() -> None:
    short = ["", *("".join(chars) for size in (1, 2, 3) for chars in itertools.product("a:1", repeat=size))]
    pairs = list(itertools.product(short, repeat=2))
    assert len({key(run, call) for run, call in pairs}) == len(pairs) == 40 * 40


@pytest.mark.parametrize("hash_seed", ["0", "1", "4242"])
def test_the_same_pair_gives_the_same_key_in_a_new_process(hash_seed: str) -> None:
    pairs = [("run-1", "create_a"), ("a:b", "c"), ("a", "b:c"), ("", ""), ("ünïcødé 🔑", "调用")]
    program = "import json, sys\nfrom crashsweep.spec.keys import key\nprint(json.dumps([key(r, c) for r, c in json.load(sys.stdin)]))"  # noqa: E501
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-c", program],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        check=True,
    )
    assert json.loads(done.stdout) == [key(run, call) for run, call in pairs]


def test_a_known_key_never_changes() -> None:
    """Key("run-1", "create_a") is the first 32 hex digits of SHA-256 over "5:run-18:create_a"."""
    # The value was derived outside Python: printf '5:run-18:create_a' | sha256sum | cut -c1-32
    # Keys outlive the process that made them (the tracker keeps them): a change of encoding
    # would make every retry after an upgrade look like a new write.
    assert key("run-1", "create_a") == "73420bda1591f3c3e135006750e85955"
