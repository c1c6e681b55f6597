"""The route table: one entry per route, read by both the request reader and the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.realsweep.tracker import request as tracker_request
from crashsweep.realsweep.tracker.routes import ENDPOINTS, ROUTES, Call, Endpoint, Field
from crashsweep.realsweep.tracker.store import Store


def test_each_operation_has_one_entry_and_each_path_matches_its_pattern() -> None:
    """Names are unique; `{issue}` matches ASCII digits only, the rest of a path literally."""
    assert len(ENDPOINTS) == len(ROUTES)
    assert {endpoint.name for endpoint in ROUTES} == {
        "health",
        "search",
        "lookup",
        "records",
        "issue",
        "lease",
        "comment",
    }
    for endpoint in ROUTES:
        assert endpoint.pattern.fullmatch(endpoint.path.replace("{issue}", "7"))
    comments = ENDPOINTS["comment"].pattern
    assert comments.fullmatch("/issues/0042/comments")
    assert not comments.fullmatch("/issues/\u0661/comments")
    assert not ENDPOINTS["search"].pattern.fullmatch("/searches")


def test_every_entry_is_what_the_reader_routes_to() -> None:
    """Reading `method path` of an entry gives a route whose entry is that one."""
    for endpoint in ROUTES:
        found = tracker_request.route(endpoint.method, "/spaces/s" + endpoint.path.replace("{issue}", "3"))
        assert found.endpoint is endpoint
        assert (found.name, found.space, found.method) == (endpoint.name, "s", endpoint.method)


def test_reads_on_a_space_with_no_database_are_empty_and_health_names_the_mode() -> None:
    """The read handlers answer for a store that is None; health needs no space at all."""
    assert ENDPOINTS["health"].run(Call(None, {}, None, "keys")) == (200, {"ok": True, "mode": "keys"})
    assert not ENDPOINTS["health"].in_space
    assert ENDPOINTS["search"].run(Call(None, {"text": "x"}, None, "keys")) == (200, {"items": []})
    assert ENDPOINTS["lookup"].run(Call(None, {"run": "r", "call": "c"}, None, "keys")) == (
        200,
        {"found": False, "record": None},
    )
    assert ENDPOINTS["records"].run(Call(None, {}, None, "keys")) == (200, {"records": []})


def test_writes_run_on_the_store_with_the_checked_arguments(tmp_path: Path) -> None:
    """An issue, a comment on it and a lease, each through its entry's fields and handler."""
    store = Store(tmp_path / "t.db", honours_keys=True)
    try:
        issue = tracker_request.route("POST", "/issues")
        args = tracker_request.arguments(issue, {"title": "t", "run": "r", "call": "c1"})
        status, answer = issue.endpoint.run(Call(store, args, "k", "keys"))
        assert status == 201
        comment = tracker_request.route("POST", f"/issues/{answer['number']}/comments")
        args = tracker_request.arguments(comment, {"body": "b", "run": "r", "call": "c2"})
        assert comment.endpoint.run(Call(store, args, None, "keys"))[0] == 201
        assert ENDPOINTS["lease"].run(Call(store, {}, None, "keys")) == (201, {"token": 1})
        assert [record["call"] for record in store.records()] == ["c1", "c2"]
    finally:
        store.close()


def test_a_new_route_is_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry added to the table is routed, its fields read and checked, its methods named in a 405."""
    echo = Endpoint(
        "echo", "GET", "/echo/{issue}", (Field("issue", "path"), Field("say", "query")), lambda call: (200, call.args)
    )
    monkeypatch.setattr(tracker_request, "ROUTES", (*ROUTES, echo))
    monkeypatch.setattr(tracker_request, "ENDPOINTS", {**ENDPOINTS, "echo": echo})
    found = tracker_request.route("GET", "/spaces/s/echo/5?say=hi")
    assert found.endpoint.run(Call(None, tracker_request.arguments(found, None), None, "-")) == (
        200,
        {"issue": 5, "say": "hi"},
    )
    with pytest.raises(tracker_request.HttpError) as raised:
        tracker_request.route("POST", "/echo/5")
    assert (raised.value.status, raised.value.headers) == (405, {"Allow": "GET"})
