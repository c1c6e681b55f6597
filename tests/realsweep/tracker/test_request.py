"""Reading a tracker request: routes, Content-Length, JSON bodies and fields, each refusal with its status."""

from __future__ import annotations

import pytest

from crashsweep.realsweep.tracker.request import (
    MAX_BODY,
    HttpError,
    Route,
    arguments,
    content_length,
    fencing_token,
    idempotency_key,
    issue_number,
    json_object,
    route,
    single_header,
    text,
)


def _refusal(call: object, *args: object) -> tuple[int, str]:
    """The status and message of the HttpError that `call(*args)` raises."""
    with pytest.raises(HttpError) as raised:
        call(*args)  # type: ignore[operator]
    return raised.value.status, raised.value.message


def test_routes_name_the_operation_the_space_and_the_query() -> None:
    """Without a prefix the space is `default`; a comment's issue number is parsed from the path."""
    assert route("GET", "/records") == Route("records", "default", "GET")
    assert route("GET", "/spaces/s-3/lookup?run=r&call=c") == Route("lookup", "s-3", "GET", {"run": "r", "call": "c"})
    assert route("POST", "/spaces/a.b/issues/0042/comments") == Route("comment", "a.b", "POST", issue=42)


@pytest.mark.parametrize(
    ("method", "target", "status", "message"),
    [
        ("GET", "/nowhere", 404, "no route GET /nowhere"),
        ("GET", "/spaces/../records", 404, "no route"),
        ("GET", "/spaces/%2e%2e/records", 404, "no route"),
        ("GET", "/issues/\u0661/comments", 404, "no route"),
        ("POST", "/health", 405, "/health answers GET, not POST"),
        ("GET", "/spaces/s/issues/1/comments", 405, "answers POST, not GET"),
        ("POST", "/issues/99999999999999999999/comments", 400, "issue number 99999999999999999999: at most"),
        ("GET", "http://[::1/records", 400, "not a URL"),
    ],
)
def test_unknown_routes_wrong_methods_and_unreadable_targets_are_refused(
    method: str, target: str, status: int, message: str
) -> None:
    """404 for no route (only ASCII digits and safe space names), 405 for the other method, 400 for the rest."""
    refused = _refusal(route, method, target)
    assert refused[0] == status
    assert message in refused[1]


def test_a_405_names_the_method_that_is_allowed() -> None:
    """The Allow header of a 405 carries the route's one method."""
    with pytest.raises(HttpError) as raised:
        route("DELETE", "/records")
    assert raised.value.headers == {"Allow": "GET"}


def test_issue_numbers_stop_at_what_sqlite_holds() -> None:
    """2**63 - 1 is the last number SQLite's INTEGER holds; one more, or 30 digits, is a 400."""
    assert issue_number("9223372036854775807") == 2**63 - 1
    assert _refusal(issue_number, "9223372036854775808")[0] == 400
    assert _refusal(issue_number, "1" * 30)[0] == 400


@pytest.mark.parametrize(
    ("values", "encoding", "status"),
    [
        ([], None, 400),
        (["-1"], None, 400),
        (["abc"], None, 400),
        (["+5"], None, 400),
        (["5_0"], None, 400),
        (["\u0665"], None, 400),
        (["5", "6"], None, 400),
        (["5"], "chunked", 400),
        ([str(MAX_BODY + 1)], None, 413),
        (["9" * 30], None, 413),
    ],
)
def test_a_content_length_must_be_one_plain_number_within_the_limit(
    values: list[str], encoding: str | None, status: int
) -> None:
    """Missing, signed, not ASCII digits, conflicting or with Transfer-Encoding: 400; above the limit: 413."""
    assert _refusal(content_length, values, encoding)[0] == status


