"""The auditor (``chieu audit``, ``chieu export``, ``chieu replay``): a period of play proved from
the table logs alone — every deal and move — and the ledger and the ladder reconciled with them.

A reader only: it imports no service's runtime code, only the pure rules cores, the table's
fold and verifier (``chieu.table.state``, ``chieu.table.audit``, ``chieu.table.codec``) and the
generated contracts; PostgreSQL is read in read-only transactions, NATS through an ordered
consumer that acknowledges nothing.
"""
