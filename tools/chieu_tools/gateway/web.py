"""Builds the reference front-end (``web/``): ``npm ci`` when its packages are missing or stale,
then the bundle (``web/dist``) and the node tests (``web/build``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def ensure_built(web_dir: Path, *, rebuild: bool = False) -> Path:
    """``web_dir/dist``, built (``rebuild``: even if it exists). Needs node and npm."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise FileNotFoundError("node and npm are needed for the web front-end (Node 20 or newer)")
    lock = web_dir / "package-lock.json"
    stamp = web_dir / "node_modules" / ".package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=web_dir, check=True)
    dist = web_dir / "dist"
    if rebuild or not (dist / "app.js").exists():
        subprocess.run(["node", "scripts/build.mjs"], cwd=web_dir, check=True)
    return dist
