"""The documentation's links hold: every relative link and image in docs/ points at a file that
exists (and, for a link into a Markdown page, at a heading or anchor it has), the English and
the Persian guides have the same pages, and the Persian pages keep their prose right to left.

GitHub is what renders these pages, so anchors follow its rules: a heading's anchor is its text
lowercased, without punctuation, spaces turned into hyphens; `<a id="...">` adds one.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GUIDES = DOCS / "guide"
LANGUAGES = ("en", "fa")

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
# [text](target) and ![alt](target), with an optional "title".
MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]+)\"", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def prose_lines(text: str) -> list[str]:
    """The page's lines outside fenced code blocks."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def links_of(text: str) -> list[str]:
    """Every link and image target the page has in its prose (not in code)."""
    found: list[str] = []
    for line in prose_lines(text):
        line = INLINE_CODE.sub("``", line)
        found += MD_LINK.findall(line)
        found += HTML_LINK.findall(line)
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"<[^>]+>", "", heading)  # inline HTML such as <a id="..."></a>
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = text.replace("`", "").lower()
    kept = (
        ch
        for ch in text
        if ch in " -_" or unicodedata.category(ch)[0] in "LMN" or unicodedata.category(ch) == "Pc"
    )
    return "".join(kept).replace(" ", "-")


def anchors_of(text: str) -> set[str]:
    """The anchors a page offers: its headings' (numbered when repeated) and explicit ones."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose_lines(text):
        anchors.update(HTML_ANCHOR.findall(INLINE_CODE.sub("``", line)))
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchors.add(base if count == 0 else f"{base}-{count}")
    return anchors


def broken_links(page: Path) -> list[str]:
    """The page's relative links that do not resolve, each with the reason."""
    problems: list[str] = []
    for target in links_of(page.read_text(encoding="utf-8")):
        if EXTERNAL.match(target):
            continue
        path_part, _, fragment = target.partition("#")
        resolved = (page.parent / unquote(path_part)).resolve() if path_part else page
        if not resolved.exists():
            problems.append(f"{target}: no such file")
            continue
        if fragment and resolved.suffix == ".md":
            offered = anchors_of(resolved.read_text(encoding="utf-8"))
            if unquote(fragment) not in offered:
                problems.append(f"{target}: no heading or anchor #{fragment}")
    return problems


def docs_pages() -> list[Path]:
    """Every Markdown page under docs/."""
    return sorted(DOCS.rglob("*.md"))


def test_the_link_checker_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A heading\n\n## Running `sponsorbot` commands\n")
    (tmp_path / "img.png").write_bytes(b"")
    page.write_text(
        "[ok](there.md) [ok](there.md#a-heading) ![ok](img.png) [ok](https://example.com)\n"
        '[ok](there.md#running-sponsorbot-commands) [ok](#top) <a id="top"></a>\n'
        "[gone](missing.md) ![gone](gone.png) [bad](there.md#nowhere)\n"
        "`[not a link](nothing.md)`\n```\n[in code](nothing.md)\n```\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "gone.png: no such file",
        "there.md#nowhere: no heading or anchor #nowhere",
    ]


def test_slugs_follow_github() -> None:
    assert slug("3. Build the gate") == "3-build-the-gate"
    assert slug("Running `sponsorbot` commands") == "running-sponsorbot-commands"
    assert slug('<a id="api-tokens"></a>توکن‌های API') == "توکنهای-api"
    assert slug("Team, roles and API tokens") == "team-roles-and-api-tokens"


@pytest.mark.parametrize("page", docs_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_every_relative_link_and_image_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_english_and_persian_guides_have_the_same_pages() -> None:
    pages = {lang: sorted(p.name for p in (GUIDES / lang).glob("*.md")) for lang in LANGUAGES}
    assert pages["en"], "no English guide pages"
    assert pages["en"] == pages["fa"]


def test_every_guide_page_is_in_both_indexes() -> None:
    for lang in LANGUAGES:
        index = links_of((GUIDES / lang / "README.md").read_text(encoding="utf-8"))
        pages = {p.name for p in (GUIDES / lang).glob("*.md")} - {"README.md"}
        assert pages <= set(index), f"{lang}/README.md misses {sorted(pages - set(index))}"
    top = links_of((GUIDES / "README.md").read_text(encoding="utf-8"))
    for lang in LANGUAGES:
        for page in (GUIDES / lang).glob("*.md"):
            assert f"{lang}/{page.name}" in top, f"guide/README.md misses {lang}/{page.name}"


@pytest.mark.parametrize("page", sorted((GUIDES / "fa").glob("*.md")), ids=lambda p: p.name)
def test_persian_prose_is_right_to_left_and_code_is_not(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert text.startswith('<div dir="rtl">\n'), "a Persian page opens with its RTL block"
    depth = 0
    for line in text.splitlines():
        if line.startswith('<div dir="rtl">'):
            assert depth == 0, "RTL blocks do not nest"
            depth = 1
        elif line.startswith("</div>"):
            assert depth == 1, "a </div> closes an RTL block"
            depth = 0
        elif FENCE.match(line):
            # Commands are copied as typed: a code block sits outside the RTL block.
            assert depth == 0, f"a code block inside an RTL block: {line!r}"
    assert depth == 0, "the last RTL block is closed"


def test_every_guide_image_is_used() -> None:
    used: set[Path] = set()
    for page in GUIDES.rglob("*.md"):
        for target in links_of(page.read_text(encoding="utf-8")):
            if not EXTERNAL.match(target):
                used.add((page.parent / unquote(target.partition("#")[0])).resolve())
    images = {p.resolve() for p in (GUIDES / "img").glob("*.png")}
    assert images - used == set()
