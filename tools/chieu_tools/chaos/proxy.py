"""A TCP proxy that can add latency: the chaos run's slow network to one NATS node, with no root
tricks (no ``tc``, no iptables). It runs as its own process in front of the node's client port::

    python -m chieu_tools.chaos.proxy LISTEN_PORT TARGET_PORT DELAY_FILE

and delays every chunk each way by the milliseconds written in ``DELAY_FILE`` (read at most every
50 ms; a missing or empty file is 0), keeping each direction's order. Clients that connect to the
node through it (the services are given its URL in place of the node's) see the node slow; the
node's routes to its peers do not go through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path


class Delay:
    """The current delay in seconds, from the control file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.value = 0.0
        self._read_at = 0.0

    def now(self) -> float:
        t = time.monotonic()
        if t - self._read_at > 0.05:
            self._read_at = t
            try:
                text = self.path.read_text().strip()
                self.value = float(text) / 1000 if text else 0.0
            except (OSError, ValueError):
                self.value = 0.0
        return self.value


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: Delay) -> None:
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()

    sender = asyncio.create_task(send())
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((time.monotonic() + delay.now(), data))
            if not data:
                break
        await sender
    except (ConnectionError, OSError):
        pass
    finally:
        sender.cancel()
        with contextlib.suppress(Exception):
            writer.close()


async def serve(listen_port: int, target_port: int, delay: Delay) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer, delay), _pipe(up_reader, writer, delay),
                             return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    async with server:
        await server.serve_forever()


def main(argv: list[str]) -> None:
    listen_port, target_port, control = int(argv[0]), int(argv[1]), Path(argv[2])
    asyncio.run(serve(listen_port, target_port, Delay(control)))


if __name__ == "__main__":
    main(sys.argv[1:])
