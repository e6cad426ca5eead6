"""The documentation's links hold: every relative link and image in README.md and docs/ points
at a file that exists (and, for a link into a Markdown page, at a heading or anchor it has), the
English and the Persian guides have the same pages with the same headings, and the Persian pages
keep their prose right to left with their inline code guarded. What a newcomer copies works as
written: no `pip install .` before a virtual environment is made, and API examples name a bot by
its Telegram id, as the API does.

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

LRM = "\u200e"
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
# [text](target) and ![alt](target), with an optional "title".
MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]+)\"", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
PIP_INSTALL_HERE = re.compile(r"\bpip install (-e )?['\"]?\.")
MAKES_VENV = re.compile(r"\bpython3? -m venv\b")
# A bot's id is its Telegram id, the number before the colon of its token: never 1 or 2.
SMALL_BOT_ID = re.compile(r"/bots/\d{1,4}(?![\d}])|\"bot_ids\":\s*\[\s*\d{1,4}\b")
# cli.py's commands, read from its source: `@app.command("name")` or `@app.command()` over
# `def name(`, and the groups `app.add_typer(group_app, name="group")`.
CLI_COMMAND = re.compile(r'@(\w+)\.command\((?:"([\w-]+)")?\)\s*\ndef (\w+)\(')
CLI_GROUP = re.compile(r'app\.add_typer\((\w+), name="([\w-]+)"\)')


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
    """Every Markdown page under docs/, and the README."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def page_id(page: Path) -> str:
    """A page's name in a test id: its path from the repository's root."""
    return str(page.relative_to(ROOT))


def code_lines(text: str) -> list[str]:
    """The page's lines inside fenced code blocks."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif fenced:
            lines.append(line)
    return lines


def pip_before_venv(text: str) -> list[str]:
    """Fenced `pip install .` lines with no `python3 -m venv` before them on the page: on
    Debian and Ubuntu pip refuses to install outside a virtual environment."""
    problems: list[str] = []
    venv_made = False
    for line in code_lines(text):
        if PIP_INSTALL_HERE.search(line) and not venv_made:
            problems.append(line.strip())
        venv_made = venv_made or bool(MAKES_VENV.search(line))
    return problems


def headings_of(text: str) -> list[int]:
    """The levels of the page's headings, in order."""
    return [len(m.group(1)) for line in prose_lines(text) if (m := HEADING.match(line))]


def unguarded_code(text: str) -> list[str]:
    """Inline code in a page's right-to-left prose that starts without a strong left-to-right
    character and has no LRM before it, or ends without one and has no LRM after it: the
    bidirectional algorithm would move its punctuation (`--dry-run` showing as `dry-run--`)."""
    problems: list[str] = []
    rtl = False
    for line in prose_lines(text):
        if line.startswith('<div dir="rtl">'):
            rtl = True
        elif line.startswith("</div>"):
            rtl = False
        elif rtl:
            for span in INLINE_CODE.finditer(line):
                code = span.group()[1:-1]
                if not code:
                    continue
                starts_strong = code[0].isascii() and code[0].isalpha()
                ends_strong = code[-1].isascii() and code[-1].isalnum()
                open_start = not starts_strong and not line[: span.start()].endswith(LRM)
                open_end = not ends_strong and not line[span.end() :].startswith(LRM)
                if open_start or open_end:
                    problems.append(span.group())
    return problems


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


@pytest.mark.parametrize("page", docs_pages(), ids=page_id)
def test_every_relative_link_and_image_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_venv_check_sees_a_bare_pip_install() -> None:
    bare = "```sh\npip install . && sponsorbot demo\n```\n"
    made = "```sh\npython3 -m venv .venv && . .venv/bin/activate\npip install .\n```\n"
    editable = "Text.\n```sh\npip install -e '.[test]'\n```\n```sh\npython3 -m venv .venv\n```\n"
    assert pip_before_venv(bare) == ["pip install . && sponsorbot demo"]
    assert pip_before_venv(made) == []
    assert pip_before_venv(editable) == ["pip install -e '.[test]'"]
    assert pip_before_venv("`pip install .` in prose is not a command block\n") == []


