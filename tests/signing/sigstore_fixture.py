#!/usr/bin/env python3
"""Synthetic Sigstore fixture generator for khub's keyless-signature verifier.

Usage: python sigstore_fixture.py OUT_DIR
       python sigstore_fixture.py --sign [--workflow URI] ROOT_DIR METADATA_JSON [METADATA_JSON ...]

Builds a private "Sigstore instance" (Fulcio-like CA chain, CT log key, Rekor v1
log key, Ed25519 Rekor v2 log key) with real cryptography, signs a kernel
metadata.json the way `sigstore sign` + Rekor v1 (or v2) would, and writes:

  OUT_DIR/trusted_root.json            TrustedRoot for the synthetic instance (with a TSA)
  OUT_DIR/trusted_root_no_tsa.json     the same root with no timestampAuthorities
  OUT_DIR/<case>/metadata.json         the artifact (possibly tampered)
  OUT_DIR/<case>/metadata.json.sigstore  bundle v0.3 (possibly corrupted)
  OUT_DIR/cases.json                   [{name, identity, oracle, reason[, root]}]; "root"
                                       names the root file to verify with, only where it
                                       is not trusted_root.json

The tsa_* cases add RFC 3161 timestamps from a synthetic Timestamp Authority
(TimeStampResp DER built here, so genTime is under our control).

The v2_* cases log a hashedrekord 0.0.2 entry in a Rekor v2 (tiles) log instead:
no integratedTime and no SET, so their only verified time is a TSA timestamp.

The "oracle" verdict of every case comes from actually running sigstore-python's
Verifier with kernels' GitHubWorkflowPolicy, so a C++ verifier can be checked
against the reference implementation case by case.

With --sign, writes ROOT_DIR/trusted_root.json (the same synthetic root) and, next
to each given file, FILE.sigstore: a keyless bundle over the file's current bytes,
built like the "good" case (or as workflow URI with --workflow), then prints the
oracle's verdict per file as "<path>: ok" or "<path>: fail: <reason>".

Everything is deterministic: keys are derived from fixed labels, ECDSA uses
RFC 6979 nonces, and all timestamps are fixed (in the past, so the trusted
root's validFor ranges are already active).
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import hashlib
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.backends.openssl import backend as _ossl
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

# ---------------------------------------------------------------------------
# Constants describing the synthetic instance and the identity under test.
# ---------------------------------------------------------------------------

UTC = dt.timezone.utc
# All trust material becomes valid at this instant (must be <= "now" when the
# oracle runs, because sigstore-python ignores keys whose validFor starts later).
TRUST_START = dt.datetime(2025, 1, 1, tzinfo=UTC)
# The signing event. The leaf is valid for 10 minutes from here (Fulcio profile).
LEAF_NOT_BEFORE = dt.datetime(2026, 3, 10, 14, 30, 5, tzinfo=UTC)
LEAF_LIFETIME = dt.timedelta(minutes=10)
# Rekor integrates the entry shortly after the certificate was issued.
INTEGRATION_DELAY_S = 7

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
GOOGLE_ISSUER = "https://accounts.google.com"
REPO = "huggingface/kernels-community"
WF_PREFIX = f"https://github.com/{REPO}/.github/workflows"
BUILD_URI = f"{WF_PREFIX}/build.yaml@refs/heads/main"
MAC_URI = f"{WF_PREFIX}/build-mac.yaml@refs/heads/main"
# Same identity that kernels.verify.DEFAULT_POLICIES trusts.
SIGNER_URIS = [
    BUILD_URI,
    MAC_URI,
    f"{WF_PREFIX}/build-windows.yaml@refs/heads/main",
    f"{WF_PREFIX}/sign-old-builds.yaml@refs/heads/main",
]

REKOR_URL = "https://rekor.khub-synthetic.example"
REKOR_ORIGIN = "rekor.khub-synthetic.example - 4242424242424242424"
# Name in the checkpoint signature line: the origin's first token (no spaces allowed).
REKOR_NOTE_NAME = "rekor.khub-synthetic.example"
# Rekor v1 reports a global logIndex while the inclusion proof uses the index
# inside the active shard; keep them different like production does.
SHARD_BASE_INDEX = 180_000_000
TREE_SIZE = 14  # proof for index 9 of 14 has both "inner" and "border" hashes
LEAF_INDEX_IN_SHARD = 9

# Rekor v2: a separate shard with its own Ed25519 key. Its checkpoint origin is
# the schema-less URL (C2SP tlog-tiles) and doubles as the note key name.
REKOR_V2_URL = "https://rekor-v2.khub-synthetic.example"
REKOR_V2_ORIGIN = "rekor-v2.khub-synthetic.example"
# v2 logIndex is the index inside the shard (no global counter), so the entry's
# logIndex equals inclusionProof.logIndex. Proof for 6 of 11: inner + border hashes.
V2_TREE_SIZE = 11
V2_LEAF_INDEX = 6

# Fulcio OIDC extension OIDs (see sigstore.verify.policy).
OID_ISSUER_V1 = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
OID_WORKFLOW_TRIGGER = ObjectIdentifier("1.3.6.1.4.1.57264.1.2")
OID_WORKFLOW_SHA = ObjectIdentifier("1.3.6.1.4.1.57264.1.3")
OID_WORKFLOW_NAME = ObjectIdentifier("1.3.6.1.4.1.57264.1.4")
OID_WORKFLOW_REPO = ObjectIdentifier("1.3.6.1.4.1.57264.1.5")
OID_WORKFLOW_REF = ObjectIdentifier("1.3.6.1.4.1.57264.1.6")
OID_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
OID_BUILD_SIGNER_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.9")
OID_BUILD_SIGNER_DIGEST = ObjectIdentifier("1.3.6.1.4.1.57264.1.10")
OID_RUNNER_ENV = ObjectIdentifier("1.3.6.1.4.1.57264.1.11")
OID_SOURCE_REPO_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.12")
OID_SOURCE_REPO_DIGEST = ObjectIdentifier("1.3.6.1.4.1.57264.1.13")
OID_SOURCE_REPO_REF = ObjectIdentifier("1.3.6.1.4.1.57264.1.14")
OID_SCT_LIST = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")

# RFC 3161 / CMS object identifiers (dotted; encoded by der_oid).
OID_SHA256 = "2.16.840.1.101.3.4.2.1"
OID_ECDSA_SHA256 = "1.2.840.10045.4.3.2"
OID_SIGNED_DATA = "1.2.840.113549.1.7.2"
OID_CT_TSTINFO = "1.2.840.113549.1.9.16.1.4"
OID_ATTR_CONTENT_TYPE = "1.2.840.113549.1.9.3"
OID_ATTR_MESSAGE_DIGEST = "1.2.840.113549.1.9.4"
OID_ATTR_SIGNING_TIME = "1.2.840.113549.1.9.5"
OID_ATTR_SIGNING_CERT_V2 = "1.2.840.113549.1.9.16.2.47"
# TSA policy under IANA's documentation enterprise number (RFC 5612); nobody pins it.
OID_TSA_POLICY = "1.3.6.1.4.1.32473.1"
TSA_URL = "https://tsa.khub-synthetic.example"
# The TSA answers right after signing, before the Rekor upload (INTEGRATION_DELAY_S).
TSA_DELAY_S = 6
# sigstore-python's MAX_ALLOWED_TIMESTAMP: more timestamps than this reject the bundle.
MAX_TIMESTAMPS = 32
DEFAULT_ROOT = "trusted_root.json"
NO_TSA_ROOT = "trusted_root_no_tsa.json"

# Curve orders, used to map a hash onto a valid private scalar.
_ORDER = {
    "secp256r1": 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
    "secp384r1": int(
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF"
        "581A0DB248B0A77AECEC196ACCC52973",
        16,
    ),
}

# ---------------------------------------------------------------------------
# Small primitives.
# ---------------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def derive_key(label: str, curve: ec.EllipticCurve) -> ec.EllipticCurvePrivateKey:
    """Deterministic EC key from a label, so fixtures are byte-stable."""
    n = _ORDER[curve.name]
    seed = hashlib.sha512(b"khub-sigstore-fixture/" + label.encode()).digest()
    return ec.derive_private_key(int.from_bytes(seed, "big") % (n - 1) + 1, curve)


_DETERMINISTIC = _ossl.ecdsa_deterministic_supported()


def ecdsa_sign(key: ec.EllipticCurvePrivateKey, data: bytes, h: hashes.HashAlgorithm | None = None) -> bytes:
    """ECDSA (DER signature); RFC 6979 nonces when OpenSSL supports them."""
    algo = ec.ECDSA(h or hashes.SHA256(), deterministic_signing=_DETERMINISTIC)
    return key.sign(data, algo)


def spki_der(key: ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    """RFC 6962 log id, used by sigstore for CT and Rekor keys: sha256(SPKI DER)."""
    return hashlib.sha256(spki_der(key)).digest()


def der_len(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw


def der_utf8(s: str) -> bytes:
    """DER UTF8String: the encoding Fulcio uses for the '.8'+ OIDC extensions."""
    raw = s.encode()
    return b"\x0c" + der_len(len(raw)) + raw


def der_octets(raw: bytes) -> bytes:
    return b"\x04" + der_len(len(raw)) + raw


def der(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + der_len(len(content)) + content


def der_seq(*items: bytes) -> bytes:
    return der(0x30, b"".join(items))


def der_set(*items: bytes) -> bytes:
    """DER SET OF: elements sorted by their encodings (OpenSSL re-encodes signed
    attributes before checking the CMS signature, so the order must be canonical)."""
    return der(0x31, b"".join(sorted(items)))


def der_int(n: int) -> bytes:
    """Non-negative INTEGER, minimal two's complement (leading 0 when the top bit is set)."""
    return der(0x02, n.to_bytes(n.bit_length() // 8 + 1, "big"))


def der_oid(dotted: str) -> bytes:
    arcs = [int(a) for a in dotted.split(".")]
    body = bytearray()
    for arc in [arcs[0] * 40 + arcs[1]] + arcs[2:]:
        chunk = [arc & 0x7F]
        while arc > 0x7F:
            arc >>= 7
            chunk.append(0x80 | (arc & 0x7F))
        body += bytes(reversed(chunk))
    return der(0x06, bytes(body))


def der_gentime(t: dt.datetime) -> bytes:
    return der(0x18, t.astimezone(UTC).strftime("%Y%m%d%H%M%SZ").encode())


def der_utctime(t: dt.datetime) -> bytes:
    return der(0x17, t.astimezone(UTC).strftime("%y%m%d%H%M%SZ").encode())


def serial_for(label: str) -> int:
    # Positive, < 2^159: within the 20-octet limit that WebPKI validation enforces.
    return int.from_bytes(hashlib.sha256(b"serial/" + label.encode()).digest()[:19], "big") | 1


def u(n: int, width: int) -> bytes:
    return n.to_bytes(width, "big")


# ---------------------------------------------------------------------------
# Certificate authority ("Fulcio") and CT log.
# ---------------------------------------------------------------------------


@dataclass
class CA:
    root_key: ec.EllipticCurvePrivateKey
    root: x509.Certificate
    inter_key: ec.EllipticCurvePrivateKey
    inter: x509.Certificate


def _name(cn: str) -> x509.Name:
    return x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "khub-synthetic.example"),
        x509.NameAttribute(NameOID.COMMON_NAME, cn),
    ])


