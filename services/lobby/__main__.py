"""``python -m chieu.lobby``: run the lobby service."""

from chieu.lobby.app import main

main()
