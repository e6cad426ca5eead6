"""The entities Telegram finds by itself in any text it stores: commands, links, mentions...

Read in tdlib's ``find_entities`` (td/telegram/MessageEntity.cpp: match_mentions,
match_bot_commands, match_hashtags, match_cashtags, match_tg_urls, match_urls, fix_url,
is_email_address) and written again, over Python characters instead of UTF-8 bytes. Bank card
numbers and media timestamps are not looked for: the Bot API never shows them, and they only
matter when they overlap something else. Phone numbers are not found by tdlib either.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Callable

from sponsorbot.simulator.entities import ASTRAL, Entity, Finder
from sponsorbot.simulator.textlinks import ascii_lower

_ALNUM = frozenset(string.ascii_letters + string.digits)
_ALNUM_UNDERSCORE = _ALNUM | {"_"}
_ALNUM_UNDERSCORE_MINUS = _ALNUM_UNDERSCORE | {"-"}
_BAD_PATH_END = ".:;,('?!`"
_SHORT_USERNAMES = frozenset({"gif", "nft", "pic", "ufc", "vid"})

# The TLDs a link without "http://" may end with: every country code, and the generic names
# people write most (tdlib's list has about 1450, from IANA; a name missing here only means
# "word.name" is not made a link).
_TLD_NAMES = """
    ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs
    bt bv bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec
    ee eg er es et eu fi fj fk fm fo fr ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy
    hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw ky kz
    la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms mt mu mv mw mx
    my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re
    ro rs ru rw sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st su sv sx sy sz tc td tf tg th
    tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw
    com net org edu gov mil int info biz name pro aero asia cat coop jobs mobi museum tel travel
    xxx app dev page blog shop store online site tech xyz club top win vip ltd group live life
    news today world space website cloud email link click fun art design digital agency media
    network studio games game video photo photos music ton onion bot help support software
    solutions services systems team center company business market money finance bank capital
    chat social wiki zone city london moscow berlin nyc paris tokyo academy school university
    education training review reviews guru expert ninja rocks cool best free love dating date
    sex porn adult bet casino poker film movie tv radio show events host hosting domains new one
    now zip mov google youtube amazon apple microsoft android chrome gmail windows xbox
    рф москва рус онлайн сайт орг ком укр бел срб қаз мкд мон
"""
_TLDS = frozenset(_TLD_NAMES.split())


def _category(ch: str) -> str:
    """tdlib's simple Unicode category: L(etter), D(ecimal), N(umber), Z (separator) or ""."""
    category = unicodedata.category(ch)
    if category[0] == "L":
        return "L"
    if category == "Nd":
        return "D"
    return category[0] if category[0] in "NZ" else ""


def _is_word(ch: str) -> bool:
    return ch == "_" or _category(ch) in ("L", "D", "N")


def _is_hashtag_letter(ch: str) -> bool:
    code = ord(ch)
    return ch in "_\u200c\u00b7" or 0xD80 <= code <= 0xDFF or _category(ch) in ("L", "D")


def _is_url_unicode(ch: str) -> bool:
    code = ord(ch)
    if 0x2000 <= code <= 0x206F:  # General Punctuation: only joiners and dashes
        return code in (0x200C, 0x200D) or 0x2010 <= code <= 0x2015
    return _category(ch) != "Z"


def _is_url_path(ch: str) -> bool:
    return ch not in '\n<>"«»' and _is_url_unicode(ch)


def _is_protocol(ch: str) -> bool:
    if ord(ch) < 0x80:
        return ch in _ALNUM or ch in "+-"  # no dots
    return _category(ch) != "Z"  # letters too, so that such a protocol is refused later


def _is_user_data(ch: str) -> bool:
    return ch not in "\n/[]{}()'`<>\"@«»" and _is_url_unicode(ch)


def _is_domain(ch: str) -> bool:
    if ord(ch) < 0xC0:
        return ch in "._-~" or ch in _ALNUM
    return _is_url_unicode(ch)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _at(text: str, i: int) -> str:
    return text[i] if 0 <= i < len(text) else "\0"


Span = tuple[int, int]


def _next_mark(text: str, mark: str, start: int, joins: Callable[[str], bool]) -> int:
    """Where the next `mark` at or after `start` stands that does not follow a character
    `joins` says makes it part of what comes before (-1: none left). Every tdlib match_*
    scanner starts its candidates so."""
    ptr = text.find(mark, start)
    while ptr > 0 and joins(text[ptr - 1]):
        ptr = text.find(mark, ptr + 1)
    return ptr


def _name_end(text: str, ptr: int) -> int:
    """Where the run of ASCII letters, digits and underscores (a username) from `ptr` ends."""
    while ptr < len(text) and text[ptr] in _ALNUM_UNDERSCORE:
        ptr += 1
    return ptr