def make_ca(label: str) -> CA:
    """Self-signed P-384 root + P-384 intermediate, shaped like Fulcio's chain."""
    not_before = TRUST_START
    not_after = dt.datetime(2035, 1, 1, tzinfo=UTC)
    root_key = derive_key(f"{label}/root", ec.SECP384R1())
    inter_key = derive_key(f"{label}/intermediate", ec.SECP384R1())
    root_name, inter_name = _name(f"{label}-root"), _name(f"{label}-intermediate")
    ca_usage = x509.KeyUsage(
        digital_signature=False, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
        encipher_only=False, decipher_only=False,
    )
    root = (
        x509.CertificateBuilder()
        .subject_name(root_name).issuer_name(root_name)
        .public_key(root_key.public_key())
        .serial_number(serial_for(f"{label}/root"))
        .not_valid_before(not_before).not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
        .add_extension(ca_usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(root_key.public_key()), critical=False)
        .sign(root_key, hashes.SHA384(), ecdsa_deterministic=_DETERMINISTIC)
    )
    inter = (
        x509.CertificateBuilder()
        .subject_name(inter_name).issuer_name(root_name)
        .public_key(inter_key.public_key())
        .serial_number(serial_for(f"{label}/intermediate"))
        .not_valid_before(not_before).not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(ca_usage, critical=True)
        # Fulcio's intermediate carries codeSigning; not the CT precert-signing EKU,
        # so sigstore-python takes it (chain[0]) as the SCT issuer.
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(inter_key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(root_key.public_key()), critical=False)
        .sign(root_key, hashes.SHA384(), ecdsa_deterministic=_DETERMINISTIC)
    )
    return CA(root_key, root, inter_key, inter)


