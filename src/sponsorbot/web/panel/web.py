"""The panel's request plumbing: who is asking, in which language, may they, and rendering.

Every panel route depends on `require(permission)` or `public()`. Both resolve the viewer
(session cookie → member, language), and for every unsafe method both check the CSRF token
(form field `csrf` or header `X-CSRF-Token`, as htmx sends it) before the route runs.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import asyncpg
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from sponsorbot.features.accounts import workspace as workspaces
from sponsorbot.features.accounts.api_tokens import ROLES
from sponsorbot.features.accounts.audit import Actor, record
from sponsorbot.features.accounts.security import same
from sponsorbot.features.accounts.users import LockoutPolicy, Session, User, load_session
from sponsorbot.features.content.service import MAX_UPLOAD_BYTES
from sponsorbot.web.panel import i18n
from sponsorbot.web.panel.i18n import N_

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
SESSION_COOKIE = "sb_session"
PRE_COOKIE = "sb_pre"  # double-submit CSRF token for forms shown before signing in
LANG_COOKIE = "sb_lang"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

ALL = frozenset(ROLES)
ROLE_NAMES = {
    "owner": N_("Owner"),
    "admin": N_("Admin"),
    "editor": N_("Editor"),
    "analyst": N_("Analyst"),
}
PERMISSIONS: dict[str, frozenset[str]] = {
    "view": ALL,  # dashboard, lists, statistics: read-only is enough
    "account": ALL,  # one's own language, two-step sign-in, sessions
    "content": frozenset({"owner", "admin", "editor"}),  # content and gate
    "bots": frozenset({"owner", "admin"}),  # add, pause, resume, mode, storage, texts
    "settings": frozenset({"owner", "admin"}),
    "audit": frozenset({"owner", "admin"}),
    "bots.remove": frozenset({"owner"}),
    "team": frozenset({"owner"}),
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
    lockout: LockoutPolicy = field(default_factory=LockoutPolicy)
    secure_cookies: bool = False
    upload_limit: int = MAX_UPLOAD_BYTES  # the largest file the content page accepts
    demo: DemoAccount | None = field(default_factory=demo_account)  # shown on the sign-in page


@dataclass
class Panel:
    """What every panel route needs, kept on `app.state.panel`."""

    pool: asyncpg.Pool
    config: PanelConfig
    env: Environment


def make_environment() -> Environment:
    """Jinja with autoescape and gettext bound to the request's language."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.install_gettext_callables(  # type: ignore[attr-defined]
        i18n.gettext, i18n.ngettext, newstyle=True
    )
    env.filters["num"] = i18n.localize_digits
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


def address_of(request: Request) -> str:
    """The peer address (the panel trusts no forwarding header it cannot verify)."""
    return request.client.host if request.client else "unknown"


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
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        session = await load_session(
            panel.pool, cookie, panel.config.clock(), panel.config.idle_timeout
        )
    workspace = await workspaces.load(panel.pool)
    language = (
        (session.user.language if session else None)
        or request.cookies.get(LANG_COOKIE)
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
        csrf = request.cookies.get(PRE_COOKIE) or ""
        if len(csrf) < 32:
            csrf = new_pre = secrets.token_urlsafe(32)
    viewer = Viewer(session, language, csrf, new_pre, workspace)
    request.state.viewer = viewer
    return viewer


async def _check_csrf(request: Request, viewer: Viewer) -> None:
    if request.method in SAFE_METHODS:
        return
    sent = request.headers.get("X-CSRF-Token")
    if not sent:
        content_type = request.headers.get("content-type", "")
        if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            value = (await request.form()).get("csrf")
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
    """A local path to go back to; anything else (other sites, //host) goes to `default`."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return default


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
    }
    values.update(context or {})
    html = panel.env.get_template(template).render(values)
    response = HTMLResponse(html, status_code=status)
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "same-origin"
    if viewer.new_pre_token is not None:
        set_cookie(request, response, PRE_COOKIE, viewer.new_pre_token, max_age=None)
    return response


def set_cookie(
    request: Request, response: Response, name: str, value: str, max_age: int | None
) -> None:
    """A panel cookie: HttpOnly, SameSite=Lax, Secure when the panel is served over https."""
    panel = panel_of(request)
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        httponly=True,
        samesite="lax",
        secure=panel.config.secure_cookies,
        path="/",
    )


def sign_in_url(request: Request) -> str:
    """Where a signed-out visitor goes, with the page they wanted to come back to."""
    wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if request.method not in SAFE_METHODS or wanted == "/":
        return "/signin"
    return f"/signin?next={quote(wanted, safe='')}"
