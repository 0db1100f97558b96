"""Provably fair randomness: every random choice of a hand derives from its seed material.

Algorithm ``chieu-fair-v1`` (versioned; a change of algorithm gets a new id):

* seed material = SHA-256 over ``"chieu-fair-v1" || server_seed || for each client seed in
  seat order: uint32-be(len) || seed``;
* a stream of bytes = HMAC-SHA256(key = seed material, msg = label || uint64-be(counter)),
  counter 0, 1, 2, ... concatenated (HMAC in counter mode), one stream per ``label``;
* an integer below ``n`` = the next 8 bytes, big-endian, rejected and redrawn while
  ``>= 2**64 - (2**64 % n)`` (rejection sampling: no modulo bias);
* a shuffle = Fisher-Yates from the last index down, ``j = below(i + 1)``.

Anybody with the revealed server seed and the client seeds re-derives every deal.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

ALGORITHM = "chieu-fair-v1"
T = TypeVar("T")
_SPAN = 1 << 64


def seed_material(server_seed: bytes, client_seeds: Sequence[bytes] = ()) -> bytes:
    """Combine the server seed and the seated players' seeds into the hand's seed material."""
    h = hashlib.sha256(ALGORITHM.encode())
    h.update(server_seed)
    for s in client_seeds:
        h.update(len(s).to_bytes(4, "big"))
        h.update(s)
    return h.digest()


def commitment(server_seed: bytes) -> str:
    """The hex SHA-256 of a server seed: published before the deal, checked after the reveal."""
    return hashlib.sha256(server_seed).hexdigest()


class Stream:
    """A deterministic random stream from seed material and a label (``deal``, ``timeout:7``)."""

    __slots__ = ("_buf", "_counter", "_key", "_label")

    def __init__(self, material: bytes, label: str) -> None:
        self._key = material
        self._label = label.encode()
        self._counter = 0
        self._buf = b""

    def _take(self, n: int) -> bytes:
        while len(self._buf) < n:
            block = hmac.new(
                self._key, self._label + self._counter.to_bytes(8, "big"), hashlib.sha256
            ).digest()
            self._counter += 1
            self._buf += block
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = _SPAN - (_SPAN % n)
        while True:
            x = int.from_bytes(self._take(8), "big")
            if x < limit:
                return x % n

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """A Fisher-Yates shuffle of a copy of ``items``."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def shuffled(material: bytes, items: Sequence[T], label: str = "deal") -> list[T]:
    """``items`` in the order the hand's seed material gives them."""
    return Stream(material, label).shuffle(items)


def choice(material: bytes, items: Sequence[T], label: str) -> T:
    """One of ``items``, chosen by the seed material under ``label``."""
    return items[Stream(material, label).below(len(items))]
