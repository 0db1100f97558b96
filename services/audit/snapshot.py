"""Read-only views of the books: one repeatable-read, read-only transaction per database, so
each check reads one consistent state of each (the ledger's and the ladder's may be two
databases, as in deploy/: one CloudNativePG cluster per service)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any


@contextlib.asynccontextmanager
async def read_only(*conns: Any) -> AsyncIterator[None]:
    """A read-only, repeatable-read transaction on each distinct connection of ``conns``, taken in
    order (the ladder's before the ledger's: a reward the ladder marks paid was posted before)."""
    async with contextlib.AsyncExitStack() as stack:
        for conn in {id(c): c for c in conns}.values():
            await conn.execute("SET default_transaction_read_only = on")
            await stack.enter_async_context(conn.transaction(isolation="repeatable_read", readonly=True))
        yield
