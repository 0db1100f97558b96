"""``python -m chieu.ledger``: run the ledger service."""

from chieu.ledger.app import main

main()
