"""Bot tokens at rest: encrypted with a key derived from SPONSORBOT_SECRET_KEY.

The setting may list keys separated by commas, the new one first: tokens are sealed with the
first and opened with any, so a key is rotated by putting the new one in front of the old one
until every token has been sealed again (BotService.check_key does that at start).
"""

from __future__ import annotations

import base64
import hashlib
import re

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from sponsorbot.config import installation_keys

TOKEN_SHAPE = re.compile(r"^([1-9]\d{2,17}):[A-Za-z0-9_-]{35}$")


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
    """Encrypts with the installation key and decrypts with it or an older one."""

    def __init__(self, secret: bytes) -> None:
        keys = installation_keys(secret)
        self.rotating = len(keys) > 1
        self._fernet = MultiFernet([Fernet(_derived(k)) for k in keys])

    def seal(self, token: str) -> bytes:
        """The token, encrypted with the newest key."""
        return self._fernet.encrypt(token.encode())

    def open(self, sealed: bytes) -> str:
        """The token, decrypted; a wrong key is a TokenError that names no secret."""
        try:
            return self._fernet.decrypt(bytes(sealed)).decode()
        except InvalidToken:
            raise TokenError(
                "a bot token cannot be decrypted: SPONSORBOT_SECRET_KEY changed since it was saved"
            ) from None

    def reseal(self, sealed: bytes) -> bytes:
        """The same plaintext sealed with the newest key (TokenError if no key opens it)."""
        try:
            return self._fernet.rotate(bytes(sealed))
        except InvalidToken:
            raise TokenError("a sealed value cannot be decrypted with any key") from None

    def opens(self, sealed: bytes) -> bool:
        """Whether one of the keys opens `sealed` (the key check)."""
        try:
            self._fernet.decrypt(bytes(sealed))
        except InvalidToken:
            return False
        return True


def _derived(secret: bytes) -> bytes:
    return base64.urlsafe_b64encode(hashlib.sha256(b"sponsorbot-tokens:" + secret).digest())