def sct_list_bytes(ct_key: ec.EllipticCurvePrivateKey, issuer: x509.Certificate, precert_tbs: bytes,
                   timestamp_ms: int, corrupt: bool) -> bytes:
    """RFC 6962 v1 precert SCT, wrapped in a TLS SignedCertificateTimestampList."""
    issuer_key_hash = hashlib.sha256(spki_der(issuer.public_key())).digest()
    extensions = b""
    # digitally-signed struct: version, signature_type=certificate_timestamp(0),
    # timestamp(u64 ms), entry_type=precert_entry(1), issuer_key_hash[32],
    # TBSCertificate<u24>, CtExtensions<u16>.
    signed = (
        u(0, 1) + u(0, 1) + u(timestamp_ms, 8) + u(1, 2)
        + issuer_key_hash + u(len(precert_tbs), 3) + precert_tbs
        + u(len(extensions), 2) + extensions
    )
    sig = bytearray(ecdsa_sign(ct_key, signed))
    if corrupt:
        sig[-1] ^= 0x01  # still well-formed DER, but a different 's' value
    # SCT: version, log_id[32], timestamp, extensions<u16>, hash_alg=sha256(4),
    # sig_alg=ecdsa(3), signature<u16>.
    sct = (
        u(0, 1) + key_id(ct_key.public_key()) + u(timestamp_ms, 8)
        + u(len(extensions), 2) + extensions + u(4, 1) + u(3, 1) + u(len(sig), 2) + bytes(sig)
    )
    return u(len(sct) + 2, 2) + u(len(sct), 2) + sct


@dataclass
class LeafSpec:
    """Identity and profile knobs of one Fulcio leaf certificate."""
    label: str
    signer_uri: str = BUILD_URI
    source_repo: str = REPO
    issuer: str = GITHUB_ISSUER
    code_signing: bool = True
    eku: bool = True  # False: no ExtendedKeyUsage extension at all
    key_usage: bool = True  # False: no KeyUsage extension at all
    sct: str = "good"  # "good" | "bad" | "none"


def make_leaf(spec: LeafSpec, ca: CA, ct_key: ec.EllipticCurvePrivateKey) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """Fulcio-profile leaf for a GitHub Actions identity, with an embedded precert SCT."""
    key = derive_key(f"leaf/{spec.label}", ec.SECP256R1())
    repo_url = f"https://github.com/{spec.source_repo}"
    commit = hashlib.sha1(spec.label.encode()).hexdigest()
    ref = "refs/heads/main"

    usage = x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=False, crl_sign=False,
        encipher_only=False, decipher_only=False,
    )
    eku = ExtendedKeyUsageOID.CODE_SIGNING if spec.code_signing else ExtendedKeyUsageOID.SERVER_AUTH

    def raw(oid: ObjectIdentifier, value: bytes) -> x509.UnrecognizedExtension:
        return x509.UnrecognizedExtension(oid, value)

    exts: list[tuple[x509.ExtensionType, bool]] = [
        *([(usage, True)] if spec.key_usage else []),
        *([(x509.ExtendedKeyUsage([eku]), False)] if spec.eku else []),
        (x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False),
        (x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.inter_key.public_key()), False),
        # Empty subject, so the SAN must be critical (RFC 5280 4.2.1.6).
        (x509.SubjectAlternativeName([x509.UniformResourceIdentifier(spec.signer_uri)]), True),
        # Legacy '.1'..'.6' extensions hold raw (non-DER) bytes.
        (raw(OID_ISSUER_V1, spec.issuer.encode()), False),
        (raw(OID_WORKFLOW_TRIGGER, b"push"), False),
        (raw(OID_WORKFLOW_SHA, commit.encode()), False),
        (raw(OID_WORKFLOW_NAME, b"Build kernels"), False),
        (raw(OID_WORKFLOW_REPO, spec.source_repo.encode()), False),
        (raw(OID_WORKFLOW_REF, ref.encode()), False),
        # '.8'+ extensions are DER UTF8Strings.
        (raw(OID_ISSUER_V2, der_utf8(spec.issuer)), False),
        (raw(OID_BUILD_SIGNER_URI, der_utf8(spec.signer_uri)), False),
        (raw(OID_BUILD_SIGNER_DIGEST, der_utf8(commit)), False),
        (raw(OID_RUNNER_ENV, der_utf8("github-hosted")), False),
        (raw(OID_SOURCE_REPO_URI, der_utf8(repo_url)), False),
        (raw(OID_SOURCE_REPO_DIGEST, der_utf8(commit)), False),
        (raw(OID_SOURCE_REPO_REF, der_utf8(ref)), False),
    ]

    def build(extra: list[tuple[x509.ExtensionType, bool]]) -> x509.Certificate:
        b = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([]))
            .issuer_name(ca.inter.subject)
            .public_key(key.public_key())
            .serial_number(serial_for(f"leaf/{spec.label}"))
            .not_valid_before(LEAF_NOT_BEFORE)
            .not_valid_after(LEAF_NOT_BEFORE + LEAF_LIFETIME)
        )
        for ext, critical in exts + extra:
            b = b.add_extension(ext, critical=critical)
        return b.sign(ca.inter_key, hashes.SHA384(), ecdsa_deterministic=_DETERMINISTIC)

    # Precert flow: the CT log signs the TBS *without* the SCT extension; the SCT
    # extension is appended last so removing it yields exactly that TBS.
    precert = build([])
    if spec.sct == "none":
        return precert, key
    ts_ms = int(LEAF_NOT_BEFORE.timestamp()) * 1000 + 250
    sct_list = sct_list_bytes(ct_key, ca.inter, precert.tbs_certificate_bytes, ts_ms, spec.sct == "bad")
    final = build([(raw(OID_SCT_LIST, der_octets(sct_list)), False)])
    assert final.tbs_precertificate_bytes == precert.tbs_certificate_bytes
    return final, key


# ---------------------------------------------------------------------------
# Rekor v1: hashedrekord body, RFC 6962 Merkle tree, SET and checkpoint.
# ---------------------------------------------------------------------------


