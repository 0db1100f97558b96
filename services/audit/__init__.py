"""The auditor (``chieu audit``, ``chieu export``, ``chieu replay``): a period of play proved from
the table logs alone — every deal and move — and the ledger and the ladder reconciled with them.

A reader only: it imports no service's runtime code and no part of the table service, only the
pure rules cores, the table log's package (:mod:`chieu.tablelog`: the fold, the codec, sealing and
the verifier) and the generated contracts; PostgreSQL is read in read-only transactions, NATS through an ordered
consumer that acknowledges nothing.
"""
