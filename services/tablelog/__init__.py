"""The table log: what a table's records mean, read by the table service and the auditor alike.

The fold (:mod:`.fold`, a table's state from its records), the codec between the rules cores'
values and the log's messages (:mod:`.codec`), what a record pays and how a hand ends
(:mod:`.money`), the sealing of a hand's hidden parts (:mod:`.sealing`) and the check of a whole
log against the rules (:mod:`.verify`). It imports the
pure rules cores and the log's generated contract (``chieu.table.v1``), never a service's runtime:
no server, no NATS, no database.
"""
