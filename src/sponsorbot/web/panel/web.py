"""The panel's request plumbing: who is asking, in which language, may they, and rendering.

Every panel route depends on `require(permission)` or `public()`. Both resolve the viewer
(session cookie → member, language), and for every unsafe method both check the CSRF token
(form field `csrf` or header `X-CSRF-Token`, as htmx sends it) before the route runs.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import asyncpg
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from sponsorbot.features.accounts import workspace as workspaces
from sponsorbot.features.accounts.audit import Actor, record
from sponsorbot.features.accounts.permissions import PERMISSIONS
from sponsorbot.features.accounts.security import PanelKeys, same
from sponsorbot.features.accounts.users import LockoutPolicy, Session, User, load_session
from sponsorbot.features.content.service import MAX_UPLOAD_BYTES
from sponsorbot.web.panel import fields, i18n
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.registry import TEMPLATES, BotTab, NavEntry

SESSION_COOKIE = "sb_session"
PRE_COOKIE = "sb_pre"  # double-submit CSRF token for forms shown before signing in
LANG_COOKIE = "sb_lang"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Over https cookies take this prefix: the browser then insists on Secure, Path=/ and no
# Domain, so a neighbouring (sub)domain or a plain-http page cannot plant them.
SECURE_PREFIX = "__Host-"
# What an anonymous form may hold: a few short fields and no file (the CSRF check reads the
# form before the route, so these bound what anyone can make the server parse and spool).
PUBLIC_FORM = {"max_files": 0, "max_fields": 50, "max_part_size": 64 * 1024}
# A member's forms: the content page's upload is the one file; its size is checked by the route.
MEMBER_FORM = {"max_files": 1, "max_fields": 1000, "max_part_size": 256 * 1024}
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
LOOPBACK_NAMES = frozenset({"localhost"})
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
HSTS = "max-age=31536000"

ROLE_NAMES = {
    "owner": N_("Owner"),
    "admin": N_("Admin"),
    "editor": N_("Editor"),
    "analyst": N_("Analyst"),
}


# Set only by `sponsorbot demo`, in the environment of the product it starts: its panel is
# built by `sponsorbot run` in that other process.
DEMO_EMAIL_VARIABLE = "SPONSORBOT_DEMO_EMAIL"
DEMO_PASSWORD_VARIABLE = "SPONSORBOT_DEMO_PASSWORD"


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class DemoAccount:
    """The demo's owner account, which its sign-in page shows."""

    email: str
    password: str


def demo_account() -> DemoAccount | None:
    """The account `sponsorbot demo` passed down to its panel; None in any other panel."""
    email, password = os.environ.get(DEMO_EMAIL_VARIABLE), os.environ.get(DEMO_PASSWORD_VARIABLE)
    return DemoAccount(email, password) if email and password else None


@dataclass
class PanelConfig:
    """Tunables of the panel; tests move the clock and shorten the delays."""

    clock: Callable[[], datetime] = _utc_now
    idle_timeout: timedelta = timedelta(hours=2)
    # However active, a session ends this long after signing in.
    session_lifetime: timedelta = timedelta(days=14)
    lockout: LockoutPolicy = field(default_factory=LockoutPolicy)
    # True/False: always/never Secure cookies. None: Secure unless the panel is plain http
    # on a loopback host (see `is_secure`).
    secure_cookies: bool | None = None
    # The panel's public base URL (links in invitations and resets; https makes it Secure).
    panel_url: str | None = None
    # Reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed.
    trusted_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    # The installation key: TOTP secrets and recovery codes are kept under keys derived
    # from it. None keeps them as before (clear secrets, plain sha256 codes).
    secret_key: bytes | None = field(default=None, repr=False)
    upload_limit: int = MAX_UPLOAD_BYTES  # the largest file the content page accepts
    demo: DemoAccount | None = field(default_factory=demo_account)  # shown on the sign-in page
    keys: PanelKeys = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.keys = PanelKeys(self.secret_key)


@dataclass
class Panel:
    """What every panel route needs, kept on `app.state.panel`."""

    pool: asyncpg.Pool
    config: PanelConfig
    env: Environment
    # The main menu and the tabs of a bot's pages: every installed web part's, in order.
    nav: tuple[NavEntry, ...] = ()
    bot_tabs: tuple[BotTab, ...] = ()


