"""The table log's store refuses new records before its volume is full (issue 28): in each overlay,
JetStream's ``max_file_store`` is at most 90% of the NATS volume it writes to. A nats-server whose
write meets a full disk fails the stream until it is restarted; at its own limit it refuses cleanly."""

from __future__ import annotations

import re

import pytest

from .tools import render

UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _bytes(size: str) -> int:
    m = re.fullmatch(r"(\d+)\s*([KMGT]?)(i?B?|B)?", size.strip())
    assert m, size
    return int(m.group(1)) * UNITS[m.group(2)]


@pytest.mark.parametrize("overlay", ["dev", "prod"])
def test_the_log_store_stops_below_its_volume(overlay: str) -> None:
    docs = render(overlay)
    (nats,) = [d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "nats"]
    claims = {c["metadata"]["name"]: c["spec"]["resources"]["requests"]["storage"]
              for c in nats["spec"]["volumeClaimTemplates"]}
    (container,) = [c for c in nats["spec"]["template"]["spec"]["containers"] if c["name"] == "nats"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    confs = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("nats-config")]
    (conf,) = [text for d in confs for name, text in d["data"].items() if name == "nats.conf"]
    store_dir = re.search(r"^\s*store_dir:\s*(\S+)", conf, re.M)
    limit = re.search(r"^\s*max_file_store:\s*(\S+)", conf, re.M)
    assert store_dir and limit, "the NATS config sets store_dir and max_file_store"
    store = store_dir.group(1).strip('"').rstrip("/")
    (volume,) = [claims[name] for path, name in mounts.items()  # JetStream writes under <store_dir>/jetstream
                 if path.rstrip("/") in (store, f"{store}/jetstream") and name in claims]
    assert _bytes(limit.group(1)) <= 0.9 * _bytes(volume), (limit.group(1), volume)


def test_sizes_parse() -> None:
    assert _bytes("9Gi") == 9 << 30 and _bytes("10Gi") == 10 << 30 and _bytes("512Mi") == 512 << 20
