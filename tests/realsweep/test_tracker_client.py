"""The tracker client: real HTTP requests, errors as TrackerError with the status."""

from __future__ import annotations

import pytest

from crashsweep.realsweep.tracker_client import TrackerClient, TrackerError
from crashsweep.realsweep.tracker_service import ServiceProcess


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