@functools.cache
def make_environment(directories: tuple[Path, ...] = (TEMPLATES,)) -> Environment:
    """Jinja with autoescape and gettext bound to the request's language, finding templates
    in `directories` in order (the shared ones, then each installed web part's own).

    One per process and list of directories: templates never change while it runs, so every
    app made in it (the tests make hundreds) shares the compiled templates.
    """
    env = Environment(
        loader=FileSystemLoader(directories),
        autoescape=select_autoescape(["html"]),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.install_gettext_callables(  # type: ignore[attr-defined]
        i18n.gettext, i18n.ngettext, newstyle=True
    )
    # Jinja's own new-style pair, but isolating the Latin values of Persian sentences.
    gettext, ngettext = i18n.template_callables()
    env.globals.update(gettext=gettext, ngettext=ngettext)
    env.filters["num"] = i18n.localize_digits
    env.globals["language"] = i18n.current_language
    env.globals.update(day_input=fields.day_input, day_example=fields.day_example)
    return env


class SignInRequired(Exception):
    """No live session: the visitor is sent to sign in."""


class Forbidden(Exception):
    """Signed in, but the role does not allow this."""


class CsrfRefused(Exception):
    """An unsafe request without the right CSRF token."""


@dataclass
class Viewer:
    """The visitor of one request: their session (if any), language and CSRF token."""

    session: Session | None
    language: str
    csrf: str
    new_pre_token: str | None
    workspace: dict[str, Any]

    @property
    def user(self) -> User:
        """The signed-in member (only on routes that required one)."""
        if self.session is None:
            raise SignInRequired
        return self.session.user

    def can(self, permission: str) -> bool:
        """True when the signed-in member's role has `permission`."""
        return (
            self.session is not None
            and self.session.state == "active"
            and self.session.user.role in PERMISSIONS[permission]
        )


def panel_of(request: Request) -> Panel:
    """The panel's shared state."""
    panel: Panel = request.app.state.panel
    return panel


def _trusted(
    address: str, networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network]
) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def _forwarded(request: Request, name: str) -> list[str]:
    """The comma-separated values of every `name` header, in order."""
    return [v.strip() for line in request.headers.getlist(name) for v in line.split(",")]


def address_of(request: Request) -> str:
    """The visitor's address: the peer's, or behind a trusted proxy the right-most address of
    X-Forwarded-For that is not a trusted proxy (those left of it are the client's to forge)."""
    peer = request.client.host if request.client else "unknown"
    networks = panel_of(request).config.trusted_networks
    if not _trusted(peer, networks):
        return peer
    for hop in reversed(_forwarded(request, "x-forwarded-for")):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return peer  # not an address our proxy wrote: believe none of it
        if not _trusted(hop, networks):
            return hop
    return peer


def scheme_of(request: Request) -> str:
    """http or https, as the visitor sees it (X-Forwarded-Proto only from a trusted proxy)."""
    peer = request.client.host if request.client else ""
    if _trusted(peer, panel_of(request).config.trusted_networks):
        sent = _forwarded(request, "x-forwarded-proto")
        if sent and sent[-1].lower() in ("http", "https"):
            return sent[-1].lower()
    return request.url.scheme


def _loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_secure(request: Request) -> bool:
    """Whether cookies get Secure (and the __Host- prefix) and pages HSTS: the setting when
    given; otherwise yes unless the panel is plain http on a loopback host (the demo, tests)."""
    config = panel_of(request).config
    if config.secure_cookies is not None:
        return config.secure_cookies
    if (config.panel_url or "").startswith("https://") or scheme_of(request) == "https":
        return True
    return not _loopback(request.url.hostname or "")


def cookie_name(request: Request, name: str) -> str:
    """A panel cookie's name for this request: prefixed with __Host- when Secure."""
    return SECURE_PREFIX + name if is_secure(request) else name


def base_url_of(request: Request) -> str:
    """The panel's base URL for links sent to people (ends with /): the configured one, else
    the request's own."""
    configured = panel_of(request).config.panel_url
    if configured:
        return configured.rstrip("/") + "/"
    return str(request.base_url)


def security_headers(request: Request) -> dict[str, str]:
    """Headers every panel response carries."""
    headers = {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "same-origin",
    }
    if is_secure(request):
        headers["Strict-Transport-Security"] = HSTS
    return headers


def actor_of(request: Request, viewer: Viewer) -> Actor:
    """The audit log's 'who' for a signed-in member."""
    user = viewer.user
    return Actor(user.id, f"{user.name} <{user.email}>", address_of(request))