def canonical_json(obj: object) -> bytes:
    """RFC 8785 for our inputs (ASCII strings, small ints): sorted keys, no spaces."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def hashedrekord_body(cert: x509.Certificate, signature: bytes, digest: bytes) -> bytes:
    """hashedrekord 0.0.1 entry as Rekor stores it (canonicalized JSON)."""
    pem = cert.public_bytes(serialization.Encoding.PEM)
    return canonical_json({
        "apiVersion": "0.0.1",
        "kind": "hashedrekord",
        "spec": {
            "data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
            "signature": {"content": b64(signature), "publicKey": {"content": b64(pem)}},
        },
    })


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """Largest power of two strictly smaller than n (RFC 6962 section 2.1)."""
    k = 1
    while k << 1 < n:
        k <<= 1
    return k


def tree_root(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return node_hash(tree_root(leaves[:k]), tree_root(leaves[k:]))


def inclusion_path(index: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 6962 PATH(m, D[n]), ordered from the leaf level upwards."""
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return inclusion_path(index, leaves[:k]) + [tree_root(leaves[k:])]
    return inclusion_path(index - k, leaves[k:]) + [tree_root(leaves[:k])]


def filler_leaves(label: str, count: int) -> list[bytes]:
    """Leaf hashes of other (unrelated) log entries around ours."""
    return [leaf_hash(canonical_json({"filler": f"{label}/{i}"})) for i in range(count)]


def signed_checkpoint(rekor_key: ec.EllipticCurvePrivateKey, size: int, root: bytes, corrupt: bool) -> str:
    """Signed note: body lines, blank line, '— <name> base64(keyhint[4] || sig)'."""
    note = f"{REKOR_ORIGIN}\n{size}\n{b64(root)}\n"
    sig = bytearray(ecdsa_sign(rekor_key, note.encode()))
    if corrupt:
        sig[-1] ^= 0x01
    hint = key_id(rekor_key.public_key())[:4]
    return note + "\n" + f"\u2014 {REKOR_NOTE_NAME} {b64(hint + bytes(sig))}\n"


# ---------------------------------------------------------------------------
# Rekor v2: hashedrekord 0.0.2 body and an Ed25519 C2SP checkpoint.
# ---------------------------------------------------------------------------

# The Fulcio leaf is P-256; this is what sigstore-python's _get_key_details maps it to.
LEAF_KEY_DETAILS = "PKIX_ECDSA_P256_SHA_256"


def derive_ed25519(label: str) -> ed25519.Ed25519PrivateKey:
    """Deterministic Ed25519 key: the 32-byte seed is the private key."""
    seed = hashlib.sha256(b"khub-sigstore-fixture/" + label.encode()).digest()
    return ed25519.Ed25519PrivateKey.from_private_bytes(seed)


def v2_log_id(key: ed25519.Ed25519PublicKey) -> bytes:
    """C2SP signed-note key ID, sha256(name || 0x0A || 0x01 (Ed25519) || raw key): the
    Rekor v2 spec's log ID. Its first 4 bytes are the checkpoint's key hint, which is
    what sigstore-python compares with logId.keyId[:4]. It is not sha256(SPKI), so the
    keyring lookup misses and sigstore-python falls back to trying every tlog key."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(REKOR_V2_ORIGIN.encode() + b"\n\x01" + raw).digest()


def hashedrekord_v2_body(cert: x509.Certificate, signature: bytes, digest: bytes,
                         key_details: str = LEAF_KEY_DETAILS) -> bytes:
    """hashedrekord 0.0.2 entry: protojson field names, bytes as standard base64
    (raw digest, not hex; DER certificate, not PEM), canonicalized (RFC 8785)."""
    return canonical_json({
        "apiVersion": "0.0.2",
        "kind": "hashedrekord",
        "spec": {"hashedRekordV002": {
            "data": {"algorithm": "SHA2_256", "digest": b64(digest)},
            "signature": {
                "content": b64(signature),
                "verifier": {
                    "keyDetails": key_details,
                    "x509Certificate": {"rawBytes": b64(cert.public_bytes(serialization.Encoding.DER))},
                },
            },
        }},
    })


def signed_checkpoint_v2(key: ed25519.Ed25519PrivateKey, size: int, root: bytes, corrupt: bool) -> str:
    """C2SP checkpoint: origin, size, root; signed by '— <origin> base64(keyid[4] || sig)'."""
    note = f"{REKOR_V2_ORIGIN}\n{size}\n{b64(root)}\n"
    sig = bytearray(key.sign(note.encode()))  # pure Ed25519 over the note text
    if corrupt:
        sig[0] ^= 0x01  # still 64 bytes: only the signature check can catch it
    hint = v2_log_id(key.public_key())[:4]
    return note + "\n" + f"\u2014 {REKOR_V2_ORIGIN} {b64(hint + bytes(sig))}\n"


# ---------------------------------------------------------------------------
# RFC 3161 Timestamp Authority. `openssl ts -reply` always stamps the current
# time, so TimeStampResp is assembled here: genTime must be chosen per case.
# ---------------------------------------------------------------------------


@dataclass
class TSA:
    root: x509.Certificate
    inter: x509.Certificate
    leaf: x509.Certificate
    leaf_key: ec.EllipticCurvePrivateKey
    # A second signing leaf from the same intermediate (so it chains to the trusted
    # TSA root) that the trusted root does not list: tokens for tsa_other_signer.
    other_leaf: x509.Certificate
    other_leaf_key: ec.EllipticCurvePrivateKey


def _tsa_leaf(ca: CA, label: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """TSA signing leaf under ca's intermediate: what RFC 3161 and OpenSSL's
    timestamp-sign purpose require: EKU timeStamping only, critical."""
    key = derive_key(label, ec.SECP256R1())
    usage = x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=False, crl_sign=False,
        encipher_only=False, decipher_only=False,
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name(label.replace("/", "-"))).issuer_name(ca.inter.subject)
        .public_key(key.public_key())
        .serial_number(serial_for(label))
        .not_valid_before(TRUST_START).not_valid_after(dt.datetime(2035, 1, 1, tzinfo=UTC))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.inter_key.public_key()), critical=False)
        .sign(ca.inter_key, hashes.SHA384(), ecdsa_deterministic=_DETERMINISTIC)
    )
    return leaf, key


def make_tsa(label: str) -> TSA:
    """Root -> intermediate -> signing leaf, like Sigstore's TSA chain. The CAs reuse
    make_ca's shape (no timeStamping EKU on them)."""
    ca = make_ca(label)
    leaf, key = _tsa_leaf(ca, f"{label}/leaf")
    other_leaf, other_key = _tsa_leaf(ca, f"{label}/leaf2")
    return TSA(ca.root, ca.inter, leaf, key, other_leaf, other_key)