def _is_command_joint(ch: str) -> bool:
    return _is_word(ch) or ch in "/<>"


def _is_cashtag_joint(ch: str) -> bool:
    return _is_hashtag_letter(ch) or ch == "$"


# One marked entity read after its mark: where the scan goes on, and the span found (the mark
# included), or None.
_Reader = Callable[[str, int], tuple[int, Span | None]]


def _scan(text: str, mark: str, joins: Callable[[str], bool], read: _Reader) -> list[Span]:
    """The loop of tdlib's scanners of marked entities (@, /, #, $): ``read`` reads one at
    every ``mark`` :func:`_next_mark` finds."""
    found: list[Span] = []
    ptr = 0
    while (ptr := _next_mark(text, mark, ptr, joins)) >= 0:
        ptr, span = read(text, ptr + 1)
        if span is not None:
            found.append(span)
    return found


def _mention(text: str, begin: int) -> tuple[int, Span | None]:
    """match_mentions' step: ``@username``."""
    ptr = _name_end(text, begin)
    size = ptr - begin
    if 2 <= size <= 32 and not (ptr < len(text) and _is_word(text[ptr])):
        name = text[begin:ptr]
        if size >= 4 or ascii_lower(name) in _SHORT_USERNAMES:
            return ptr, (begin - 1, ptr)
    return ptr, None


def _bot_command(text: str, begin: int) -> tuple[int, Span | None]:
    """match_bot_commands' step: ``/command`` or ``/command@botname``."""
    end = ptr = _name_end(text, begin)
    ok = 1 <= end - begin <= 64
    if ok and ptr < len(text) and text[ptr] == "@":
        name_begin = ptr + 1
        ptr = _name_end(text, name_begin)
        ok, end = 3 <= ptr - name_begin <= 32, ptr
    if ok and not (ptr < len(text) and _is_command_joint(text[ptr])):
        return ptr, (begin - 1, end)
    return ptr, None


def _hashtag(text: str, begin: int) -> tuple[int, Span | None]:
    """match_hashtags' step: ``#tag`` or ``#tag@username``."""
    size = len(text)
    ptr = begin
    count = 0
    end = -1
    was_letter = False
    while ptr < size and _is_hashtag_letter(text[ptr]):
        ptr += 1
        if count == 255:
            end = ptr  # at most 256 characters, though the run of letters goes on
        if count != 256:
            was_letter |= _category(text[ptr - 1]) == "L"
            count += 1
    if end < 0:
        end = ptr
    if count >= 1:
        if end == ptr and _at(text, ptr) == "@":
            name_end = ptr + 1
            while name_end < size and name_end - ptr < 33 and text[name_end] in _ALNUM_UNDERSCORE:
                name_end += 1
            if name_end - ptr - 1 >= 3:
                ptr = end = name_end
        if _at(text, ptr) != "#" and was_letter:
            return ptr, (begin - 1, end)
    return ptr, None


def _cashtag(text: str, begin: int) -> tuple[int, Span | None]:
    """match_cashtags' step: ``$TICKER`` or ``$TICKER@username``."""
    size = len(text)
    ptr = begin
    if text.startswith("1INCH", ptr):
        ptr += 5
    else:
        while ptr < size and "A" <= text[ptr] <= "Z":
            ptr += 1
    end = ptr
    if 1 <= end - begin <= 8:
        if _at(text, ptr) == "@":
            name_end = _name_end(text, ptr + 1)
            if 3 <= name_end - ptr - 1 <= 32:
                ptr = end = name_end
        if end == size or not _is_cashtag_joint(text[ptr]):
            return ptr, (begin - 1, end)
    return ptr, None


def _path_end(text: str, start: int) -> int:
    """End of the path, query or fragment beginning at ``text[start]`` (a "/", "?" or "#")."""
    end = start + 1
    while end < len(text) and _is_url_path(text[end]):
        end += 1
    while end > start + 1 and text[end - 1] in _BAD_PATH_END:
        end -= 1
    return end


def _tg_urls(text: str) -> list[Span]:
    found: list[Span] = []
    size = len(text)
    ptr = 0
    # tdlib stops once at most 5 bytes are left
    while size - ptr > 5 or _utf8_len(text[ptr:]) > 5:
        ptr = text.find(":", ptr)
        if ptr < 0:
            break
        begin = -1
        if text.startswith("//", ptr + 1):
            before = ascii_lower(text[max(ptr - 7, 0) : ptr])
            if before.endswith("tg"):
                begin = ptr - 2
            elif before.endswith("ton"):
                begin = ptr - 3
            elif before == "tonsite":
                begin = ptr - 3  # sic: tdlib starts a tonsite link at its "ite"
        if begin < 0:
            ptr += 1
            continue
        ptr += 3
        domain = ptr
        while ptr < size and ptr - domain != 253 and text[ptr] in _ALNUM_UNDERSCORE_MINUS:
            ptr += 1
        if ptr == domain:
            continue
        if ptr < size and text[ptr] in "/?#":
            end = _path_end(text, ptr)
            if text[ptr] == "/" or end > ptr + 1:
                ptr = end
        found.append((begin, ptr))
    return found


