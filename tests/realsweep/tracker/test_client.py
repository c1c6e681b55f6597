"""The tracker client: real HTTP requests, errors as TrackerError with the status."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.realsweep.tracker.client import FENCED, TrackerClient, TrackerError
from crashsweep.realsweep.tracker.service import ServiceProcess
from tests.realsweep.tracker_process import idle, service


def test_an_error_status_raises_tracker_error(keyed_service: ServiceProcess) -> None:
    """A comment on a missing issue: TrackerError with status 404 and the service's message."""
    client = TrackerClient(keyed_service.url)
    with pytest.raises(TrackerError, match="no issue #5") as raised:
        client.comment(5, run="r", call="c")
    assert raised.value.status == 404


def test_a_reused_key_raises_422(keyed_service: ServiceProcess) -> None:
    """The same key with another title: TrackerError 422."""
    client = TrackerClient(keyed_service.url)
    client.create_issue("a", run="r", call="c", key="k")
    with pytest.raises(TrackerError) as raised:
        client.create_issue("b", run="r", call="c", key="k")
    assert raised.value.status == 422


def test_a_write_carries_its_approval_to_its_record(keyed_service: ServiceProcess) -> None:
    """The Approval header reaches the record it is applied as (a write with none keeps none)."""
    client = TrackerClient(keyed_service.url)
    number = client.create_issue("a", run="r", call="w", approval="w@1#1")
    client.comment(number, run="r", call="v", approval="v@1#2")
    client.comment(number, run="r", call="u")
    assert [r["approval"] for r in client.records()] == ["w@1#1", "v@1#2", None]


def test_search_quotes_its_text(keyed_service: ServiceProcess) -> None:
    """Search text with spaces and symbols reaches the service intact."""
    client = TrackerClient(keyed_service.url)
    client.create_issue("disk full & hot?", run="r", call="c")
    assert [i["title"] for i in client.search("full & hot?")] == ["disk full & hot?"]


@pytest.mark.parametrize("url", ["https://example.org", "127.0.0.1:8765", "http://"])
def test_only_http_urls_with_a_host_are_accepted(url: str) -> None:
    """The client speaks plain HTTP to a host and port."""
    with pytest.raises(ValueError, match="expected http://"):
        TrackerClient(url)


def test_a_write_told_to_lose_its_reply_is_applied_and_the_client_sees_a_transport_error(
    keyed_service: ServiceProcess,
) -> None:
    """The lost-reply fault (FAULTS.md 2): committed with its key, the reply dropped, the next request as usual."""
    client = TrackerClient(keyed_service.space_url("lost"))
    client.lose_next_reply = True
    with pytest.raises(ConnectionError):
        client.create_issue("triage: create_a", run="r1", call="create_a", key="k1")
    assert not client.lose_next_reply  # one write only
    assert [r["call"] for r in client.records()] == ["create_a"]
    assert client.create_issue("triage: create_a", run="r1", call="create_a", key="k1") == 1  # the key was kept
    assert len(client.records()) == 1


def test_a_call_that_fails_after_accept_fails_at_the_first_request_the_tracker_receives(
    keyed_service: ServiceProcess,
) -> None:
    """`fails_after_accept` (SITUATIONS.md 2): applied, its reply lost, only while no record of the call was there.

    The tracker's own records decide, so the fault survives a crash of the sender: a resend,
    under the same key or none, or from another run, is no longer the first and is answered.
    """
    client = TrackerClient(keyed_service.space_url("fails"))
    client.fail_first = True
    with pytest.raises(ConnectionError):
        client.create_issue("a", run="r1", call="create_a", key="k1")
    assert not client.fail_first  # one write only
    client.fail_first = True
    assert client.create_issue("a", run="r1", call="create_a", key="k1") == 1  # the key's record, answered
    client.fail_first = True
    assert client.create_issue("a", run="r2", call="create_a") == 2  # no key: filed again, answered
    client.fail_first = True
    with pytest.raises(ConnectionError):
        client.create_issue("b", run="r1", call="create_b")  # another call: its first request fails
    assert [r["call"] for r in client.records()] == ["create_a", "create_a", "create_b"]


def _established(port: int) -> int:
    """How many client connections to `port` are open (the kernel's table, /proc/net/tcp)."""
    rows = (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
    return sum(1 for row in rows if int(row[2].split(":")[1], 16) == port and row[3] == "01")


def test_a_kept_client_sends_its_requests_on_one_connection_until_closed(keyed_service: ServiceProcess) -> None:
    """keep_alive: a write, a search and a lookup over one connection; close() ends it; the default keeps none."""
    port = int(keyed_service.url.rsplit(":", 1)[1])
    with TrackerClient(keyed_service.space_url("k"), keep_alive=True) as client:
        assert client.create_issue("triage: a", run="r", call="a", key="k1") == 1
        assert [i["number"] for i in client.search("triage")] == [1]
        assert client.lookup("r", "a") is not None
        assert _established(port) == 1
    assert _established(port) == 0
    TrackerClient(keyed_service.space_url("k")).records()
    assert _established(port) == 0


def test_a_kept_connection_the_service_closed_is_not_reused(tmp_path: Path) -> None:
    """The service closes an idle connection after its timeout: the next write goes on a new one, applied once."""
    with service(tmp_path / "db", "--timeout", "0.5") as tracker:
        client = TrackerClient(f"{tracker.url}/spaces/k", keep_alive=True)
        client.create_issue("triage: a", run="r", call="a")
        idle(tracker)  # the service has closed its end of the kept connection
        assert client.create_issue("triage: b", run="r", call="b") == 2
        assert [r["call"] for r in client.records()] == ["a", "b"]
        client.close()


def test_a_kept_client_survives_an_error_and_a_lost_reply(keyed_service: ServiceProcess) -> None:
    """After a 404 (the service closes) and a lost reply (no answer), the next requests are answered as usual."""
    with TrackerClient(keyed_service.space_url("k"), keep_alive=True) as client:
        with pytest.raises(TrackerError, match="no issue #5"):
            client.comment(5, run="r", call="c")
        client.lose_next_reply = True
        with pytest.raises(ConnectionError):
            client.create_issue("triage: a", run="r", call="a", key="k1")
        assert client.create_issue("triage: a", run="r", call="a", key="k1") == 1  # the key was kept
        assert [r["call"] for r in client.records()] == ["a"]


def test_a_lease_fences_every_request_of_an_older_holder(keyed_service: ServiceProcess) -> None:
    """Two holders of one space: once the second takes token 2, the first's write, read and lookup get 409."""
    url = keyed_service.space_url("lease")
    first, second = TrackerClient(url), TrackerClient(url)
    assert first.lease() == 1
    first.create_issue("a", run="r1", call="create_a")
    assert second.lease() == 2
    for request in (
        lambda: first.create_issue("b", run="r1", call="create_b"),
        lambda: first.search(""),
        lambda: first.lookup("r1", "create_a"),
    ):
        with pytest.raises(TrackerError, match="fencing token 1 is older than the newest lease") as raised:
            request()
        assert raised.value.status == FENCED
    assert [r["call"] for r in second.records()] == ["create_a"]
    assert len(TrackerClient(url).search("")) == 1  # a request with no token (a person's look) is not fenced