@pytest.mark.parametrize("page", docs_pages(), ids=page_id)
def test_every_pip_install_comes_after_a_venv(page: Path) -> None:
    assert pip_before_venv(page.read_text(encoding="utf-8")) == []


def cli_commands(source: str) -> set[str]:
    """Every `sponsorbot ...` command line cli.py defines, groups included (`token create`)."""
    groups = {variable: name for variable, name in CLI_GROUP.findall(source)}
    commands = set()
    for owner, named, function in CLI_COMMAND.findall(source):
        name = named or function.replace("_", "-")
        commands.add(f"{groups[owner]} {name}" if owner in groups else name)
    return commands


def test_the_command_reader_reads_cli_py_as_typer_does() -> None:
    source = (
        'extra_app = typer.Typer()\napp.add_typer(extra_app, name="extra")\n'
        '@app.command()\ndef run_it(\n@app.command("setup-code")\ndef setup_code(\n'
        '@extra_app.command("create")\ndef extra_create(\n'
    )
    assert cli_commands(source) == {"run-it", "setup-code", "extra create"}


def test_the_readme_lists_every_command() -> None:
    commands = cli_commands((ROOT / "src" / "sponsorbot" / "cli.py").read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = readme[readme.index("## Commands") :].split("\n## ", 1)[0]
    assert len(commands) >= 14
    assert {c for c in commands if f"`sponsorbot {c}" not in listed} == set()


def test_the_bot_id_check_sees_small_ids() -> None:
    assert SMALL_BOT_ID.search("https://bot.example.com/api/v1/bots/1/uploaders")
    assert SMALL_BOT_ID.search('"bot_ids": [1, 2]')
    assert not SMALL_BOT_ID.search("/api/v1/bots/123456789/broadcasts")
    assert not SMALL_BOT_ID.search("/api/v1/bots/{id}/token and /bots/<id>/")


@pytest.mark.parametrize("page", docs_pages(), ids=page_id)
def test_api_examples_name_bots_by_their_telegram_id(page: Path) -> None:
    found = [m.group() for m in SMALL_BOT_ID.finditer(page.read_text(encoding="utf-8"))]
    assert found == [], "a bot's id is the number before the colon of its token, e.g. 123456789"


def test_english_and_persian_guides_have_the_same_pages() -> None:
    pages = {lang: sorted(p.name for p in (GUIDES / lang).glob("*.md")) for lang in LANGUAGES}
    assert pages["en"], "no English guide pages"
    assert pages["en"] == pages["fa"]


@pytest.mark.parametrize("name", sorted(p.name for p in (GUIDES / "en").glob("*.md")))
def test_english_and_persian_pages_have_the_same_headings(name: str) -> None:
    english = headings_of((GUIDES / "en" / name).read_text(encoding="utf-8"))
    persian = headings_of((GUIDES / "fa" / name).read_text(encoding="utf-8"))
    assert english == persian, "the same sections, in the same order, at the same levels"


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


def test_the_guard_check_sees_unguarded_code() -> None:
    page = (
        '<div dir="rtl">\n\nبا `--dry-run` و `x-y` و ‎`--yes` و `a.`‎ و `{"a": 1}` و `b`\n'
        "\n</div>\n\n`--outside` the RTL block\n"
    )
    assert unguarded_code(page) == ["`--dry-run`", '`{"a": 1}`']


@pytest.mark.parametrize("page", sorted((GUIDES / "fa").glob("*.md")), ids=lambda p: p.name)
def test_persian_inline_code_is_guarded(page: Path) -> None:
    assert unguarded_code(page.read_text(encoding="utf-8")) == []


def test_every_guide_image_is_used() -> None:
    used: set[Path] = set()
    for page in GUIDES.rglob("*.md"):
        for target in links_of(page.read_text(encoding="utf-8")):
            if not EXTERNAL.match(target):
                used.add((page.parent / unquote(target.partition("#")[0])).resolve())
    images = {p.resolve() for p in (GUIDES / "img").glob("*.png")}
    assert images - used == set()
