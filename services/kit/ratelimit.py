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

Each process keeps its own buckets (:class:`chieu.kit.limits.Rate`, in memory): N processes of a
service let N times the rate through, which is what "per process" means in the settings. A
refusal is ``RESOURCE_EXHAUSTED`` / ``rate_limited`` with the time to wait (``retry-after-ms``).
The web path has its own limit in Envoy (:mod:`chieu.gateway.envoy`).
"""

from __future__ import annotations

from typing import Any

import grpc

from chieu.kit import address, auth, limits
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings


def _rate(per_s: float, burst_s: float) -> limits.Rate:
    """``per_s`` a second, ``per_s × burst_s`` at once (0: no limit)."""
    if per_s <= 0:
        return limits.Rate(0, 1.0)
    return limits.Rate(max(1, round(per_s * burst_s)), max(burst_s, 1.0 / per_s))


KEYS_REMEMBERED = 10_000
"""Address keys remembered by (peer, forwarded): one connection's calls parse its address once."""


def _read(context: Any) -> tuple[str, tuple[str, ...]]:
    """The call's token and its ``X-Forwarded-For`` values."""
    token, forwarded = "", ()  # type: tuple[str, tuple[str, ...]]
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            text = value.decode() if isinstance(value, bytes) else value
            token = text[7:].strip() if text.startswith("Bearer ") else ""
        elif key == address.FORWARDED:
            forwarded += (value.decode() if isinstance(value, bytes) else value,)
    return token, forwarded


def refusal(what: str, wait_s: float) -> ServiceError:
    """``RESOURCE_EXHAUSTED`` / ``rate_limited``, saying which limit and how long to wait."""
    ms = max(1, int(wait_s * 1000 + 0.999))
    return ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "rate_limited",
                        f"too many requests from this {what}; retry in {ms} ms", retry_after_ms=ms)


class Limits:
    """The request rates of one service process (``check`` per call)."""

    __slots__ = ("_keys", "per_address", "per_player", "settings", "trusted")

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.trusted = address.proxies(settings.trusted_proxies)
        self._keys: dict[tuple[str, tuple[str, ...]], str] = {}
        self.per_player = _rate(settings.rate_per_player, settings.rate_burst)
        self.per_address = _rate(settings.rate_per_address, settings.rate_burst)

    @property
    def active(self) -> bool:
        return bool(self.per_player.limit or self.per_address.limit)

    def check(self, context: Any) -> None:
        """Count this call, or refuse it (``rate_limited``) with the wait; counts nothing when refused."""
        who: auth.Principal | None = None
        token, forwarded = _read(context)
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
        wait = self.per_address.take(self._key(context.peer() or "", forwarded))
        if wait > 0:
            raise refusal("address", wait)
        if who is not None:
            wait = self.per_player.take(who.player_id)
            if wait > 0:  # spent meanwhile (the same player on another call)
                raise refusal("player", wait)

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
