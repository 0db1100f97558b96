"""Every log line of a service goes through one pipeline (issue 36): the third-party libraries'
loggers (nats-py's, asyncpg's, grpc's, through the standard library's ``logging``) as the
service's own, each line with the service's name, in JSON mode one event per line with a
traceback as one structured field; an error repeated as it was written once per window, the next
one saying how many were left out."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import asyncio, logging, time
import nats
from chieu.kit import logs
from chieu.kit.settings import Settings
logs.REPEAT_WINDOW_S = 1.0
logs.configure(Settings(log_format="json"), "ledger")

async def nats_down():  # nats-py logs each failed attempt with its traceback
    try:
        await nats.connect("nats://127.0.0.1:%(port)d", connect_timeout=0.2, reconnect_time_wait=0.01,
                           max_reconnect_attempts=5)
    except Exception:
        pass

asyncio.run(nats_down())
pool = logging.getLogger("asyncpg.pool")
for _ in range(50):
    try:
        raise ConnectionRefusedError("connection refused")
    except ConnectionRefusedError:
        pool.exception("the pool could not connect")
log = logs.get("chieu.ledger.consumer")
for _ in range(20):
    log.error("posting failed", error="database_unavailable")
logging.getLogger("grpc._cython.cygrpc").warning("a grpc warning %%s", "with args")
time.sleep(1.2)
pool.error("the pool could not connect", exc_info=ConnectionRefusedError("connection refused"))
log.error("posting failed", error="database_unavailable")
logging.getLogger("asyncpg.pool").info("below the root's level: not written")
"""


def test_third_party_logs_are_structured_lines_with_the_service_and_repeats_are_counted() -> None:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = subprocess.run([sys.executable, "-c", SCRIPT % {"port": port}], capture_output=True, text=True,
                          timeout=60, check=True)
    lines = [json.loads(line) for line in done.stderr.splitlines()]  # every line one JSON event
    assert lines and all(d["service"] == "ledger" and "timestamp" in d and "level" in d for d in lines)

    nats_lines = [d for d in lines if d.get("logger", "").startswith("nats")]
    assert nats_lines, lines
    assert len(nats_lines) == 1  # six failed attempts, the same error: written once
    assert isinstance(nats_lines[0]["exception"], list) and nats_lines[0]["exception"][0]["exc_type"]

    pool = [d for d in lines if d.get("logger") == "asyncpg.pool"]
    assert [d.get("repeated", 0) for d in pool] == [0, 49]  # 50 within the window, then one after it
    assert pool[0]["level"] == "error" and pool[0]["exception"][0]["exc_type"] == "ConnectionRefusedError"
    ours = [d for d in lines if d["event"] == "posting failed"]
    assert [d.get("repeated", 0) for d in ours] == [0, 19]
    assert any(d["event"] == "a grpc warning with args" and d["logger"] == "grpc._cython.cygrpc" for d in lines)
    assert not any("not written" in d["event"] for d in lines)
