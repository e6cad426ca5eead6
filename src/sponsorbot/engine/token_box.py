"""Bot tokens at rest: encrypted with a key derived from SPONSORBOT_SECRET_KEY."""

from __future__ import annotations

import base64
import hashlib
import re

from cryptography.fernet import Fernet, InvalidToken

TOKEN_SHAPE = re.compile(r"^(\d{3,20}):[A-Za-z0-9_-]{35}$")


class TokenError(ValueError):
    """A token that is not shaped like a bot token, or cannot be decrypted."""


def bot_id_of(token: str) -> int:
    """The bot's numeric id, the part before the colon; raises TokenError if malformed."""
    match = TOKEN_SHAPE.match(token)
    if match is None:
        raise TokenError("a bot token looks like 123456789:AAH... (digits, a colon, 35 characters)")
    return int(match[1])


def tail(token: str) -> str:
    """The last 4 characters, the only part ever shown."""
    return token[-4:]


class TokenBox:
    """Encrypts and decrypts tokens with one installation key."""

    def __init__(self, secret: bytes) -> None:
        key = base64.urlsafe_b64encode(hashlib.sha256(b"sponsorbot-tokens:" + secret).digest())
        self._fernet = Fernet(key)

    def seal(self, token: str) -> bytes:
        """The token, encrypted."""
        return self._fernet.encrypt(token.encode())

    def open(self, sealed: bytes) -> str:
        """The token, decrypted; a wrong key is a TokenError that names no secret."""
        try:
            return self._fernet.decrypt(bytes(sealed)).decode()
        except InvalidToken:
            raise TokenError(
                "a bot token cannot be decrypted: SPONSORBOT_SECRET_KEY changed since it was saved"
            ) from None
