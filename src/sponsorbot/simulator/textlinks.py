"""Links inside formatted text: how Telegram checks and rewrites them.

Read in tdlib (tdutils/td/utils/HttpUrl.cpp ``parse_url``, td/telegram/LinkManager.cpp
``check_link``, ``get_link_user_id``, ``get_link_custom_emoji_id``, ``get_link_formatted_date``
and td/telegram/FormattedDate.cpp) and written again. A link's URL comes back normalised:
``<a href="Example.com">`` is kept as ``http://example.com/``; ``tg://user?id=N`` is a mention
of user N, not a link.
"""

from __future__ import annotations

import ipaddress
import string
from dataclasses import dataclass

from sponsorbot.simulator.entities import MAX_USER_ID
from sponsorbot.simulator.readers import to_integer_safe

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_ALNUM = frozenset(string.ascii_letters + string.digits)
_HEX = frozenset(string.hexdigits)
_URL_PART = _ALNUM | frozenset(".-_!$,~*'();&+=")
_SPACES = " \t\r\n\0\v"  # tdlib's is_space

# FormattedDate's flags, and the letters of a date-time format that set them.
RELATIVE, SHORT_TIME, LONG_TIME, SHORT_DATE, LONG_DATE, DAY_OF_WEEK = 1, 2, 4, 8, 16, 32
_FORMAT_FLAGS = {
    "t": SHORT_TIME,
    "T": LONG_TIME,
    "d": SHORT_DATE,
    "D": LONG_DATE,
    "w": DAY_OF_WEEK,
    "W": DAY_OF_WEEK,
}


class LinkError(ValueError):
    """A link Telegram does not accept; ``str(exc)`` is tdlib's reason."""


def ascii_lower(text: str) -> str:
    """Lower-case ASCII letters only, as tdlib's ``to_lower`` does."""
    return text.translate(_ASCII_LOWER)


@dataclass(frozen=True, slots=True)
class HttpUrl:
    """What parse_url makes of a URL."""

    https: bool
    userinfo: str
    host: str
    is_ipv6: bool
    specified_port: int
    query: str

    def get_url(self) -> str:
        """The normalised URL."""
        userinfo = f"{self.userinfo}@" if self.userinfo else ""
        port = f":{self.specified_port}" if self.specified_port > 0 else ""
        scheme = "https" if self.https else "http"
        return f"{scheme}://{userinfo}{self.host}{port}{self.query}"


def _find_any(text: str, chars: str, start: int = 0) -> int:
    found = [i for i in (text.find(c, start) for c in chars) if i >= 0]
    return min(found) if found else len(text)


def _check_url_part(part: str, name: str, allow_colon: bool) -> None:
    i = 0
    while i < len(part):
        ch = part[i]
        if ch in _URL_PART or (allow_colon and ch == ":") or ord(ch) >= 128:
            i += 1
            continue
        if ch == "%":
            if part[i + 1 : i + 2] in _HEX and part[i + 2 : i + 3] in _HEX and i + 2 < len(part):
                i += 3
                continue
            raise LinkError(f"Wrong percent-encoded symbol in URL {name}")
        raise LinkError(f"Disallowed character in URL {name}")


def parse_url(url: str, default_https: bool = False) -> HttpUrl:
    """tdlib's parse_url (HTTP when no protocol is written, unless ``default_https``, as for
    a webhook); raises :class:`LinkError`."""
    cut = _find_any(url, ":/?#@[]")
    https = default_https
    rest = url
    if url.startswith("://", cut):
        protocol = ascii_lower(url[:cut])
        if protocol not in ("http", "https"):
            raise LinkError("Unsupported URL protocol")
        https = protocol == "https"
        rest = url[cut + 3 :]
    cut = _find_any(rest, "/?#")
    userinfo_host_port, query = rest[:cut], rest[cut:]

    colon = len(userinfo_host_port) - 1
    while colon > 0 and userinfo_host_port[colon] not in ":]@":
        colon -= 1
    port = 0
    userinfo_host = userinfo_host_port
    if colon > 0 and userinfo_host_port[colon] == ":":
        digits = userinfo_host_port[colon + 1 :]
        while len(digits) > 1 and digits[0] == "0":
            digits = digits[1:]
        parsed = to_integer_safe(digits, 32)
        port = parsed or -1  # 0 is no port either
        userinfo_host = userinfo_host_port[:colon]
    if not 0 <= port <= 65535:
        raise LinkError("Wrong port number specified in the URL")

    at = userinfo_host.rfind("@")
    userinfo, host = userinfo_host[: max(at, 0)], userinfo_host[at + 1 :]
    is_ipv6 = host.startswith("[") and host.endswith("]") and len(host) > 1
    if is_ipv6:
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise LinkError("Wrong IPv6 address specified in the URL") from None
    if not host:
        raise LinkError("URL host is empty")
    if host == ".":
        raise LinkError("Host is invalid")

    query = query.rstrip(_SPACES) or "/"
    encoded = "".join(f"%{ord(ch):02X}" if ord(ch) <= 0x20 else ch for ch in query)
    if not encoded.startswith("/"):
        encoded = "/" + encoded
    host = ascii_lower(host)
    if is_ipv6:
        if any(ch not in "0123456789abcdef:." for ch in host[1:-1]):
            raise LinkError("Wrong IPv6 URL host")
    else:
        _check_url_part(host, "host", allow_colon=False)
        _check_url_part(userinfo, "userinfo", allow_colon=True)
    return HttpUrl(https, userinfo, host, is_ipv6, port, encoded)


