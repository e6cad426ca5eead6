"""Secrets of the panel: passwords (argon2id), random codes, TOTP, recovery codes."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime

import pyotp
import segno
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()  # argon2id with the library's current recommended parameters
# Verifying against this when the e-mail is unknown costs the same time as a real check,
# so response time does not tell which addresses have accounts.
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))

MIN_PASSWORD = 10
RECOVERY_CODES = 10


def hash_password(password: str) -> str:
    """An argon2id hash of the password."""
    return _hasher.hash(password)


def check_password(stored: str | None, password: str) -> bool:
    """True when `password` matches `stored`; constant work when there is no stored hash."""
    try:
        return _hasher.verify(stored or _DUMMY_HASH, password) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


def digest(secret: str) -> bytes:
    """What the database keeps of a random secret (session ids, invitation links, codes)."""
    return hashlib.sha256(secret.encode()).digest()


def random_token() -> str:
    """A random, URL-safe secret of 256 bits."""
    return secrets.token_urlsafe(32)


def setup_code() -> str:
    """A first-run setup code: 12 characters, easy to type from a console."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    raw = "".join(secrets.choice(alphabet) for _ in range(12))
    return f"{raw[:4]}-{raw[4:8]}-{raw[8:]}"


def normalize_code(code: str) -> str:
    """A typed setup or recovery code without spaces, in upper case, dashes as printed."""
    return code.strip().upper().replace(" ", "")


def same(a: str, b: str) -> bool:
    """Constant-time comparison of two strings."""
    return hmac.compare_digest(a.encode(), b.encode())


def new_totp_secret() -> str:
    """A fresh base32 secret for an authenticator app."""
    return pyotp.random_base32()


def totp_uri(secret: str, email: str, issuer: str) -> str:
    """The otpauth:// URI an authenticator app reads from the QR code."""
    return pyotp.TOTP(secret).provisioning_uri(name=email, issuer_name=issuer)


def check_totp(secret: str, code: str, now: datetime) -> bool:
    """True when `code` is the authenticator's code at `now` (one step of drift allowed)."""
    code = code.strip().replace(" ", "")
    if not code.isdigit() or len(code) != 6:
        return False
    return pyotp.TOTP(secret).verify(code, for_time=now, valid_window=1)


def qr_svg(text: str) -> str:
    """A QR code of `text` as inline SVG (no external request, no image file).

    It carries a viewBox as well as its size, so a stylesheet may draw it smaller without
    cutting it off.
    """
    code = segno.make(text, error="m")
    width, height = code.symbol_size(scale=5)
    svg = str(code.svg_inline(scale=5, dark="#111", light="#fff", omitsize=True))
    return svg.replace("<svg ", f'<svg width="{width}" height="{height}" ', 1)


def recovery_codes() -> list[str]:
    """Ten one-time recovery codes, shown once."""
    return [f"{secrets.token_hex(3)}-{secrets.token_hex(3)}".upper() for _ in range(RECOVERY_CODES)]