def _urls(text: str) -> list[Span]:
    """match_urls: candidate links and e-mail addresses around every dot."""
    found: list[Span] = []
    size = len(text)
    base = 0  # where the text still to look at begins
    while True:
        dot = text.find(".", base)
        if dot < 0 or dot + 1 == size:
            break
        if text[dot + 1] == " ":
            base = dot + 2
            continue
        domain_begin = dot
        while domain_begin > base and _is_domain(text[domain_begin - 1]):
            domain_begin -= 1
        last_at = -1
        domain_end = dot
        while domain_end < size:
            if text[domain_end] == "@":
                last_at = domain_end
            elif not _is_domain(text[domain_end]):
                break
            domain_end += 1
        if last_at >= 0:
            while domain_begin > base and _is_user_data(text[domain_begin - 1]):
                domain_begin -= 1

        url_end = domain_end
        if _at(text, url_end) == ":":
            port_end = url_end + 1
            while port_end < size and text[port_end] in string.digits:
                port_end += 1
            port = text[url_end + 1 : port_end].lstrip("0")
            if port and len(port) <= 5 and int(port) <= 65535:
                url_end = port_end
        if _at(text, url_end) in "/?#" and url_end < size:
            path_end = _path_end(text, url_end)
            if text[url_end] == "/" or path_end > url_end + 1:
                url_end = path_end
        while url_end > dot + 1 and text[url_end - 1] == ".":
            url_end -= 1

        bad = False
        url_begin = domain_begin
        if url_begin > base and text[url_begin - 1] == "@":
            if last_at >= 0:
                bad = True
            user_begin = url_begin - 1
            while user_begin > base and _is_user_data(text[user_begin - 1]):
                user_begin -= 1
            if user_begin == url_begin - 1:
                bad = True
            url_begin = user_begin
        if url_begin > base:
            # The text before the link, from where this look began, ends with "://" and has at
            # least 6 bytes: a protocol must be before it.
            has_scheme = url_begin - base >= 3 and text.startswith("://", url_begin - 3)
            if has_scheme and (url_begin - base >= 6 or _utf8_len(text[base:url_begin]) >= 6):
                protocol_begin = url_begin - 3
                while protocol_begin > base and _is_protocol(text[protocol_begin - 1]):
                    protocol_begin -= 1
                protocol = ascii_lower(text[protocol_begin : url_begin - 3])
                if protocol.endswith("http") and protocol != "shttp":
                    url_begin -= 7
                elif protocol.endswith("https"):
                    url_begin -= 8
                elif protocol.endswith("ftp") and protocol not in ("tftp", "sftp"):
                    url_begin -= 6
                elif protocol.endswith("tonsite"):
                    url_begin -= 10
                else:
                    bad = True
            elif _is_word(text[url_begin - 1]) or text[url_begin - 1] in "/#@":
                bad = True

        if not bad:
            if url_end > dot + 1:
                found.append((url_begin, url_end))
            while url_end < size and text[url_end] == ".":
                url_end += 1
        else:
            while text[url_end - 1] != ".":
                url_end -= 1
        base = max(url_end, dot + 1)
    return found


def is_email_address(text: str) -> bool:
    """tdlib's is_email_address (roughly ``user@domain.tld``, ASCII only)."""
    user, at, domain = text.partition("@")
    if not at or not domain:
        return False
    parts = user.replace("+", ".").split(".")
    if len(parts) >= 12 or any(len(p) >= 27 for p in parts[:-1]):
        return False
    if not 0 < len(parts[-1]) < 36:
        return False
    if any(c not in _ALNUM_UNDERSCORE_MINUS for part in parts for c in part):
        return False
    labels = domain.split(".")
    tld = labels.pop()
    if not 1 < len(labels) + 1 <= 7 or not 2 <= len(tld) <= 8:
        return False
    if not (tld.isascii() and tld.isalpha()):
        return False
    return all(
        0 < len(label) < 31
        and all(c in _ALNUM_UNDERSCORE_MINUS for c in label)
        and label[0] in _ALNUM
        and label[-1] in _ALNUM
        for label in labels
    )


def _is_common_tld(tld: str) -> bool:
    lowered = tld.lower()
    if lowered != tld and lowered[1:] == tld[1:]:
        return False  # "Org": only the first letter capitalised
    return lowered in _TLDS


