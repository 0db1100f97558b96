"""The client's address: the peer's, and X-Forwarded-For believed only from trusted proxies."""

from __future__ import annotations

import pytest

from chieu.kit import address
from chieu.kit.settings import SettingsError, from_env

LOCAL = address.proxies("127.0.0.1/32, ::1")
GATEWAYS = address.proxies("10.0.0.0/8")


@pytest.mark.parametrize(("peer", "expected"), [
    ("ipv4:203.0.113.7:51234", "203.0.113.7"),
    ("ipv6:[2001:db8::1]:443", "2001:db8::1"),
    ("ipv6:%5B2001:db8::2%5D:443", "2001:db8::2"),
    ("ipv6:[::ffff:198.51.100.9]:80", "198.51.100.9"),  # IPv4-mapped: the IPv4 address
    ("unix:/tmp/socket", address.UNKNOWN),
    ("", address.UNKNOWN),
])
def test_the_peer_is_the_client_without_trusted_proxies(peer: str, expected: str) -> None:
    assert address.resolve(peer, ["1.2.3.4"], ()) == expected


def test_a_header_from_an_untrusted_peer_is_ignored() -> None:
    """A client cannot choose the address it is counted under by sending the header itself."""
    assert address.resolve("ipv4:203.0.113.7:5", ["1.1.1.1"], LOCAL) == "203.0.113.7"
    assert address.resolve("ipv4:127.0.0.1:5", ["1.1.1.1"], GATEWAYS) == "127.0.0.1"


def test_a_trusted_proxy_names_the_client_and_what_the_client_wrote_is_ignored() -> None:
    # the client sent "6.6.6.6" itself; Envoy (trusted) appended the address it saw
    assert address.resolve("ipv4:127.0.0.1:5", ["6.6.6.6, 203.0.113.7"], LOCAL) == "203.0.113.7"
    # two trusted hops (a load balancer, then Envoy): the first untrusted from the right
    assert address.resolve("ipv4:10.0.0.2:5", ["6.6.6.6, 198.51.100.1, 10.0.0.9"], GATEWAYS) == "198.51.100.1"
    assert address.resolve("ipv4:10.0.0.2:5", ["6.6.6.6", "198.51.100.1", "10.0.0.9"], GATEWAYS) == "198.51.100.1"
    # ports and brackets as some proxies write them
    assert address.resolve("ipv4:127.0.0.1:5", ["[2001:db8::5]:443"], LOCAL) == "2001:db8::5"
    assert address.resolve("ipv4:127.0.0.1:5", ["203.0.113.8:8080"], LOCAL) == "203.0.113.8"


def test_a_trusted_proxy_without_a_header_or_with_garbage_is_its_own_address() -> None:
    assert address.resolve("ipv4:127.0.0.1:5", [], LOCAL) == "127.0.0.1"
    assert address.resolve("ipv4:127.0.0.1:5", ["not-an-ip"], LOCAL) == "127.0.0.1"
    assert address.resolve("ipv4:10.0.0.2:5", ["junk, 10.0.0.3"], GATEWAYS) == "10.0.0.3"


def test_an_ipv6_client_is_counted_by_its_64() -> None:
    assert address.key("2001:db8:1:2:aaaa::1") == address.key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address.key("2001:db8:1:3::1") != address.key("2001:db8:1:2::1")
    assert address.key("203.0.113.7") == "203.0.113.7" and address.key(address.UNKNOWN) == address.UNKNOWN


def test_the_key_of_a_call_parses_once_and_agrees() -> None:
    for peer, forwarded in (("ipv4:127.0.0.1:5", ["6.6.6.6, 2001:db8:1:2:aaaa::1"]), ("ipv4:203.0.113.7:5", []),
                            ("unix:/x", []), ("ipv4:127.0.0.1:5", ["garbage"])):
        assert address.resolve_key(peer, forwarded, LOCAL) == address.key(address.resolve(peer, forwarded, LOCAL))


def test_the_setting_is_checked() -> None:
    assert from_env({"CHIEU_TRUSTED_PROXIES": "127.0.0.1/32,::1/128, 10.1.0.0/16"}).trusted_proxies
    with pytest.raises(SettingsError):
        from_env({"CHIEU_TRUSTED_PROXIES": "10.0.0.0/8, envoy"})