def timestamp_response(tsa: TSA, message: bytes, gen_time: dt.datetime, serial: int,
                       corrupt_signature: bool = False) -> bytes:
    """Granted TimeStampResp whose token stamps sha256(message), as a Sigstore client
    requests it (SHA-256 imprint, nonce, certReq so the TSA leaf is embedded)."""
    sha256 = der_seq(der_oid(OID_SHA256))  # parameters absent (RFC 5754)
    leaf_der = tsa.leaf.public_bytes(serialization.Encoding.DER)
    issuer_der = tsa.leaf.issuer.public_bytes()
    tst_info = der_seq(
        der_int(1),
        der_oid(OID_TSA_POLICY),
        der_seq(sha256, der_octets(hashlib.sha256(message).digest())),  # messageImprint
        der_int(serial),
        der_gentime(gen_time),
        der_int(int.from_bytes(hashlib.sha256(b"nonce/%d" % serial).digest()[:8], "big")),
        der(0xA0, der(0xA4, tsa.leaf.subject.public_bytes())),  # tsa [0] GeneralName directoryName
    )

    def attr(oid: str, value: bytes) -> bytes:
        return der_seq(der_oid(oid), der_set(value))

    # ESS signingCertificateV2 (RFC 5816): OpenSSL's TS verifier insists on it;
    # rfc3161_client ignores it. ESSCertIDv2 with the default SHA-256 hash omitted.
    ess = der_seq(der_seq(der_seq(
        der_octets(hashlib.sha256(leaf_der).digest()),
        der_seq(der_seq(der(0xA4, issuer_der)), der_int(tsa.leaf.serial_number)),
    )))
    signed_attrs = [
        attr(OID_ATTR_CONTENT_TYPE, der_oid(OID_CT_TSTINFO)),
        attr(OID_ATTR_SIGNING_TIME, der_utctime(gen_time)),
        attr(OID_ATTR_MESSAGE_DIGEST, der_octets(hashlib.sha256(tst_info).digest())),
        attr(OID_ATTR_SIGNING_CERT_V2, ess),
    ]
    # The signature covers the attributes as an explicit SET; the SignerInfo carries
    # the same content under [0] IMPLICIT.
    attrs_content = b"".join(sorted(signed_attrs))  # DER SET OF order
    sig = bytearray(ecdsa_sign(tsa.leaf_key, der(0x31, attrs_content)))
    if corrupt_signature:
        sig[-1] ^= 0x01  # still parses; only the signature check can catch it
    signer_info = der_seq(
        der_int(1),
        der_seq(issuer_der, der_int(tsa.leaf.serial_number)),  # sid: issuerAndSerialNumber
        sha256,
        der(0xA0, attrs_content),
        der_seq(der_oid(OID_ECDSA_SHA256)),
        der_octets(bytes(sig)),
    )
    signed_data = der_seq(
        der_int(3),
        der_set(sha256),
        der_seq(der_oid(OID_CT_TSTINFO), der(0xA0, der_octets(tst_info))),
        der(0xA0, leaf_der),  # certificates [0] IMPLICIT: just the TSA leaf
        der_set(signer_info),
    )
    token = der_seq(der_oid(OID_SIGNED_DATA), der(0xA0, signed_data))
    return der_seq(der_seq(der_int(0)), token)  # PKIStatusInfo{granted}, ContentInfo


def tsa_timestamps(case: CaseSpec, tsa: TSA, signature: bytes, artifact: bytes,
                   leaf_not_after: dt.datetime) -> list[bytes]:
    """The rfc3161Timestamps of a case. Timestamps stamp the bundle's signature bytes."""
    serial = int.from_bytes(hashlib.sha256(b"tsa-serial/" + case.name.encode()).digest()[:8], "big")
    in_validity = LEAF_NOT_BEFORE + dt.timedelta(seconds=TSA_DELAY_S)
    # Tokens the oracle must drop carry a time after the leaf expired: a verifier that
    # wrongly accepted them would then reject the bundle, so the case tells them apart.
    after_expiry = leaf_not_after + dt.timedelta(seconds=60)
    kind = case.tsa
    if kind == "good":
        return [timestamp_response(tsa, signature, in_validity, serial)]
    if kind == "bad_signature":
        return [timestamp_response(tsa, signature, after_expiry, serial, corrupt_signature=True)]
    if kind == "wrong_imprint":
        # Stamps the artifact instead of the signature (a plausible client mistake).
        return [timestamp_response(tsa, artifact, after_expiry, serial)]
    if kind == "after_expiry":
        return [timestamp_response(tsa, signature, after_expiry, serial)]
    if kind == "other_signer":
        # Valid in every other respect (imprint, CMS signature, ESS, EKU) and chains to
        # the TSA root, but signed by (and embedding) a leaf that is not certChain[0].
        other = dataclasses.replace(tsa, leaf=tsa.other_leaf, leaf_key=tsa.other_leaf_key)
        return [timestamp_response(other, signature, after_expiry, serial)]
    if kind == "duplicate":
        tsr = timestamp_response(tsa, signature, in_validity, serial)
        return [tsr, tsr]
    if kind == "too_many":
        # Distinct serials and times, each valid on its own: only the count is wrong.
        return [timestamp_response(tsa, signature, in_validity + dt.timedelta(seconds=i), serial + i)
                for i in range(MAX_TIMESTAMPS + 1)]
    raise ValueError(f"unknown tsa kind {kind!r}")


# ---------------------------------------------------------------------------
# Cases.
# ---------------------------------------------------------------------------


@dataclass
class CaseSpec:
    name: str
    leaf: LeafSpec = None  # type: ignore[assignment]
    expect: str = "fail"
    rogue_ca: bool = False  # leaf issued by a CA that is not in the trusted root
    tamper_metadata: bool = False  # artifact edited after signing
    corrupt_digest: bool = False  # messageDigest.digest != sha256(artifact)
    corrupt_set: bool = False
    corrupt_proof_hash: bool = False
    corrupt_checkpoint_sig: bool = False
    checkpoint_other_root: bool = False  # checkpoint validly signed, but for another tree
    body_for_other_artifact: bool = False  # log entry records a different signature/digest
    integrated_after_expiry: bool = False
    rekor_v2: bool = False  # hashedrekord 0.0.2 in the Rekor v2 log instead of v1
    body_key_details: str = LEAF_KEY_DETAILS  # v2 body's verifier.keyDetails
    tsa: str = ""  # "" (no timestamps) or a tsa_timestamps kind
    root: str = DEFAULT_ROOT  # trusted root file (in OUT_DIR) the oracle verifies with
    # Global Rekor index; --sign gives each signed file its own, like a real log.
    log_index: int = SHARD_BASE_INDEX + LEAF_INDEX_IN_SHARD
    identity: dict = field(default_factory=lambda: {"repository": REPO, "signer_uris": list(SIGNER_URIS)})

    def __post_init__(self) -> None:
        if self.leaf is None:
            self.leaf = LeafSpec(label=self.name)


