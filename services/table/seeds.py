"""The seeds of a table's deals: the next hand's, committed before and opened now, and the hand
after's, drawn, committed and sealed now (docs/fairness.md)."""

from __future__ import annotations

import os

from chieu.kit import logs
from chieu.kit.errors import precondition
from chieu.table.v1 import log_pb2
from chieu.tablelog import sealing
from chieu.tablelog.fold import Table

log = logs.get("chieu.table")


def seeds_to_deal(keys: sealing.SealKeys, table: Table) -> tuple[bytes, log_pb2.NextSeed]:
    """The seed of ``table``'s next hand (committed before: ``table.next_seed``, opened) and
    the hand after's, drawn, committed and sealed now. A table logged before commitments
    were published ahead has none: its hand gets a fresh seed (the audit says so)."""
    committed = table.next_seed
    try:
        if committed is not None and int(committed.hand_no) == table.hand_no + 1:
            seed = keys.open_seed(table.table_id, committed)
        else:
            seed = os.urandom(sealing.SEED_BYTES)
    except sealing.SealError as e:
        log.error("the committed seed does not open", table_id=table.table_id, reason=str(e))
        raise precondition("seal_key_missing", "this table's next deal is sealed under a key this "
                           "server does not hold; the operator must put it back in the keyset") from None
    return seed, keys.new_seed(table.table_id, table.hand_no + 2)
