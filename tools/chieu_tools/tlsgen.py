"""A local certificate authority and a server certificate, for ``chieu up --tls`` and the tests
(production certificates come from cert-manager).

:func:`ensure` keeps, in one folder: ``ca.pem`` (a self-signed CA, its key ``ca.key`` never leaves
the folder), ``server.pem`` and ``server.key`` (ECDSA P-256, signed by that CA, for ``localhost``
and ``127.0.0.1`` unless told otherwise). Keys are written mode 0600; everything is generated fresh
per folder, and again when a certificate is within :data:`RENEW_BEFORE` of its end or does not
name the hosts asked for.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID = dt.timedelta(days=90)
"""How long a generated server certificate is valid (the CA: ten times that)."""
RENEW_BEFORE = dt.timedelta(days=7)


@dataclass(frozen=True, slots=True)
class Files:
    """A CA certificate and a server certificate with its key (PEM paths)."""

    ca: Path
    cert: Path
    key: Path


def _write(path: Path, data: bytes, private: bool) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    tmp.replace(path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Chiếu (local)"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_ca(common: str = "Chiếu local CA") -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A fresh self-signed CA."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(_name(common)).issuer_name(_name(common))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + 10 * VALID)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


def make_server(ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, hosts: Sequence[str]
                ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A certificate for ``hosts`` (DNS names or IP addresses) signed by ``ca``, usable by a server
    and as a client certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    names: list[x509.GeneralName] = []
    for h in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            names.append(x509.DNSName(h))
    cert = (x509.CertificateBuilder().subject_name(_name(hosts[0])).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + VALID)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert, key


def _current(files: Files, hosts: Sequence[str]) -> bool:
    """Whether the folder's certificates exist, are not about to end and name ``hosts``."""
    if not (files.ca.exists() and files.cert.exists() and files.key.exists()):
        return False
    cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
    ca = x509.load_pem_x509_certificate(files.ca.read_bytes())
    now = dt.datetime.now(dt.UTC)
    if min(cert.not_valid_after_utc, ca.not_valid_after_utc) - now < RENEW_BEFORE:
        return False
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    have = {str(n) for n in san.get_values_for_type(x509.DNSName)} | {
        str(n) for n in san.get_values_for_type(x509.IPAddress)}
    return set(hosts) <= have and cert.issuer == ca.subject


def ensure(folder: str | Path, hosts: Sequence[str] = ("localhost", "127.0.0.1")) -> Files:
    """The CA and server certificate of ``folder``, generated when missing, ending or not naming
    ``hosts`` (the CA is kept while it is valid, so clients that trust it go on trusting)."""
    d = Path(folder)
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    files = Files(d / "ca.pem", d / "server.pem", d / "server.key")
    if _current(files, hosts):
        return files
    ca_key_path = d / "ca.key"
    ca_ok = files.ca.exists() and ca_key_path.exists() and (
        x509.load_pem_x509_certificate(files.ca.read_bytes()).not_valid_after_utc - dt.datetime.now(dt.UTC)
        > RENEW_BEFORE + VALID)
    if ca_ok:
        ca = x509.load_pem_x509_certificate(files.ca.read_bytes())
        loaded = serialization.load_pem_private_key(ca_key_path.read_bytes(), None)
        assert isinstance(loaded, ec.EllipticCurvePrivateKey)
        ca_key = loaded
    else:
        ca, ca_key = make_ca()
        _write(ca_key_path, _key_pem(ca_key), True)
        _write(files.ca, ca.public_bytes(serialization.Encoding.PEM), False)
    cert, key = make_server(ca, ca_key, hosts)
    _write(files.key, _key_pem(key), True)
    _write(files.cert, cert.public_bytes(serialization.Encoding.PEM), False)
    return files