def _ipv4_part(part: str) -> bool:
    if len(part) > 3 or not part.isdigit() or not part.isascii():
        return False
    if len(part) == 3 and part > "255":
        return False
    return not (part[0] == "0" and len(part) >= 2)


def _fix_url(text: str, begin: int, end: int) -> int:
    """fix_url: the end of the link in ``text[begin:end]``, or -1 if it is no link."""
    url = text[begin:end]
    lowered = ascii_lower(url[:10])
    has_protocol = lowered.startswith(("http://", "https://", "ftp://", "tonsite://"))
    rest = url[url.find(":") + 3 :] if has_protocol else url
    domain_end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    domain, path = rest[:domain_end], rest[domain_end:]
    domain = domain[domain.find("@") + 1 :]
    if ":" in domain:
        domain = domain[: domain.rfind(":")]
    if ascii_lower(domain) == "teiegram.org":
        return -1

    balance = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    cut = 0
    while cut < len(path):
        ch = path[cut]
        if ch in balance:
            balance[ch] += 1
        elif ch in closing:
            balance[closing[ch]] -= 1
            if balance[closing[ch]] < 0:
                break
        cut += 1
    while cut > 0 and path[cut - 1] in _BAD_PATH_END:
        cut -= 1
    end -= len(path) - cut

    parts = domain.split(".")
    if any(not p or _utf8_len(p) >= 64 or p[-1] == "-" for p in parts) or len(parts) == 1:
        return -1
    if len(parts) == 4 and all(_ipv4_part(p) for p in parts):
        return end
    if all(p.isascii() and p.isdigit() for p in parts):
        return -1
    tld = parts[-1]
    if len(tld) <= 1:
        return -1
    if tld.startswith("xn--"):
        if len(tld) <= 5 or any(c not in _ALNUM for c in tld[4:]):
            return -1
    elif "_" in tld or "-" in tld or (not has_protocol and not _is_common_tld(tld)):
        return -1
    if "_" in parts[-2]:
        return -1
    return end


def _links(text: str) -> list[tuple[Span, str]]:
    """find_urls: links (``url``) and e-mail addresses (``email``) with their spans."""
    found: list[tuple[Span, str]] = []
    for begin, end in _urls(text):
        candidate = text[begin:end]
        if is_email_address(candidate):
            found.append(((begin, end), "email"))
        elif candidate.startswith("mailto:") and is_email_address(candidate[7:]):
            found.append(((begin + 7, end), "email"))
        else:
            fixed = _fix_url(text, begin, end)
            if fixed > begin:
                found.append(((begin, fixed), "url"))
    return found


def _to_utf16(text: str) -> list[int]:
    """UTF-16 offset of every index of ``text`` (and of its end)."""
    offsets = [0] * (len(text) + 1)
    utf16 = 0
    for index, ch in enumerate(text):
        offsets[index] = utf16
        utf16 += 2 if ord(ch) > 0xFFFF else 1
    offsets[len(text)] = utf16
    return offsets


def find_entities(text: str, *, bot_commands: bool = True) -> list[Entity]:
    """The automatic entities of ``text``, sorted and not overlapping (the first found of two
    overlapping ones wins, as in tdlib): mentions, bot commands (unless ``bot_commands`` is
    false), hashtags, cashtags, tg:// and ton:// links, links and e-mail addresses."""
    spans: list[tuple[Span, str]] = []
    if "@" in text:
        spans += [(s, "mention") for s in _scan(text, "@", _is_word, _mention)]
    if bot_commands and "/" in text:
        spans += [(s, "bot_command") for s in _scan(text, "/", _is_command_joint, _bot_command)]
    if "#" in text:
        spans += [(s, "hashtag") for s in _scan(text, "#", _is_hashtag_letter, _hashtag)]
    if "$" in text:
        spans += [(s, "cashtag") for s in _scan(text, "$", _is_cashtag_joint, _cashtag)]
    if ":" in text:
        spans += [(s, "url") for s in _tg_urls(text)]
    if "." in text:
        spans += _links(text)
    if not spans:
        return []
    spans.sort(key=lambda found: (found[0][0], -found[0][1]))  # all have the same priority
    utf16 = _to_utf16(text) if ASTRAL.search(text) else None
    entities: list[Entity] = []
    last_end = 0
    for (begin, end), kind in spans:
        if begin >= last_end:
            last_end = end
            if utf16 is not None:
                begin, end = utf16[begin], utf16[end]
            entities.append(Entity(kind, begin, end - begin))
    return entities


def finder(*, bot_commands: bool = True) -> Finder:
    """:func:`find_entities` as the ``find`` argument of ``fix_formatted_text``."""
    return lambda text: find_entities(text, bot_commands=bot_commands)
