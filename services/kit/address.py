"""The client's address, as a service may believe it: the peer of the call, or what a trusted
proxy in front of it says in ``X-Forwarded-For``.

- **The peer.** ``context.peer()`` (``ipv4:203.0.113.7:51234``, ``ipv6:[2001:db8::1]:443``) is
  the address that opened the connection: a client on native gRPC, or the gateway (Envoy) on the
  web path.
- **Trusted proxies** (``CHIEU_TRUSTED_PROXIES``: addresses or CIDR networks, comma-separated;
  empty: none) are the gateways whose ``X-Forwarded-For`` is believed. The header is read from
  its right end, each hop a trusted proxy appended, and the first address that is not a trusted
  proxy is the client; every entry further left was written by the client and is ignored. From a
  peer that is not a trusted proxy the header is ignored whole, so a client cannot choose the
  address it is counted under.
- **Keys.** :func:`key` is what a limit counts an address under: an IPv4 address itself, an IPv6
  address's ``/64`` (one subscriber's network: an attacker with IPv6 has a whole /64 to rotate
  through), an IPv4-mapped IPv6 address as its IPv4.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Protocol


class Proxied(Protocol):
    """What the address of a caller needs of the settings (:class:`chieu.kit.settings.Settings`, which
    imports this module to check ``CHIEU_TRUSTED_PROXIES``): the trusted proxies."""

    @property
    def trusted_proxies(self) -> str: ...


Network = tuple[int, int, int]
"""A trusted network as it is checked: (4 or 6, its address, its mask), as integers."""

UNKNOWN = "unknown"
"""The address of a peer that is no IP (a Unix socket, an in-process channel)."""
FORWARDED = "x-forwarded-for"
MAX_HOPS = 16
"""The most ``X-Forwarded-For`` entries looked at (from the right)."""
CACHE = 65_536
"""Parsed addresses remembered (a client's repeat; a churning script's push out the oldest)."""


class SettingsError(ValueError):
    """``CHIEU_TRUSTED_PROXIES`` that does not parse."""


@lru_cache(maxsize=64)
def proxies(text: str) -> tuple[Network, ...]:
    """The networks of ``CHIEU_TRUSTED_PROXIES`` (``127.0.0.1/32, ::1``); ``SettingsError`` on a
    bad entry."""
    out: list[Network] = []
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        try:
            n = ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise SettingsError(f"CHIEU_TRUSTED_PROXIES: {item!r} is not an address or a CIDR network") from None
        out.append((n.version, int(n.network_address), int(n.netmask)))
    return tuple(out)


_V4_MAPPED = b"\0" * 10 + b"\xff\xff"


def _packed(text: str) -> tuple[int, bytes] | None:
    """(4 or 6, the packed address) of one address's text, an IPv4-mapped IPv6 address as IPv4."""
    try:
        if ":" not in text:
            return 4, socket.inet_pton(socket.AF_INET, text)
        b = socket.inet_pton(socket.AF_INET6, text.split("%", 1)[0] if "%" in text else text)
    except OSError:
        return None
    return (4, b[12:]) if b[:12] == _V4_MAPPED else (6, b)


def _strip(text: str) -> str:
    """The address part of a peer string or a header entry (``ipv4:1.2.3.4:5``, ``ipv6:[::1]:5``,
    ``1.2.3.4:80``, ``[2001:db8::1]:443``, percent-encoded brackets of a peer string included)."""
    t = text.strip()
    if t.startswith(("ipv4:", "ipv6:")):
        t = t[5:]
    if "%5" in t:
        t = t.replace("%5B", "[").replace("%5D", "]")
    if t.startswith("["):
        end = t.find("]")
        return t[1:end] if end > 0 else ""
    if t.count(":") == 1:  # IPv4 with a port
        return t.split(":", 1)[0]
    return t


def _text(ip: tuple[int, bytes]) -> str:
    return socket.inet_ntop(socket.AF_INET if ip[0] == 4 else socket.AF_INET6, ip[1])


def parse(text: str) -> str | None:
    """The address of a peer string or a header entry, written canonically (``ipv4:1.2.3.4:5``,
    ``ipv6:[::1]:5``, ``1.2.3.4``, ``1.2.3.4:80``, ``[2001:db8::1]:443``, ``2001:db8::1``); ``None``
    for anything else."""
    ip = _packed(_strip(text))
    return None if ip is None else _text(ip)


@lru_cache(maxsize=CACHE)
def _trusted(ip: tuple[int, bytes], trusted: tuple[Network, ...]) -> bool:
    version, value = ip[0], int.from_bytes(ip[1])
    return any(v == version and value & mask == net for v, net, mask in trusted)


@lru_cache(maxsize=CACHE)
def _parsed(text: str) -> tuple[int, bytes] | None:
    """:func:`_packed` of :func:`_strip`, remembered (a client's address and its proxy's repeat)."""
    return _packed(_strip(text))


def _resolve(peer: str, forwarded: Iterable[str], trusted: tuple[Network, ...]) -> tuple[int, bytes] | None:
    ip = _parsed(peer)
    if ip is None or not trusted or not _trusted(ip, trusted):
        return ip
    hops = [h for value in forwarded for h in value.split(",")]
    for hop in reversed(hops[-MAX_HOPS:]):
        said = _parsed(hop.strip())
        if said is None:  # a trusted proxy wrote no address: stop at the last one believed
            break
        ip = said
        if not _trusted(ip, trusted):
            break
    return ip


def resolve(peer: str, forwarded: Iterable[str], trusted: tuple[Network, ...]) -> str:
    """The client's address of a call from ``peer`` with these ``X-Forwarded-For`` values (each
    may list several, comma-separated), believing only ``trusted`` proxies."""
    ip = _resolve(peer, forwarded, trusted)
    return UNKNOWN if ip is None else _text(ip)


def resolve_key(peer: str, forwarded: Iterable[str], trusted: tuple[Network, ...]) -> str:
    """:func:`key` of :func:`resolve` (the address parsed once)."""
    ip = _resolve(peer, forwarded, trusted)
    return UNKNOWN if ip is None else _key(ip)


def _forwarded(context: Any) -> list[str]:
    return [v.decode() if isinstance(v, bytes) else v
            for k, v in (context.invocation_metadata() or ()) if k == FORWARDED]


def of(context: Any, trusted: tuple[Network, ...]) -> str:
    """The client's address of the call of ``context`` (a ``grpc.aio.ServicerContext``)."""
    return resolve(context.peer() or "", _forwarded(context), trusted)


def client(context: Any, settings: Proxied) -> str:
    """The client's address of a call, believing the proxies of ``CHIEU_TRUSTED_PROXIES``: what
    every service counts a caller's address by."""
    return of(context, proxies(settings.trusted_proxies))


def client_key(context: Any, settings: Proxied) -> str:
    """:func:`key` of :func:`client`: what a limit counts the caller of ``context`` under."""
    return resolve_key(context.peer() or "", _forwarded(context), proxies(settings.trusted_proxies))


def _key(ip: tuple[int, bytes]) -> str:
    if ip[0] == 6:
        return socket.inet_ntop(socket.AF_INET6, ip[1][:8] + bytes(8)) + "/64"
    return _text(ip)


def key(address: str) -> str:
    """What a limit counts ``address`` under: an IPv4 address, an IPv6 address's /64."""
    ip = _packed(_strip(address))
    return address if ip is None else _key(ip)
