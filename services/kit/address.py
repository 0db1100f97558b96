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
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chieu.kit.settings import Settings

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

UNKNOWN = "unknown"
"""The address of a peer that is no IP (a Unix socket, an in-process channel)."""
FORWARDED = "x-forwarded-for"
MAX_HOPS = 16
"""The most ``X-Forwarded-For`` entries looked at (from the right)."""


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
            out.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise SettingsError(f"CHIEU_TRUSTED_PROXIES: {item!r} is not an address or a CIDR network") from None
    return tuple(out)


def _plain(ip: IP) -> IP:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def parse(text: str) -> IP | None:
    """The IP of an address as a peer string or a header entry writes it (``ipv4:1.2.3.4:5``,
    ``ipv6:[::1]:5``, ``1.2.3.4``, ``1.2.3.4:80``, ``[2001:db8::1]:443``, ``2001:db8::1``,
    percent-encoded brackets of a peer string included); ``None`` for anything else."""
    t = text.strip()
    if t.startswith(("ipv4:", "ipv6:")):
        t = t[5:]
    t = t.replace("%5B", "[").replace("%5D", "]")
    if t.startswith("["):
        t = t[1:t.find("]")] if "]" in t else ""
    elif t.count(":") == 1:  # IPv4 with a port
        t = t.split(":", 1)[0]
    try:
        return _plain(ipaddress.ip_address(t))
    except ValueError:
        return None


def _trusted(ip: IP, trusted: Sequence[Network]) -> bool:
    return any(ip.version == n.version and ip in n for n in trusted)


def resolve(peer: str, forwarded: Iterable[str], trusted: Sequence[Network]) -> str:
    """The client's address of a call from ``peer`` with these ``X-Forwarded-For`` values (each
    may list several, comma-separated), believing only ``trusted`` proxies."""
    ip = parse(peer)
    if ip is None:
        return UNKNOWN
    if not trusted or not _trusted(ip, trusted):
        return str(ip)
    hops = [h for value in forwarded for h in value.split(",")]
    for hop in reversed(hops[-MAX_HOPS:]):
        said = parse(hop)
        if said is None:  # a trusted proxy wrote no address: stop at the last one believed
            break
        ip = said
        if not _trusted(ip, trusted):
            break
    return str(ip)


def of(context: Any, trusted: Sequence[Network]) -> str:
    """The client's address of the call of ``context`` (a ``grpc.aio.ServicerContext``)."""
    forwarded = [v.decode() if isinstance(v, bytes) else v
                 for k, v in (context.invocation_metadata() or ()) if k == FORWARDED]
    return resolve(context.peer() or "", forwarded, trusted)


def client(context: Any, settings: Settings) -> str:
    """The client's address of a call, believing the proxies of ``CHIEU_TRUSTED_PROXIES``: what
    every service counts a caller's address by."""
    return of(context, proxies(settings.trusted_proxies))


def key(address: str) -> str:
    """What a limit counts ``address`` under: an IPv4 address, an IPv6 address's /64."""
    ip = parse(address)
    if ip is None:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)