async def audit(
    request: Request,
    viewer: Viewer,
    kind: str,
    target: str | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> None:
    """Write a signed-in member's change to the audit log, at the panel's clock."""
    panel = panel_of(request)
    await record(
        panel.pool, panel.config.clock(), actor_of(request, viewer), kind, target, before, after
    )


async def audit_changes(
    request: Request,
    viewer: Viewer,
    kind: str,
    target: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    keys: Iterable[str],
) -> None:
    """Audit the `keys` whose value `after` differs from `before` (nothing when none does),
    each side holding only what changed."""
    changed = [k for k in keys if before.get(k) != after.get(k)]
    if changed:
        await audit(
            request,
            viewer,
            kind,
            target,
            before={k: before.get(k) for k in changed},
            after={k: after.get(k) for k in changed},
        )


async def _viewer(request: Request) -> Viewer:
    cached: Viewer | None = getattr(request.state, "viewer", None)
    if cached is not None:
        return cached
    panel = panel_of(request)
    session: Session | None = None
    cookie = request.cookies.get(cookie_name(request, SESSION_COOKIE))
    if cookie:
        session = await load_session(
            panel.pool,
            cookie,
            panel.config.clock(),
            panel.config.idle_timeout,
            panel.config.session_lifetime,
        )
    workspace = await workspaces.load(panel.pool)
    language = (
        (session.user.language if session else None)
        or request.cookies.get(cookie_name(request, LANG_COOKIE))
        or workspace.get("default_language")
        or "en"
    )
    if language not in i18n.LANGUAGES:
        language = "en"
    i18n.use_language(language)
    new_pre: str | None = None
    if session is not None:
        csrf = session.csrf_token
    else:
        csrf = request.cookies.get(cookie_name(request, PRE_COOKIE)) or ""
        if len(csrf) < 32:
            csrf = new_pre = secrets.token_urlsafe(32)
    viewer = Viewer(session, language, csrf, new_pre, workspace)
    request.state.viewer = viewer
    return viewer


async def viewer_of(request: Request) -> Viewer:
    """The request's viewer, with no permission or CSRF check: for the panel's error pages."""
    return await _viewer(request)


async def _check_csrf(request: Request, viewer: Viewer) -> None:
    if request.method in SAFE_METHODS:
        return
    sent = request.headers.get("X-CSRF-Token")
    if not sent:
        content_type = request.headers.get("content-type", "")
        if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            # Parsed once with bounds (the route reads the same form); too much is a 400.
            bounds = MEMBER_FORM if viewer.session is not None else PUBLIC_FORM
            value = (await request.form(**bounds)).get("csrf")
            sent = value if isinstance(value, str) else None
    if not sent or viewer.new_pre_token is not None or not same(sent, viewer.csrf):
        raise CsrfRefused


def public() -> Callable[[Request], Awaitable[Viewer]]:
    """A route anyone may open (sign-in, setup, invitation); unsafe methods still need CSRF."""

    async def dependency(request: Request) -> Viewer:
        viewer = await _viewer(request)
        await _check_csrf(request, viewer)
        return viewer

    dependency.permission = None  # type: ignore[attr-defined]
    return dependency


def require(permission: str) -> Callable[[Request], Awaitable[Viewer]]:
    """A route for signed-in members whose role has `permission`."""
    allowed = PERMISSIONS[permission]

    async def dependency(request: Request) -> Viewer:
        viewer = await _viewer(request)
        if viewer.session is None or viewer.session.state != "active":
            raise SignInRequired
        await _check_csrf(request, viewer)
        if viewer.session.user.role not in allowed:
            raise Forbidden
        return viewer

    dependency.permission = permission  # type: ignore[attr-defined]
    return dependency


def safe_next(target: str | None, default: str = "/") -> str:
    """A local path to go back to; anything else (other sites, //host, a scheme, control
    characters that browsers strip to make //host) goes to `default`."""
    if (
        not target
        or not target.startswith("/")
        or target.startswith("//")
        or "\\" in target
        or CONTROL.search(target)
    ):
        return default
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return default
    return target


def redirect(request: Request, target: str) -> Response:
    """A redirect after a form: 303 for browsers, HX-Redirect for htmx requests."""
    if request.headers.get("HX-Request"):
        return Response(status_code=204, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


def render(
    request: Request,
    viewer: Viewer,
    template: str,
    context: dict[str, Any] | None = None,
    status: int = 200,
) -> HTMLResponse:
    """A page in the viewer's language, with what every template needs."""
    panel = panel_of(request)
    zone = str(viewer.workspace.get("time_zone") or "UTC")
    values: dict[str, Any] = {
        "viewer": viewer,
        "user": viewer.session.user if viewer.session else None,
        "lang": viewer.language,
        "dir": "rtl" if viewer.language in i18n.RTL else "ltr",
        "csrf": viewer.csrf,
        "path": request.url.path,
        "full_path": request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        "workspace": viewer.workspace,
        "when": lambda moment, with_time=True: i18n.format_datetime(moment, zone, with_time),
        "zone_label": i18n.zone_label,
        "now": panel.config.clock(),
        "nav": panel.nav,
        "bot_tabs": panel.bot_tabs,
    }
    values.update(context or {})
    html = panel.env.get_template(template).render(values)
    response = HTMLResponse(html, status_code=status)
    response.headers["Cache-Control"] = "no-store"
    if viewer.new_pre_token is not None:
        set_cookie(request, response, PRE_COOKIE, viewer.new_pre_token, max_age=None)
    return response


def set_cookie(
    request: Request, response: Response, name: str, value: str, max_age: int | None
) -> None:
    """A panel cookie: HttpOnly, SameSite=Lax; Secure with the __Host- prefix (`is_secure`)."""
    response.set_cookie(
        cookie_name(request, name),
        value,
        max_age=max_age,
        httponly=True,
        samesite="lax",
        secure=is_secure(request),
        path="/",
    )


def clear_cookie(request: Request, response: Response, name: str) -> None:
    """Remove a panel cookie (a __Host- one can only be removed with Secure set)."""
    response.delete_cookie(
        cookie_name(request, name), path="/", secure=is_secure(request), httponly=True
    )


def sign_in_url(request: Request) -> str:
    """Where a signed-out visitor goes, with the page they wanted to come back to."""
    wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if request.method not in SAFE_METHODS or wanted == "/":
        return "/signin"
    return f"/signin?next={quote(wanted, safe='')}"
