"""What a limit check costs a call (issue 27): target ≤ 20 µs per call, in process, each number
beside a baseline measured in the same run (a plain dict lookup and store of the same keys: the
least any keyed count can cost).

- ``Rate.take``: the in-memory rate (GCRA) of :mod:`chieu.kit.limits` over 100,000 keys, most
  calls let through, a quarter refused (what a script hammering from one address meets);
- ``Rate.wait``: the lobby's look before it asks PostgreSQL;
- the lobby's whole check of a sign-in's address: the client's address from the peer and
  ``X-Forwarded-For`` behind a trusted proxy and its key, an IPv6 address's /64
  (:func:`chieu.kit.address.resolve_key`), and ``Rate.wait``;
- the revocation check every service now makes on every call
  (:meth:`chieu.kit.revocations.RevocationList.is_revoked`: the SHA-256 of a real access token
  looked up among 10,000 revoked ones).

Environment: BENCH_LIMITS_CALLS (200,000 per measurement), BENCH_LIMITS_ROUNDS (5; the median).
"""

from __future__ import annotations

import hashlib
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.kit import address, auth
from chieu.kit.limits import Rate
from chieu.kit.revocations import RevocationList
from tests.benchmarks.common import line

CALLS = int(os.environ.get("BENCH_LIMITS_CALLS", "200000"))
ROUNDS = int(os.environ.get("BENCH_LIMITS_ROUNDS", "5"))
TARGET_US = 20.0


def per_call_us(fn: Callable[[int], object], n: int) -> float:
    """The median over rounds of ``fn(i)``'s time per call, i = 0..n-1 (µs)."""
    samples = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        for i in range(n):
            fn(i)
        samples.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(samples)


def main() -> int:
    rng = random.Random(27)
    keys = [f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}" for _ in range(100_000)]
    hot = keys[:100]  # a few addresses make most of the calls, as a script would
    stream = [hot[(i // 4) % 100] if i % 4 else keys[i % len(keys)] for i in range(CALLS)]

    plain: dict[str, float] = {}

    def baseline(i: int) -> object:
        k = stream[i]
        v = plain.get(k, 0.0)
        plain[k] = v + 1.0
        return v

    base = per_call_us(baseline, CALLS)
    line("baseline: dict lookup and store", base, "µs/call", "", True)

    clock = [0.0]
    rate = Rate(20, 3600.0)  # the new-player limit's default: 20 an hour

    def take(i: int) -> object:
        clock[0] += 0.001  # 1,000 calls a second of simulated time: the hot keys go over their limit
        return rate.take(stream[i], now=clock[0])

    t_take = per_call_us(take, CALLS)
    refused = sum(1 for k in hot if rate.wait(k, now=clock[0]) > 0)
    line("Rate.take (GCRA, 100k keys)", t_take, "µs/call", f"<= {TARGET_US:g}", t_take <= TARGET_US,
         f"(ratio to baseline {t_take / base:.1f}x; {refused}/100 hot keys refused at the end)")

    def wait(i: int) -> object:
        return rate.wait(stream[i], now=clock[0])

    t_wait = per_call_us(wait, CALLS)
    line("Rate.wait", t_wait, "µs/call", f"<= {TARGET_US:g}", t_wait <= TARGET_US,
         f"(ratio to baseline {t_wait / base:.1f}x)")

    trusted = address.proxies("127.0.0.1/32,::1/128")
    peers = ["ipv4:127.0.0.1:51234"] * 3 + ["ipv6:[::1]:40000"]
    forwarded = [[f"6.6.6.6, {k}"] if j % 3 else [f"2001:db8:{j % 65536:x}::{j % 7 + 1}"]
                 for j, k in enumerate(keys[:1000])]

    def whole(i: int) -> object:
        return rate.wait("new:" + address.resolve_key(peers[i & 3], forwarded[i % 1000], trusted), now=clock[0])

    t_whole = per_call_us(whole, CALLS // 4)
    line("address + key + Rate.wait (a sign-in's check)", t_whole, "µs/call", f"<= {TARGET_US:g}",
         t_whole <= TARGET_US, f"(ratio to baseline {t_whole / base:.1f}x)")

    signer = auth.Signer.generate()
    tokens = [signer.sign(f"g-{i:016x}", ("player",), 900, sid=f"{i:024x}") for i in range(2000)]

    async def nothing(after: int) -> tuple[list[tuple[bytes, int]], int]:
        return [], after

    revoked = RevocationList(nothing)
    far = int(time.time() * 1000) + 3_600_000
    revoked.revoked = {hashlib.sha256(f"revoked-{i}".encode()).digest(): far for i in range(10_000)}

    def is_revoked(i: int) -> object:
        return revoked.is_revoked(tokens[i % 2000])

    t_rev = per_call_us(is_revoked, CALLS // 2)
    line("revocation check (SHA-256 of the token)", t_rev, "µs/call", f"<= {TARGET_US:g}", t_rev <= TARGET_US,
         f"(ratio to baseline {t_rev / base:.1f}x; token {len(tokens[0])} chars)")
    return 0 if max(t_take, t_wait, t_whole, t_rev) <= TARGET_US else 1


if __name__ == "__main__":
    sys.exit(main())
