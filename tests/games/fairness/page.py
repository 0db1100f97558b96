"""chieu-fair-v1 written from docs/fairness.md alone, with plain ``hashlib`` and ``hmac``: it
imports nothing of ``chieu`` (tests/games/test_fairness_vectors.py checks the source of this
package). Each game that draws at random has its deal beside it, in ``<key>.py``."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence
from typing import Any

Vector = dict[str, Any]
"""One ```vector``` block of the page, parsed."""


class FromTheDoc:
    """chieu-fair-v1 as docs/fairness.md states it, and nothing else."""

    def __init__(self, server_seed: bytes, client_seeds: Sequence[bytes]) -> None:
        pre = b"chieu-fair-v1" + server_seed
        for c in client_seeds:
            pre += len(c).to_bytes(4, "big") + c
        self.preimage = pre
        self.material = hashlib.sha256(pre).digest()

    # -- the algorithm

    def block(self, label: str, k: int) -> bytes:
        return hmac.new(self.material, label.encode() + k.to_bytes(8, "big"), hashlib.sha256).digest()

    class Stream:
        def __init__(self, spec: FromTheDoc, label: str) -> None:
            self.spec, self.label, self.w = spec, label, 0

        def draw(self) -> int:
            block = self.spec.block(self.label, self.w // 4)
            x = int.from_bytes(block[8 * (self.w % 4):8 * (self.w % 4) + 8], "big")
            self.w += 1
            return x

        def below(self, n: int) -> int:
            limit = 2**64 - 2**64 % n
            while True:
                x = self.draw()
                if x < limit:
                    return x % n

        def shuffle(self, items: Sequence[Any]) -> list[Any]:
            out = list(items)
            for i in range(len(out) - 1, 0, -1):
                j = self.below(i + 1)
                out[i], out[j] = out[j], out[i]
            return out

    def stream(self, label: str) -> FromTheDoc.Stream:
        return FromTheDoc.Stream(self, label)

    def choice(self, items: Sequence[Any], label: str) -> Any:
        return items[self.stream(label).below(len(items))]


Spec = Callable[[int], FromTheDoc]
"""The page's seeds for a hand of n players."""


def rows(v: Vector, key: str) -> list[int]:
    """A vector's grid, row after row."""
    return [x for row in v[key] for x in row]
