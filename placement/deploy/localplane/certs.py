"""Certificates for a local control plane, made at run time into its temporary directory: one CA, the
API server's and the webhooks' serving certificates (127.0.0.1 / localhost), an admin client
certificate (group system:masters) and the service-account signing key."""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID_DAYS = 2


@dataclass(frozen=True)
class CertFiles:
    ca: Path
    ca_key: Path
    serving: Path      # API server and webhooks: SANs 127.0.0.1, localhost
    serving_key: Path
    admin: Path        # client certificate, CN admin, O system:masters
    admin_key: Path
    sa_key: Path       # service-account signing key (private) and its public half
    sa_pub: Path


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _write_key(path: Path, key) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


def _name(cn: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _cert(subject, key, issuer, issuer_key, *, ca=False, usages=(), sans=None) -> x509.Certificate:
    now = dt.datetime.now(dt.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
               .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
    else:
        builder = builder.add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(usages)), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def make_certs(directory: Path) -> CertFiles:
    directory.mkdir(parents=True, exist_ok=True)
    files = CertFiles(*(directory / n for n in ("ca.crt", "ca.key", "serving.crt", "serving.key", "admin.crt",
                                                 "admin.key", "sa.key", "sa.pub")))
    ca_key = _key()
    ca_name = _name("atlas-local-ca")
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True)
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    _write_key(files.ca_key, ca_key)
    sans = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost"),
            x509.DNSName("kubernetes.default.svc")]
    serving_key = _key()
    serving = _cert(_name("atlas-local-serving"), serving_key, ca_name, ca_key,
                    usages=[ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH], sans=sans)
    files.serving.write_bytes(serving.public_bytes(serialization.Encoding.PEM))
    _write_key(files.serving_key, serving_key)
    admin_key = _key()
    admin = _cert(_name("atlas-admin", "system:masters"), admin_key, ca_name, ca_key,
                  usages=[ExtendedKeyUsageOID.CLIENT_AUTH])
    files.admin.write_bytes(admin.public_bytes(serialization.Encoding.PEM))
    _write_key(files.admin_key, admin_key)
    sa_key = _key()
    _write_key(files.sa_key, sa_key)
    files.sa_pub.write_bytes(sa_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                              serialization.PublicFormat.SubjectPublicKeyInfo))
    return files