CASES = [
    CaseSpec("good", expect="ok"),
    CaseSpec("good_mac", LeafSpec("good_mac", signer_uri=MAC_URI), expect="ok"),
    CaseSpec("tampered_metadata", tamper_metadata=True),
    # Source repo is evil/..., but the build signer is the trusted (reusable) workflow:
    # only the source-repository check can reject this one.
    CaseSpec("wrong_repository", LeafSpec("wrong_repository", source_repo="evil/kernels-community")),
    CaseSpec("wrong_workflow", LeafSpec("wrong_workflow", signer_uri=f"{WF_PREFIX}/release.yaml@refs/heads/main")),
    CaseSpec("wrong_issuer", LeafSpec("wrong_issuer", issuer=GOOGLE_ISSUER)),
    CaseSpec("untrusted_chain", rogue_ca=True),
    CaseSpec("bad_sct", LeafSpec("bad_sct", sct="bad")),
    CaseSpec("no_sct", LeafSpec("no_sct", sct="none")),
    CaseSpec("bad_set", corrupt_set=True),
    CaseSpec("bad_inclusion_proof", corrupt_proof_hash=True),
    CaseSpec("bad_checkpoint", corrupt_checkpoint_sig=True),
    CaseSpec("wrong_root_hash", checkpoint_other_root=True),
    CaseSpec("body_mismatch", body_for_other_artifact=True),
    CaseSpec("expired_at_signing", integrated_after_expiry=True),
    CaseSpec("no_code_signing_eku", LeafSpec("no_code_signing_eku", code_signing=False)),
    # No EKU / no KeyUsage extension at all: sigstore-python raises cryptography's
    # ExtensionNotFound here (not a VerificationError); oracle_verify takes any exception.
    CaseSpec("no_eku_extension", LeafSpec("no_eku_extension", eku=False)),
    CaseSpec("no_key_usage_extension", LeafSpec("no_key_usage_extension", key_usage=False)),
    CaseSpec("digest_mismatch", corrupt_digest=True),
    CaseSpec("tsa_good", tsa="good", expect="ok"),
    # Unverifiable timestamps are dropped, not fatal: the SET's time still stands.
    CaseSpec("tsa_bad_signature", tsa="bad_signature", expect="ok"),
    CaseSpec("tsa_wrong_imprint", tsa="wrong_imprint", expect="ok"),
    CaseSpec("tsa_after_cert_expiry", tsa="after_expiry"),
    # rfc3161-client only accepts a token whose embedded signer is the root's
    # certChain[0], so this one is dropped even though it chains to the TSA root.
    CaseSpec("tsa_other_signer", tsa="other_signer", expect="ok"),
    CaseSpec("tsa_duplicate", tsa="duplicate"),
    CaseSpec("tsa_too_many", tsa="too_many"),
    # A signed timestamp with no TSA in the trusted root is fatal, valid or not.
    CaseSpec("tsa_no_authority", tsa="good", root=NO_TSA_ROOT),
    # Rekor v2: no SET/integratedTime, so the TSA timestamp is the only verified time.
    CaseSpec("v2_good", rekor_v2=True, tsa="good", expect="ok"),
    # sigstore-python rejects this one while loading the bundle (no promise, no timestamp).
    CaseSpec("v2_no_timestamp", rekor_v2=True),
    CaseSpec("v2_bad_checkpoint", rekor_v2=True, tsa="good", corrupt_checkpoint_sig=True),
    CaseSpec("v2_body_mismatch", rekor_v2=True, tsa="good", body_for_other_artifact=True),
    # Digest, signature and certificate all right; only the claimed algorithm differs.
    CaseSpec("v2_wrong_key_details", rekor_v2=True, tsa="good", body_key_details="PKIX_ECDSA_P384_SHA_384"),
]


def metadata_bytes(label: str) -> bytes:
    """A small kernel-metadata-like document; the verifier only sees bytes."""
    doc = {
        "id": "_relu_" + hashlib.sha256(label.encode()).hexdigest()[:12],
        "name": "relu",
        "version": 1,
        "license": "Apache-2.0",
        "python-depends": [],
        "backend": {"type": "cuda"},
    }
    return (json.dumps(doc, indent=2) + "\n").encode()


@dataclass
class Instance:
    ca: CA
    rogue: CA
    ct_key: ec.EllipticCurvePrivateKey
    rekor_key: ec.EllipticCurvePrivateKey
    rekor_v2_key: ed25519.Ed25519PrivateKey
    tsa: TSA


def logged_body(case: CaseSpec, cert: x509.Certificate, leaf_key: ec.EllipticCurvePrivateKey,
                artifact: bytes, signature: bytes, digest: bytes, make_body) -> bytes:
    """The entry body; for body_for_other_artifact, the same signer's genuine entry for other bytes."""
    if case.body_for_other_artifact:
        other = artifact + b" "
        return make_body(cert, ecdsa_sign(leaf_key, other), hashlib.sha256(other).digest())
    return make_body(cert, signature, digest)


def tree_with(case: CaseSpec, body: bytes, size: int, index: int) -> tuple[list[bytes], bytes]:
    """Our entry's leaf among unrelated ones, and the tree's root."""
    leaves = filler_leaves(case.name, size)
    leaves[index] = leaf_hash(body)  # RFC 6962 leaf hashing, in v1 and v2 logs alike
    return leaves, tree_root(leaves)


