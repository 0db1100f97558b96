"""Settings come from the environment, typed and validated."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.kit import settings as settings_mod
from chieu.kit.settings import Settings, SettingsError, from_env


def test_defaults_without_environment() -> None:
    assert from_env({}) == Settings()


def test_values_are_typed() -> None:
    s = from_env({"NATS_URL": "nats://n:1", "CHIEU_STREAM_REPLICAS": "3", "CHIEU_SHUTDOWN_GRACE_S": "2.5",
                  "CHIEU_LOG_FORMAT": "json"})
    assert (s.nats_url, s.stream_replicas, s.shutdown_grace_s, s.log_format) == ("nats://n:1", 3, 2.5, "json")


@pytest.mark.parametrize("env", [
    {"CHIEU_STREAM_REPLICAS": "three"},
    {"CHIEU_ENV": "staging"},
    {"CHIEU_LOG_FORMAT": "xml"},
    {"CHIEU_ENV": "prod"},  # production without public token keys
])
def test_bad_environments_are_refused(env: dict[str, str]) -> None:
    with pytest.raises(SettingsError):
        from_env(env)


def test_production_with_public_keys_is_fine() -> None:
    s = from_env({"CHIEU_ENV": "prod", "CHIEU_TOKEN_PUBLIC_KEYS": "/etc/chieu/keys/jwks.json"})
    assert s.token_public_keys == "/etc/chieu/keys/jwks.json" and not s.token_private_key


def test_no_constant_secret_and_no_key_by_default() -> None:
    s = Settings()
    assert (s.token_public_keys, s.token_private_key, s.service_token) == ("", "", "")
    assert from_env({"CHIEU_TOKEN_SECRET": "old"}) == Settings()  # the HMAC secret is gone: not read


def test_the_service_credential_is_not_printed() -> None:
    assert "secret-credential" not in repr(Settings(service_token="secret-credential"))


def test_every_setting_is_in_the_configuration_page() -> None:
    """docs/configuration.md's table names every variable a process reads, each in a row of its own."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    missing = [v for v in settings_mod._ENV.values() if not any(f"`{v}`" in row.split("|")[1] for row in rows)]
    assert missing == [], f"settings with no row in docs/configuration.md: {missing}"
