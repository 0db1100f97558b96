"""Issue 27, the README's known limit "native request rates are counted per process": with
``CHIEU_REPLICAS`` = N, each process of a service holds a player (and an address) to 1/N of the
rate, so a player whose calls are spread over the N processes gets the service's rate, not N
times it. Before, each of four processes let the whole burst through: four bursts."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest

from chieu.kit import ratelimit
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings, SettingsError, from_env
from tests.conftest import PUBLIC_KEYS, SIGNER
from tests.kit.test_ratelimit import Call


def settings(**kw: Any) -> Settings:
    """A burst of 8 calls a player and 40 an address, refilled so slowly (one in 12.5 s and 2.5 s
    at one process) that a slow machine's test sees the bursts alone; ``CHIEU_REPLICAS`` read as a
    process reads its settings."""
    return replace(from_env(), token_public_keys=str(PUBLIC_KEYS), rate_per_player=0.08, rate_per_address=0.4,
                   rate_burst=100.0, **kw)


def admitted(processes: list[ratelimit.Limits], calls: list[Call]) -> int:
    """Calls let through when ``calls`` are spread round robin over ``processes``."""
    n = 0
    for i, call in enumerate(calls):
        try:
            processes[i % len(processes)].check(call)
            n += 1
        except ServiceError as e:
            assert e.reason == "rate_limited"
    return n


def test_four_processes_let_one_burst_through_not_four(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHIEU_REPLICAS", "4")
    processes = [ratelimit.Limits(settings()) for _ in range(4)]  # as each process's guard builds it
    me = SIGNER.sign(f"p-{uuid.uuid4().hex}")
    assert admitted(processes, [Call(me) for _ in range(40)]) == 8  # the player's burst, over the service
    assert all(p.replicas == 4 for p in processes)
    peers = [f"ipv4:198.51.100.9:{5000 + i}" for i in range(200)]  # one address, many players
    fresh = [ratelimit.Limits(settings()) for _ in range(4)]
    assert admitted(fresh, [Call(SIGNER.sign(f"p-{uuid.uuid4().hex}"), peer=p) for p in peers]) == 40


def test_one_process_holds_a_client_to_its_share(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHIEU_REPLICAS", "4")
    one = ratelimit.Limits(settings())
    me = SIGNER.sign(f"p-{uuid.uuid4().hex}")
    one.check(Call(me))
    one.check(Call(me))
    with pytest.raises(ServiceError) as err:  # the trade-off: all of a client's calls at one process
        one.check(Call(me))
    assert err.value.reason == "rate_limited" and "player" in err.value.message
    assert 45_000 < err.value.retry_after_ms <= 50_000  # a quarter of the rate there: one call in 50 s


def test_one_process_is_the_old_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHIEU_REPLICAS", raising=False)
    lim = ratelimit.Limits(settings())
    me = SIGNER.sign(f"p-{uuid.uuid4().hex}")
    assert admitted([lim], [Call(me) for _ in range(20)]) == 8 and lim.replicas == 1
    assert ratelimit.Limits(settings(), replicas=2).per_player.limit == 4  # given, not read


@pytest.mark.parametrize("value", ["0", "-3", "two", "1.5"])
def test_a_replica_count_that_is_no_count_stops_the_process(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CHIEU_REPLICAS", value)
    with pytest.raises(SettingsError, match="CHIEU_REPLICAS"):
        ratelimit.Limits(settings())  # (from_env refuses it; a Settings built by hand is refused by Limits)
    if value.lstrip("-").isdigit():
        with pytest.raises(SettingsError, match="at least one process"):
            ratelimit.Limits(Settings(token_public_keys=str(PUBLIC_KEYS), replicas=int(value)))
