"""The table service: every table's life as an append-only log, replayed through the rules core."""
