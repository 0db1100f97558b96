"""``NATS_URL`` names one server or several, comma-separated (a cluster's nodes): every process
connects with the list, and goes to the next server when one does not answer (found by the local
cluster: nats-py refuses a comma-separated string as one URL)."""

from __future__ import annotations

import pytest

from chieu.kit import names
from chieu.kit.eventstore import EventStore
from chieu.kit.settings import nats_servers
from chieu_tools import localnats
from tests.conftest import nats_creds

pytestmark = pytest.mark.integration


def test_a_comma_separated_url_is_a_list_of_servers() -> None:
    assert nats_servers("nats://127.0.0.1:4222") == ["nats://127.0.0.1:4222"]
    assert nats_servers(" nats://a:1, nats://b:2 ,,") == ["nats://a:1", "nats://b:2"]


async def test_the_event_store_connects_through_a_list_with_a_dead_server(nats_url: str) -> None:
    dead = f"nats://127.0.0.1:{localnats.free_port()}"
    store = await EventStore.connect(f"{dead},{nats_url}", stream=names.TABLES, creds=nats_creds("table"))
    try:
        assert store.nc.is_connected
        assert store.nc.connected_url is not None and store.nc.connected_url.port != int(dead.rsplit(":", 1)[1])
    finally:
        await store.close()