def test_a_plain_content_length_is_its_number() -> None:
    """Repeated equal values are one value; the limit itself is accepted."""
    assert content_length(["0"], None) == 0
    assert content_length([" 12 ", "12"], None) == 12
    assert content_length([str(MAX_BODY)], None) == MAX_BODY
    assert _refusal(content_length, ["11"], None, 10) == (413, "the body is larger than the limit of 10 bytes")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe\xfd", "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"a": ' * 100_000 + b"0" + b"}" * 100_000, "nested too deeply"),
        (b'"text"', "must be a JSON object"),
        (b"1" * 5000, "not JSON"),
    ],
)
def test_a_body_must_be_a_json_object(data: bytes, message: str) -> None:
    """Not JSON, not UTF-8, nested 100,000 deep, not an object, an integer too long to read: 400."""
    status, text_ = _refusal(json_object, data)
    assert status == 400
    assert message in text_


def test_an_empty_body_is_an_empty_object() -> None:
    """No body reads as {} (the fields then say what is missing)."""
    assert json_object(b"") == {}
    assert json_object(b'{"a": [1]}') == {"a": [1]}


def test_fields_must_be_strings_that_utf8_can_encode() -> None:
    """A lone surrogate is not text; a required field is non-empty; an optional one has its default."""
    assert text({"title": "disk \u00e9"}, "title") == "disk \u00e9"
    assert text({}, "body", "") == ""
    assert _refusal(text, {"title": "\ud800"}, "title") == (
        400,
        "field 'title' holds a lone surrogate, which is not text",
    )
    assert _refusal(text, {"title": ""}, "title")[0] == 400
    assert _refusal(text, {"body": 3}, "body", "")[0] == 400


def test_arguments_come_from_the_query_for_reads_and_the_body_for_writes() -> None:
    """Each operation's checked arguments, ready for the store's method of the same name."""
    assert arguments(route("GET", "/search?q=a%20b"), None) == {"text": "a b"}
    assert arguments(route("GET", "/lookup?run=r&call=c"), None) == {"run": "r", "call": "c"}
    assert _refusal(arguments, route("GET", "/lookup?run=r"), None) == (400, "query parameter 'call' is required")
    issue = arguments(route("POST", "/issues"), {"title": "t", "run": "r", "call": "c"})
    assert issue == {"title": "t", "body": "", "run": "r", "call": "c"}
    comment = arguments(route("POST", "/issues/3/comments"), {"body": "b", "run": "r", "call": "c"})
    assert comment == {"issue": 3, "body": "b", "run": "r", "call": "c"}


def test_a_fencing_token_is_a_whole_number() -> None:
    """The Fencing-Token header (FAULTS.md 7.1): absent is None, digits are the token, anything else a 400."""
    assert fencing_token(None) is None
    assert fencing_token("12") == 12
    for bad in ("", "-1", "one", "1" * 20):
        assert _refusal(fencing_token, bad)[0] == 400


def test_a_lease_is_a_post_with_no_arguments() -> None:
    """POST /spaces/S/lease grants a token in space S; a GET is refused with 405."""
    found = route("POST", "/spaces/s-3/lease")
    assert (found.name, found.space) == ("lease", "s-3")
    assert arguments(found, {}) == {}
    assert _refusal(route, "GET", "/lease")[0] == 405


def test_a_singleton_header_given_twice_and_an_empty_key_are_refused() -> None:
    """Two Fencing-Token or Idempotency-Key headers (a proxy's and the client's?) and a blank key: each a 400."""
    assert single_header([], "Fencing-Token") is None
    assert single_header(["7"], "Fencing-Token") == "7"
    assert _refusal(single_header, ["1", "9"], "Fencing-Token") == (400, "Fencing-Token is given 2 times: send it once")
    assert _refusal(single_header, ["k", "k"], "Idempotency-Key")[0] == 400
    assert idempotency_key([]) is None
    assert idempotency_key(["k-1"]) == "k-1"
    for bad in ([""], ["a", "b"]):
        assert _refusal(idempotency_key, bad)[0] == 400