def _check_link(link: str) -> str:
    """check_link_impl: the normalised link, or :class:`LinkError`."""
    lowered = ascii_lower(link[:8])
    scheme = next((s for s in ("tg", "ton", "tonsite") if lowered.startswith(s + ":")), "")
    if scheme:
        link = link[len(scheme) + 1 :]
        link = link.removeprefix("//")
    url = parse_url(link)
    if not scheme:
        if "." not in url.host and not url.is_ipv6:
            raise LinkError("Wrong HTTP URL")
        return url.get_url()
    if (
        ascii_lower(link).startswith("http://")
        or url.https
        or url.userinfo
        or url.specified_port
        or url.is_ipv6
    ):
        raise LinkError("Wrong tg URL" if scheme == "tg" else "Wrong ton URL")
    query = url.query[1:] if url.query[1:2] == "?" else url.query
    for ch in url.host:
        if ch not in _ALNUM and ch not in "-_" and not (scheme == "tonsite" and ch == "."):
            raise LinkError("Unallowed characters in URL host")
    return f"{scheme}://{url.host}{query}"


def check_link(link: str) -> str:
    """The link as Telegram keeps it; raises :class:`LinkError` with check_link's message,
    e.g. ``URL 'x' is invalid: Wrong HTTP URL``."""
    try:
        return _check_link(link)
    except LinkError as exc:
        raise LinkError(f"URL '{link}' is invalid: {exc}") from None


def checked_link(link: str) -> str:
    """get_checked_link: the link as Telegram keeps it, or "" when it is not one."""
    try:
        return _check_link(link)
    except LinkError:
        return ""


def _parameters(query: str) -> list[tuple[str, str]]:
    query = query.split("#", 1)[0]
    return [(p.partition("=")[0], p.partition("=")[2]) for p in query.split("&")]


def link_user_id(url: str) -> int:
    """get_link_user_id: N for ``tg://user?id=N`` (N a valid user id), else 0."""
    url = ascii_lower(url)
    if not url.startswith("tg:"):
        return 0
    url = url[3:].removeprefix("//")
    if not url.startswith("user") or (len(url) > 4 and url[4] not in "/?#"):
        return 0
    url = url[4:].removeprefix("/")
    if not url.startswith("?"):
        return 0
    for key, value in _parameters(url[1:]):
        if key == "id":
            user_id = to_integer_safe(value, 64)
            return user_id if user_id is not None and 0 < user_id <= MAX_USER_ID else 0
    return 0


def _tg_query(url: str, host: str) -> str:
    """check_tg_url_host: the parameters of ``tg://<host>?...``, or :class:`LinkError`."""
    lowered = ascii_lower(url[: 3 + 2 + len(host) + 1])
    if not lowered.startswith("tg:"):
        raise LinkError("URL must have scheme tg")
    lowered, url = lowered[3:], url[3:]
    if url.startswith("//"):
        lowered, url = lowered[2:], url[2:]
    if not lowered.startswith(host) or (len(url) > len(host) and url[len(host)] not in "/?#"):
        raise LinkError(f'URL must have host "{host}"')
    url = url[len(host) :].removeprefix("/")
    if not url.startswith("?"):
        raise LinkError("URL must have parameters")
    return url[1:]


def link_custom_emoji_id(url: str) -> int:
    """get_link_custom_emoji_id: the id in ``tg://emoji?id=N``, or :class:`LinkError`."""
    for key, value in _parameters(_tg_query(url, "emoji")):
        if key == "id":
            emoji_id = to_integer_safe(value, 64)
            if not emoji_id:
                raise LinkError("Invalid custom emoji identifier specified")
            return emoji_id
    raise LinkError("Custom emoji URL must have an emoji identifier")


def date_flags(date_format: str) -> int:
    """FormattedDate::get_date_flags of a date-time format such as ``wDT`` or ``r``."""
    if date_format in ("r", "R"):
        return RELATIVE
    flags = 0
    for ch in date_format:
        if ch not in _FORMAT_FLAGS:
            raise LinkError("Invalid date format used")
        flags |= _FORMAT_FLAGS[ch]
    return flags


def link_formatted_date(url: str) -> tuple[int, int]:
    """get_link_formatted_date: Unix time and date flags of ``tg://time?unix=N&format=F``."""
    date, date_format = 0, ""
    for key, value in _parameters(_tg_query(url, "time")):
        if key == "unix":
            parsed = to_integer_safe(value, 32)
            if parsed is None or parsed <= 0:
                raise LinkError("Invalid Unix time specified")
            date = parsed
        if key == "format":
            date_format = value
    if date == 0:
        raise LinkError("URL must have the corresponding Unix time")
    return date, date_flags(date_format)


def date_format_of(flags: int) -> str:
    """The Bot API's ``date_time_format`` for date flags ("" when the text is shown as is)."""
    if flags & RELATIVE:
        return "r"
    out = "w" if flags & DAY_OF_WEEK else ""
    out += "d" if flags & SHORT_DATE else "D" if flags & LONG_DATE else ""
    out += "t" if flags & SHORT_TIME else "T" if flags & LONG_TIME else ""
    return out
