"""The panel's languages: every message in both catalogs, no text outside them, digits, dates."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po

from sponsorbot.web.panel import i18n

WEB = Path(i18n.__file__).resolve().parent.parent
TEMPLATES = WEB / "templates"
PLACEHOLDER = re.compile(r"%\((\w+)\)s")
# Jinja expressions, statements and comments; the main_class block holds a CSS class name.
JINJA = re.compile(
    r"\{% block main_class %\}.*?\{% endblock %\}|\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL
)
# Attributes a person reads or hears.
READABLE = frozenset({"placeholder", "title", "aria-label", "alt", "hx-confirm", "label"})
# Each language's own name on the switch is written in that language on purpose.
NOT_TRANSLATED = frozenset({"English", "فارسی"})


def extracted() -> set[str]:
    keywords = dict(DEFAULT_KEYWORDS)
    keywords["N_"] = None
    found = extract_from_dir(
        str(WEB),
        method_map=[
            ("panel/**.py", "python"),
            ("parts/**.py", "python"),
            ("templates/**.html", "jinja2"),
        ],
        options_map={"templates/**.html": {"extensions": "jinja2.ext.i18n"}},
        keywords=keywords,
    )
    return {str(message) for _file, _line, message, _comments, _context in found}


def catalog(language: str) -> dict[str, str]:
    path = WEB / "locale" / language / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as po:
        return {str(m.id): str(m.string) for m in read_po(po) if m.id and not m.fuzzy}


def test_every_message_is_translated_in_both_catalogs() -> None:
    messages = extracted()
    assert len(messages) > 100
    for language in i18n.LANGUAGES:
        entries = catalog(language)
        missing = sorted(m for m in messages if not entries.get(m))
        assert not missing, f"{language} catalog misses: {missing}"
        stale = sorted(set(entries) - messages)
        assert not stale, f"{language} catalog has messages nothing uses: {stale}"
        for message in messages:
            assert set(PLACEHOLDER.findall(entries[message])) == set(
                PLACEHOLDER.findall(message)
            ), f"{language}: placeholders differ in {message!r}"


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if name in READABLE and value:
                self._check(value)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._check(data)

    def _check(self, text: str) -> None:
        text = text.strip()
        if text and text not in NOT_TRANSLATED and re.search(r"[^\W\d_]", text):
            self.found.append(text)


def test_templates_have_no_text_outside_the_catalogs() -> None:
    templates = sorted(TEMPLATES.rglob("*.html"))
    assert len(templates) > 10
    for template in templates:
        parser = _Text()
        parser.feed(JINJA.sub(" ", template.read_text(encoding="utf-8")))
        assert not parser.found, f"{template.name} has text outside _(): {parser.found}"


def test_the_text_check_catches_bare_text() -> None:
    parser = _Text()
    parser.feed(JINJA.sub(" ", '<p>{{ _("ok") }} Bare words</p><input placeholder="Type">'))
    assert parser.found == ["Bare words", "Type"]


def test_persian_digits_and_jalali_dates_in_tehran_time() -> None:
    moment = datetime(2026, 3, 20, 21, 0, tzinfo=UTC)  # 00:30 on 21 March in Tehran: Nowruz
    i18n.use_language("fa")
    try:
        assert i18n.localize_digits(1234567) == "۱٬۲۳۴٬۵۶۷"
        assert i18n.format_datetime(moment, "Asia/Tehran") == "۱۴۰۵/۰۱/۰۱ ۰۰:۳۰"
        assert i18n.gettext("Dashboard") == "پیشخوان"
        assert (
            i18n.gettext("Use at least %(n)s characters.", n=10) == "دست‌کم ۱۰ نویسه به کار ببرید."
        )
    finally:
        i18n.use_language("en")
    assert i18n.format_datetime(moment, "Asia/Tehran") == "2026-03-21 00:30"
    assert i18n.localize_digits(1234567) == "1,234,567"
    assert i18n.gettext("Dashboard") == "Dashboard"
