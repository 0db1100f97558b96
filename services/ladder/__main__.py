"""``python -m chieu.ladder``: run the ladder service."""

from chieu.ladder.app import main

main()
