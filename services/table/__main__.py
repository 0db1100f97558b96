"""``python -m chieu.table``: run the table service."""

from chieu.table.app import main

main()