def v1_log_entry(case: CaseSpec, inst: Instance, cert: x509.Certificate,
                 leaf_key: ec.EllipticCurvePrivateKey, artifact: bytes, signature: bytes,
                 digest: bytes) -> dict:
    """hashedrekord 0.0.1 entry in the Rekor v1 log, with SET and checkpoint."""
    body = logged_body(case, cert, leaf_key, artifact, signature, digest, hashedrekord_body)

    # Place our entry among unrelated ones and prove its inclusion.
    leaves, root = tree_with(case, body, TREE_SIZE, LEAF_INDEX_IN_SHARD)
    path = inclusion_path(LEAF_INDEX_IN_SHARD, leaves)
    if case.corrupt_proof_hash:
        path[1] = hashlib.sha256(b"not-a-sibling").digest()

    if case.checkpoint_other_root:
        # A correctly signed checkpoint, but for the tree after one more append.
        bigger = leaves + [leaf_hash(b"later entry")]
        cp = signed_checkpoint(inst.rekor_key, len(bigger), tree_root(bigger), False)
    else:
        cp = signed_checkpoint(inst.rekor_key, TREE_SIZE, root, case.corrupt_checkpoint_sig)

    if case.integrated_after_expiry:
        integrated = int((LEAF_NOT_BEFORE + LEAF_LIFETIME).timestamp()) + 60
    else:
        integrated = int(LEAF_NOT_BEFORE.timestamp()) + INTEGRATION_DELAY_S
    log_index = case.log_index
    log_id = key_id(inst.rekor_key.public_key())

    # Signed Entry Timestamp: Rekor signs the canonical JSON of these four fields.
    set_payload = canonical_json({
        "body": b64(body),
        "integratedTime": integrated,
        "logID": log_id.hex(),
        "logIndex": log_index,
    })
    set_sig = bytearray(ecdsa_sign(inst.rekor_key, set_payload))
    if case.corrupt_set:
        set_sig[-1] ^= 0x01

    return {
        "logIndex": str(log_index),
        "logId": {"keyId": b64(log_id)},
        "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
        "integratedTime": str(integrated),
        "inclusionPromise": {"signedEntryTimestamp": b64(bytes(set_sig))},
        "inclusionProof": {
            "logIndex": str(LEAF_INDEX_IN_SHARD),
            "rootHash": b64(root),
            "treeSize": str(TREE_SIZE),
            "hashes": [b64(h) for h in path],
            "checkpoint": {"envelope": cp},
        },
        "canonicalizedBody": b64(body),
    }


def v2_log_entry(case: CaseSpec, inst: Instance, cert: x509.Certificate,
                 leaf_key: ec.EllipticCurvePrivateKey, artifact: bytes, signature: bytes,
                 digest: bytes) -> dict:
    """hashedrekord 0.0.2 entry in the Rekor v2 log: inclusion proof + checkpoint only."""
    def v2_body(c, sig, dig):
        return hashedrekord_v2_body(c, sig, dig, case.body_key_details)
    body = logged_body(case, cert, leaf_key, artifact, signature, digest, v2_body)
    leaves, root = tree_with(case, body, V2_TREE_SIZE, V2_LEAF_INDEX)
    key = inst.rekor_v2_key
    cp = signed_checkpoint_v2(key, V2_TREE_SIZE, root, case.corrupt_checkpoint_sig)
    # Rekor v2 has no integratedTime (proto3 JSON omits the zero) and no inclusionPromise.
    return {
        "logIndex": str(V2_LEAF_INDEX),
        "logId": {"keyId": b64(v2_log_id(key.public_key()))},
        "kindVersion": {"kind": "hashedrekord", "version": "0.0.2"},
        "inclusionProof": {
            "logIndex": str(V2_LEAF_INDEX),
            "rootHash": b64(root),
            "treeSize": str(V2_TREE_SIZE),
            "hashes": [b64(h) for h in inclusion_path(V2_LEAF_INDEX, leaves)],
            "checkpoint": {"envelope": cp},
        },
        "canonicalizedBody": b64(body),
    }


def build_bundle(case: CaseSpec, inst: Instance, artifact: bytes) -> dict:
    ca = inst.rogue if case.rogue_ca else inst.ca
    cert, leaf_key = make_leaf(case.leaf, ca, inst.ct_key)

    digest = hashlib.sha256(artifact).digest()
    signature = ecdsa_sign(leaf_key, artifact)
    make_entry = v2_log_entry if case.rekor_v2 else v1_log_entry
    entry = make_entry(case, inst, cert, leaf_key, artifact, signature, digest)

    msg_digest = bytearray(digest)
    if case.corrupt_digest:
        msg_digest[0] ^= 0xFF

    material: dict = {
        "certificate": {"rawBytes": b64(cert.public_bytes(serialization.Encoding.DER))},
        "tlogEntries": [entry],
    }
    if case.tsa:
        tsrs = tsa_timestamps(case, inst.tsa, signature, artifact, cert.not_valid_after_utc)
        material["timestampVerificationData"] = {
            "rfc3161Timestamps": [{"signedTimestamp": b64(t)} for t in tsrs],
        }

    return {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": material,
        "messageSignature": {
            "messageDigest": {"algorithm": "SHA2_256", "digest": b64(bytes(msg_digest))},
            "signature": b64(signature),
        },
    }


def trusted_root(inst: Instance, with_tsa: bool = True) -> dict:
    start = TRUST_START.strftime("%Y-%m-%dT%H:%M:%SZ")

    def log(url: str, key: ec.EllipticCurvePrivateKey) -> dict:
        pub = key.public_key()
        return {
            "baseUrl": url,
            "hashAlgorithm": "SHA2_256",
            "publicKey": {
                "rawBytes": b64(spki_der(pub)),
                "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                "validFor": {"start": start},
            },
            "logId": {"keyId": b64(key_id(pub))},
        }

    v2_pub = inst.rekor_v2_key.public_key()
    v2_log = {
        "baseUrl": REKOR_V2_URL,
        "hashAlgorithm": "SHA2_256",
        "publicKey": {
            "rawBytes": b64(spki_der(v2_pub)),
            "keyDetails": "PKIX_ED25519",
            "validFor": {"start": start},
        },
        "logId": {"keyId": b64(v2_log_id(v2_pub))},
    }

    der = serialization.Encoding.DER
    return {
        "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        # v1 stays first: sigstore-python's Verifier takes tlogs[0] as "the" Rekor.
        "tlogs": [log(REKOR_URL, inst.rekor_key), v2_log],
        "certificateAuthorities": [{
            "subject": {"organization": "khub-synthetic.example", "commonName": "fulcio-root"},
            "uri": "https://fulcio.khub-synthetic.example",
            # Chain order as in Sigstore's trusted root: intermediate first, root last.
            "certChain": {"certificates": [
                {"rawBytes": b64(inst.ca.inter.public_bytes(der))},
                {"rawBytes": b64(inst.ca.root.public_bytes(der))},
            ]},
            "validFor": {"start": start},
        }],
        "ctlogs": [log("https://ctfe.khub-synthetic.example/test", inst.ct_key)],
        # sigstore-python takes certChain as [TSA signing leaf, intermediates..., root].
        "timestampAuthorities": [{
            "subject": {"organization": "khub-synthetic.example", "commonName": "tsa-root"},
            "uri": TSA_URL,
            "certChain": {"certificates": [
                {"rawBytes": b64(c.public_bytes(der))} for c in (inst.tsa.leaf, inst.tsa.inter, inst.tsa.root)
            ]},
            "validFor": {"start": start},
        }] if with_tsa else [],
    }


