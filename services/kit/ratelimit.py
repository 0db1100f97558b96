"""Request rates per player and per client address on native gRPC, checked by the one guard of
every service (:func:`chieu.kit.errors.guard`) before the handler runs.

- **Per player** (``CHIEU_RATE_PER_PLAYER`` requests a second, ``CHIEU_RATE_BURST`` seconds of
  them at once): the subject of a valid token. The token is verified here (the servicer's own
  check then finds it in the verified-token cache, so nothing is verified twice); a token that
  does not verify counts under no player, and the servicer refuses it.
- **Per address** (``CHIEU_RATE_PER_ADDRESS``): the client's address as the service believes it
  (:func:`chieu.kit.address.client`: the peer, or what a trusted proxy forwards), an IPv6
  address by its ``/64``.
- **Services are not limited**: a call with a valid service credential (the table asking the
  ledger at every seat) is the system's own traffic, and only a service holds one.

The rates are the **service's**, whatever its number of processes: each process keeps its own
buckets (:class:`chieu.kit.limits.Rate`, in memory, a few µs a check) at ``1 / CHIEU_REPLICAS``
of the rate, so N processes let through what one would when the calls are spread over them
(many connections balanced over the replicas; Envoy's round robin for the web path).
``CHIEU_REPLICAS`` is the number of processes of this service (its deployment's replica count;
1 when unset). Not one count shared through NATS: that would cost every call of every service
two round trips (a read and a compare-and-set: 0.94 ms a check on one local nats-server against
2.9 µs in process, ``tests/benchmarks/bench_quotas.py``; more with a replicated bucket), a NATS
write for every call the system serves, and NATS as a dependency of calls that do not otherwise
touch it. The price, said plainly: a client whose calls all reach one process (one native gRPC
connection, pinned to one replica) is held to ``1 / N`` of the rate there — for the defaults
(100 a second a player, 1,000 an address) 10 and 100 a second at N = 10, still far above a
person's few calls a second; and a wrong replica count is a wrong limit (below the real N:
N / CHIEU_REPLICAS times the rate; above it: a tighter one). A refusal is
``RESOURCE_EXHAUSTED`` / ``rate_limited`` with the time to wait (``retry-after-ms``). The web
path has its own limit in Envoy (:mod:`chieu.gateway.envoy`), per Envoy.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import grpc

from chieu.kit import address, auth, limits
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings, SettingsError

REPLICAS = "CHIEU_REPLICAS"
"""The environment variable naming how many processes of this service share its traffic."""


def replicas(env: Mapping[str, str] = os.environ) -> int:
    """``CHIEU_REPLICAS`` (1 when unset); SettingsError unless a whole number of at least 1."""
    raw = env.get(REPLICAS, "").strip()
    if not raw:
        return 1
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise SettingsError(f"{REPLICAS}={raw!r} must be the number of processes of this service (1 or more)")
    return n


def _rate(per_s: float, burst_s: float) -> limits.Rate:
    """``per_s`` a second, ``per_s × burst_s`` at once (0: no limit)."""
    if per_s <= 0:
        return limits.Rate(0, 1.0)
    return limits.Rate(max(1, round(per_s * burst_s)), max(burst_s, 1.0 / per_s))


def _replicas_of(given: int | None) -> int:
    if given is None:
        return replicas()
    if given < 1:
        raise SettingsError(f"a service has at least one process, not {given}")
    return given


KEYS_REMEMBERED = 10_000
"""Address keys remembered by (peer, forwarded): one connection's calls parse its address once."""


RELAY = "x-chieu-relay"
"""The header of a call a service makes for a player (the lobby's quick seat: the player's token in
``authorization``), holding the relaying service's own credential."""
RELAYS = frozenset({"lobby"})
"""The services whose relayed calls skip the address limit: the player's own call to them was
counted under the player's address; counted again here, every player's would be counted under
the relay's one address."""


def _bearer(value: str | bytes) -> str:
    text = value.decode() if isinstance(value, bytes) else value
    return text[7:].strip() if text.startswith("Bearer ") else ""


def _read(context: Any) -> tuple[str, tuple[str, ...], str]:
    """The call's token, its ``X-Forwarded-For`` values and its relay's credential."""
    token, forwarded, relay = "", (), ""  # type: tuple[str, tuple[str, ...], str]
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            token = _bearer(value)
        elif key == address.FORWARDED:
            forwarded += (value.decode() if isinstance(value, bytes) else value,)
        elif key == RELAY:
            relay = _bearer(value)
    return token, forwarded, relay


def refusal(what: str, wait_s: float) -> ServiceError:
    """``RESOURCE_EXHAUSTED`` / ``rate_limited``, saying which limit and how long to wait."""
    ms = max(1, int(wait_s * 1000 + 0.999))
    return ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "rate_limited",
                        f"too many requests from this {what}; retry in {ms} ms", retry_after_ms=ms)


class Limits:
    """The request rates of one service process (``check`` per call): its share of the service's,
    ``1 / replicas`` (``replicas``: :func:`replicas` of the environment when not given)."""

    __slots__ = ("_keys", "per_address", "per_player", "replicas", "settings", "trusted")

    def __init__(self, settings: Settings, replicas: int | None = None) -> None:
        self.settings = settings
        self.replicas = _replicas_of(replicas if replicas is not None else settings.replicas)
        self.trusted = address.proxies(settings.trusted_proxies)
        self._keys: dict[tuple[str, tuple[str, ...]], str] = {}
        self.per_player = _rate(settings.rate_per_player / self.replicas, settings.rate_burst)
        self.per_address = _rate(settings.rate_per_address / self.replicas, settings.rate_burst)

    @property
    def active(self) -> bool:
        return bool(self.per_player.limit or self.per_address.limit)

    def check(self, context: Any) -> None:
        """Count this call, or refuse it (``rate_limited``) with the wait; counts nothing when refused."""
        who: auth.Principal | None = None
        token, forwarded, relay = _read(context)
        if token:
            try:
                who = auth.verify(auth.public_keys(self.settings), token)
            except ServiceError:
                who = None
            if who is not None and who.service:
                return
        if who is not None:
            wait = self.per_player.wait(who.player_id)
            if wait > 0:
                raise refusal("player", wait)
        if who is None or not relay or not self._relayed(relay):
            wait = self.per_address.take(self._key(context.peer() or "", forwarded))
            if wait > 0:
                raise refusal("address", wait)
        if who is not None:
            wait = self.per_player.take(who.player_id)
            if wait > 0:  # spent meanwhile (the same player on another call)
                raise refusal("player", wait)

    def _relayed(self, relay: str) -> bool:
        """Whether ``relay`` is the credential of a service of :data:`RELAYS`."""
        try:
            return auth.verify(auth.public_keys(self.settings), relay).service in RELAYS
        except ServiceError:
            return False

    def _key(self, peer: str, forwarded: tuple[str, ...]) -> str:
        """The address key of a call from ``peer`` (:func:`chieu.kit.address.resolve`, then
        :func:`chieu.kit.address.key`), remembered."""
        k = (peer, forwarded)
        found = self._keys.get(k)
        if found is None:
            if len(self._keys) >= KEYS_REMEMBERED:
                self._keys.clear()
            found = self._keys[k] = address.key(address.resolve(peer, forwarded, self.trusted))
        return found
