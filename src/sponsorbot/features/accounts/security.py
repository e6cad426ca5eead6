"""Secrets of the panel: passwords (argon2id), random codes, TOTP, recovery codes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import datetime

import anyio
import pyotp
import segno
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from sponsorbot.config import installation_keys

_hasher = PasswordHasher()  # argon2id with the library's current recommended parameters
# Verifying against this when the e-mail is unknown costs the same time as a real check,
# so response time does not tell which addresses have accounts.
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))

MIN_PASSWORD = 10
RECOVERY_CODES = 10
TOTP_STEP_S = 30
# Each argon2 call takes 64 MiB and tens of milliseconds: a few at a time, off the event loop.
HASHING_THREADS = 2
_hashing: anyio.CapacityLimiter | None = None
# A sealed TOTP secret starts with this; anything else is a clear secret from before.
SEALED = "v1:"
# A recovery code kept since rotations became safe starts with this byte, then a SHA-256 of
# the code: it owes nothing to SPONSORBOT_SECRET_KEY, so it outlives every rotation. A code
# carries 100 random bits, beyond any guessing, so neither a key, a salt nor a slow hash
# would add to it. Older codes are the 32 bytes of an HMAC under a key, or of a plain sha256.
RECOVERY_V2 = b"\x02"
_RECOVERY_PURPOSE = b"sponsorbot:recovery-code:"
_BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def use_password_hasher(hasher: PasswordHasher) -> None:
    """Hash new passwords with `hasher` from now on (the tests' cheap parameters).

    Stored hashes carry their own parameters, so hashes made before or after still verify.
    """
    global _hasher, _DUMMY_HASH
    _hasher = hasher
    _DUMMY_HASH = hasher.hash(secrets.token_urlsafe(16))


def hash_password(password: str) -> str:
    """An argon2id hash of the password."""
    return _hasher.hash(password)


def check_password(stored: str | None, password: str) -> bool:
    """True when `password` matches `stored`; constant work when there is no stored hash."""
    try:
        return _hasher.verify(stored or _DUMMY_HASH, password) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


def _limiter() -> anyio.CapacityLimiter:
    # Made on first use: it belongs to the running event loop, not to the import.
    global _hashing
    if _hashing is None:
        _hashing = anyio.CapacityLimiter(HASHING_THREADS)
    return _hashing


async def hash_password_async(password: str) -> str:
    """`hash_password` in a worker thread, at most HASHING_THREADS at a time."""
    return await anyio.to_thread.run_sync(hash_password, password, limiter=_limiter())


async def check_password_async(stored: str | None, password: str) -> bool:
    """`check_password` in a worker thread, at most HASHING_THREADS at a time."""
    return await anyio.to_thread.run_sync(check_password, stored, password, limiter=_limiter())


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


def totp_step(secret: str, code: str, now: datetime, after: int | None = None) -> int | None:
    """The time step whose authenticator code `code` is: the one of `now` or one either side
    (clock drift), and later than `after` (the last step used: no replays). None otherwise."""
    code = code.strip().replace(" ", "")
    if not code.isdigit() or len(code) != 6:
        return None
    totp = pyotp.TOTP(secret)
    current = int(now.timestamp()) // TOTP_STEP_S
    for step in (current - 1, current, current + 1):
        if (after is None or step > after) and same(totp.at(step * TOTP_STEP_S), code):
            return step
    return None


def check_totp(secret: str, code: str, now: datetime) -> bool:
    """True when `code` is the authenticator's code at `now` (one step of drift allowed)."""
    return totp_step(secret, code, now) is not None


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
    """Ten one-time recovery codes of 100 bits each (4 groups of 5 base32 letters), shown once."""
    return [
        "-".join("".join(secrets.choice(_BASE32) for _ in range(5)) for _ in range(4))
        for _ in range(RECOVERY_CODES)
    ]


def derive_key(master: bytes, purpose: str) -> bytes:
    """A 32-byte key for one purpose from the installation key (HKDF-SHA256), so the panel's
    keys are independent of the one that encrypts bot tokens and of each other."""
    hkdf = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=f"sponsorbot:{purpose}".encode()
    )
    return hkdf.derive(master)


class PanelKeys:
    """TOTP secrets sealed at rest and recovery codes hashed under keys derived from the
    installation key. Without a key (None), secrets stay in clear and codes are plain sha256,
    as before; values written either way keep working once a key is given."""

    def __init__(self, master: bytes | None) -> None:
        self._fernet: MultiFernet | None = None
        self._newest: Fernet | None = None
        self._recovery: list[bytes] = []
        self.rotating = False
        # A rotation lists the keys newest first ("new,old"): seal with the newest, open
        # with any; the accounts feature re-seals what an older key sealed when it starts.
        if master:
            masters = installation_keys(master)
            self.rotating = len(masters) > 1
            fernets = [
                Fernet(base64.urlsafe_b64encode(derive_key(m, "panel-totp"))) for m in masters
            ]
            self._fernet, self._newest = MultiFernet(fernets), fernets[0]
            self._recovery = [derive_key(m, "panel-recovery-codes") for m in masters]

    def seal(self, secret: str) -> str:
        """What the database keeps of a TOTP secret."""
        if self._fernet is None:
            return secret
        return SEALED + self._fernet.encrypt(secret.encode()).decode()

    def open(self, stored: str) -> str | None:
        """The TOTP secret behind a stored value (sealed or, from before, clear); None when
        it was sealed under another key, or there is no key."""
        if not stored.startswith(SEALED):
            return stored
        if self._fernet is None:
            return None
        try:
            return self._fernet.decrypt(stored.removeprefix(SEALED).encode()).decode()
        except InvalidToken:
            return None

    def is_sealed(self, stored: str) -> bool:
        """True when `stored` needs no re-sealing (sealed under the newest key, or no key)."""
        if self._newest is None:
            return True
        if not stored.startswith(SEALED):
            return False
        try:
            self._newest.decrypt(stored.removeprefix(SEALED).encode())
        except InvalidToken:
            return False
        return True

    def recovery_digest(self, code: str) -> bytes:
        """What the database keeps of a new recovery code (no key in it: see RECOVERY_V2)."""
        return recovery_hash(code)

    def recovery_candidates(self, code: str) -> list[bytes]:
        """Every digest a typed recovery code may be stored as: the key-free one, the HMAC
        under each configured key (codes made before, while their key is still listed), and
        the plain sha256 of codes made before any key was used."""
        code = normalize_code(code)
        keyed = [hmac.new(k, code.encode(), hashlib.sha256).digest() for k in self._recovery]
        return list(dict.fromkeys([recovery_hash(code), *keyed, digest(code)]))


def recovery_hash(code: str) -> bytes:
    """The key-free digest of a recovery code: RECOVERY_V2 and a SHA-256 of the code."""
    return RECOVERY_V2 + hashlib.sha256(_RECOVERY_PURPOSE + normalize_code(code).encode()).digest()