# ---------------------------------------------------------------------------
# Oracle: sigstore-python with kernels' own policy.
# ---------------------------------------------------------------------------


def oracle_verify(root_json: Path, artifact: Path, bundle_path: Path, identity: dict) -> tuple[str, str]:
    from kernels.verify import GitHubWorkflowPolicy
    from sigstore.models import Bundle, TrustedRoot
    from sigstore.verify import Verifier
    from sigstore.verify.policy import AnyOf

    try:
        verifier = Verifier(trusted_root=TrustedRoot.from_file(str(root_json)))
        bundle = Bundle.from_json(bundle_path.read_bytes())
        policy = AnyOf([GitHubWorkflowPolicy(repo_id=identity["repository"],
                                             signer_uris=identity["signer_uris"])])
        verifier.verify_artifact(artifact.read_bytes(), bundle, policy)
    except Exception as exc:  # any rejection counts; keep the verifier's text
        return "fail", str(exc)
    return "ok", ""


def run_oracle(out: Path, case: CaseSpec) -> tuple[str, str]:
    folder = out / case.name
    return oracle_verify(out / case.root, folder / "metadata.json",
                         folder / "metadata.json.sigstore", case.identity)


# How many of a case's timestamps sigstore-python should accept: a verdict of "ok"
# alone cannot tell a verified TSA time from a dropped token (the SET still counts).
TSA_ACCEPTED = {"good": 1, "bad_signature": 0, "wrong_imprint": 0, "after_expiry": 1,
                "other_signer": 0}


def oracle_tsa_accepted(root_json: Path, bundle_path: Path) -> int:
    """Timestamps sigstore-python verifies (private API: the step inside _establish_time)."""
    from sigstore.models import Bundle, TrustedRoot
    from sigstore.verify import Verifier

    verifier = Verifier(trusted_root=TrustedRoot.from_file(str(root_json)))
    return len(verifier._verify_timestamp_authority(Bundle.from_json(bundle_path.read_bytes())))


def make_instance() -> Instance:
    return Instance(
        ca=make_ca("fulcio"),
        rogue=make_ca("rogue-fulcio"),
        ct_key=derive_key("ctlog", ec.SECP256R1()),
        rekor_key=derive_key("rekor", ec.SECP256R1()),
        rekor_v2_key=derive_ed25519("rekor-v2"),
        tsa=make_tsa("tsa"),
    )


def write_trusted_root(out: Path, inst: Instance) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "trusted_root.json"
    path.write_text(json.dumps(trusted_root(inst), indent=2) + "\n")
    return path


def usage() -> int:
    for line in __doc__.strip().splitlines()[2:4]:
        print(line, file=sys.stderr)
    return 2


def sign_main(args: list[str]) -> int:
    """--sign [--workflow URI] ROOT_DIR METADATA_JSON...: sign real files in place."""
    workflow = BUILD_URI
    if args[:1] == ["--workflow"]:
        if len(args) < 2 or not args[1]:
            return usage()
        workflow, args = args[1], args[2:]
    if len(args) < 2 or any(a.startswith("--") for a in args):
        return usage()
    root_dir, files = Path(args[0]), [Path(a) for a in args[1:]]
    # Check every input before writing anything, so bad usage leaves no partial output.
    for f in files:
        if not f.is_file():
            print(f"not a file: {f}", file=sys.stderr)
            return usage()

    inst = make_instance()
    root_json = write_trusted_root(root_dir, inst)
    for i, f in enumerate(files):
        artifact = f.read_bytes()
        # Label from position + content (not the path spelling), so re-signing the
        # same inputs reproduces the same bytes; the position keeps equal files apart.
        label = f"sign/{i}/{hashlib.sha256(artifact).hexdigest()[:16]}"
        case = CaseSpec(label, LeafSpec(label, signer_uri=workflow), expect="ok",
                        log_index=SHARD_BASE_INDEX + LEAF_INDEX_IN_SHARD + 1 + i)
        bundle_path = f.with_name(f.name + ".sigstore")
        bundle_path.write_text(json.dumps(build_bundle(case, inst, artifact), indent=2) + "\n")
        # The oracle always checks kernels' default identity, not the --workflow
        # given, so a workflow outside the list shows up as "fail" (exit stays 0).
        verdict, reason = oracle_verify(root_json, f, bundle_path, case.identity)
        print(f"{f}: ok" if verdict == "ok" else f"{f}: fail: {' '.join(reason.split())}")
    return 0


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--sign"]:
        return sign_main(argv[2:])
    if len(argv) != 2:
        return usage()
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)

    inst = make_instance()
    write_trusted_root(out, inst)
    # Identical to trusted_root.json minus the TSA, for tsa_no_authority.
    (out / NO_TSA_ROOT).write_text(json.dumps(trusted_root(inst, with_tsa=False), indent=2) + "\n")

    results = []
    mismatches = []
    for case in CASES:
        folder = out / case.name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir()
        artifact = metadata_bytes(case.name)
        bundle = build_bundle(case, inst, artifact)
        if case.tamper_metadata:
            artifact = artifact.replace(b'"version": 1', b'"version": 2')
        (folder / "metadata.json").write_bytes(artifact)
        (folder / "metadata.json.sigstore").write_text(json.dumps(bundle, indent=2) + "\n")

        verdict, reason = run_oracle(out, case)
        if verdict != case.expect:
            mismatches.append(case.name)
        elif case.tsa in TSA_ACCEPTED and case.root == DEFAULT_ROOT and oracle_tsa_accepted(
                out / case.root, folder / "metadata.json.sigstore") != TSA_ACCEPTED[case.tsa]:
            mismatches.append(f"{case.name} (timestamp accepted/dropped not as intended)")
        result = {"name": case.name, "identity": case.identity, "oracle": verdict, "reason": reason}
        if case.root != DEFAULT_ROOT:
            result["root"] = case.root
        results.append(result)

    (out / "cases.json").write_text(json.dumps(results, indent=2) + "\n")
    for r in results:
        print(f"{r['name']:22} {r['oracle']:4} {r['reason']}")
    if mismatches:
        # Verdicts are recorded as the oracle gives them; just flag the surprise.
        print("unexpected oracle verdicts: " + ", ".join(mismatches), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
