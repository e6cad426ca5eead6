"""Getting in: first-run setup, sign-in with optional two-step, sign-out, invitations, password
reset links, language."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.accounts import invitations
from sponsorbot.features.accounts import users as accounts
from sponsorbot.features.accounts.audit import Actor, record, record_coalesced
from sponsorbot.features.accounts.security import (
    MIN_PASSWORD,
    check_password_async,
    hash_password_async,
    normalize_code,
    totp_step,
)
from sponsorbot.features.accounts.users import User
from sponsorbot.features.errors import Conflict
from sponsorbot.web.panel.deps import Account, Public
from sponsorbot.web.panel.i18n import LANGUAGES
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.web import (
    LANG_COOKIE,
    PUBLIC_FORM,
    SESSION_COOKIE,
    Panel,
    Viewer,
    actor_of,
    address_of,
    audit,
    clear_cookie,
    cookie_name,
    panel_of,
    redirect,
    render,
    safe_next,
    set_cookie,
)

router = APIRouter(include_in_schema=False, tags=["panel"])


async def _form(request: Request) -> dict[str, str]:
    # Bounded like the CSRF check's parse: with the token in a header, this is the first.
    form = await request.form(**PUBLIC_FORM)
    return {
        k: v.strip() if k not in ("password", "password2") else v
        for k, v in form.items()
        if isinstance(v, str)
    }


def check_new_member(values: dict[str, str], need_email: bool = True) -> dict[str, str]:
    """Errors by field for a name, e-mail and password typed twice."""
    errors: dict[str, str] = {}
    if not values.get("name"):
        errors["name"] = _("Enter your name.")
    if need_email and not accounts.EMAIL.match(values.get("email", "")):
        errors["email"] = _("Enter an e-mail address like name@example.com.")
    if len(values.get("password", "")) < MIN_PASSWORD:
        errors["password"] = _("Use at least %(n)s characters.", n=MIN_PASSWORD)
    elif values.get("password") != values.get("password2"):
        errors["password2"] = _("The two passwords differ.")
    return errors


def check_new_password(values: dict[str, str]) -> dict[str, str]:
    """Errors by field for a new password typed twice."""
    if len(values.get("password", "")) < MIN_PASSWORD:
        return {"password": _("Use at least %(n)s characters.", n=MIN_PASSWORD)}
    if values.get("password") != values.get("password2"):
        return {"password2": _("The two passwords differ.")}
    return {}


async def _slow_down(panel: Panel, failures: int) -> None:
    """Wait longer the more recent failures: guessing gets expensive, whatever the outcome."""
    delay = panel.config.lockout.delay(failures)
    if delay > 0:
        await asyncio.sleep(delay)


def _too_many() -> str:
    return _("Too many failed attempts. Try again in a few minutes.")


async def _signed_in(request: Request, user_id: int, state: str, viewer: Viewer) -> Response:
    """Start a session (the old one, if any, ends: a new id at every privilege change)."""
    panel = panel_of(request)
    old = request.cookies.get(cookie_name(request, SESSION_COOKIE))
    if old:
        await accounts.end_session(panel.pool, old)
    now = panel.config.clock()
    ttl = accounts.TWO_STEP_TTL if state == "two_step" else panel.config.idle_timeout
    session_id = await accounts.start_session(
        panel.pool,
        user_id,
        state,
        now + ttl,
        now,
        address_of(request),
        request.headers.get("user-agent"),
    )
    target = "/signin/two-step" if state == "two_step" else "/"
    if state == "active":
        target = safe_next(request.query_params.get("next"))
    response = redirect(request, target)
    set_cookie(request, response, SESSION_COOKIE, session_id, max_age=None)
    return response


# -- setup -------------------------------------------------------------------------------------


@router.get("/setup")
async def setup_page(request: Request, viewer: Public) -> Response:
    """The first-run form; closed for good once an owner exists."""
    if await accounts.owner_exists(panel_of(request).pool):
        return render(request, viewer, "closed.html", status=404)
    return render(request, viewer, "setup.html", {"values": {}, "errors": {}})


@router.post("/setup")
async def setup_submit(request: Request, viewer: Public) -> Response:
    """Check the console's code and create the owner."""
    panel = panel_of(request)
    if await accounts.owner_exists(panel.pool):
        return render(request, viewer, "closed.html", status=404)
    values = await _form(request)
    errors = check_new_member(values)
    if not values.get("code"):
        errors["code"] = _("Enter the setup code printed in the console.")
    code = normalize_code(values.get("code", ""))
    now = panel.config.clock()
    # The code first: a wrong one costs no password hashing.
    if not errors and await accounts.setup_code_valid(panel.pool, code, now):
        hashed = await hash_password_async(values["password"])
        async with panel.pool.acquire() as conn, conn.transaction():
            owner = await accounts.create_owner(
                conn, code, values["email"], values["name"], hashed, now
            )
            if owner is not None:
                await record(
                    conn,
                    now,
                    Actor(owner.id, f"{owner.name} <{owner.email}>", address_of(request)),
                    "team.owner_created",
                    owner.email,
                    after={"name": owner.name, "email": owner.email, "role": "owner"},
                )
        if owner is not None:
            return await _signed_in(request, owner.id, "active", viewer)
    if not errors:
        errors["code"] = _(
            "This code is wrong or has expired. Run `sponsorbot setup-code` for a new one."
        )
    values.pop("password", None)
    values.pop("password2", None)
    return render(request, viewer, "setup.html", {"values": values, "errors": errors}, 422)


# -- sign-in -----------------------------------------------------------------------------------


def _signin_form(
    request: Request, viewer: Viewer, context: dict[str, object], status: int = 200
) -> Response:
    """The sign-in page; the demo's shows its account (PanelConfig.demo)."""
    return render(
        request, viewer, "signin.html", {**context, "demo": panel_of(request).config.demo}, status
    )


@router.get("/signin")
async def signin_page(request: Request, viewer: Public) -> Response:
    """The sign-in form (first run: a pointer to /setup)."""
    if viewer.session is not None and viewer.session.state == "active":
        return redirect(request, "/")
    needs_setup = not await accounts.owner_exists(panel_of(request).pool)
    return _signin_form(request, viewer, {"values": {}, "error": None, "needs_setup": needs_setup})


class _OneAtATime:
    """Attempts on one account are checked one after another in this process: each must see
    the failures of those before it, or a burst of parallel guesses would all be checked
    against the same count (a review of the hardening found that)."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Wait for the key's earlier attempts, then hold it."""
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


ATTEMPTS = _OneAtATime()


@router.post("/signin")
async def signin_submit(request: Request, viewer: Public) -> Response:
    """Check the password, slowing down per account, pair and address and refusing a pair or
    an address after too many failures (nothing depends on whether the e-mail has an account)."""
    values = await _form(request)
    async with ATTEMPTS.hold("password:" + values.get("email", "").strip().lower()):
        return await _password_step(request, viewer, values)


async def _password_step(request: Request, viewer: Viewer, values: dict[str, str]) -> Response:
    panel = panel_of(request)
    policy = panel.config.lockout
    email, password = values.get("email", ""), values.get("password", "")
    address = address_of(request)
    now = panel.config.clock()
    seen = await accounts.failures(panel.pool, email, address, now, policy)
    await _slow_down(panel, max(seen.pair, seen.account, seen.address))
    who = Actor(None, email[:200] or "?", address)
    refused = {"values": {"email": email}, "error": _too_many(), "needs_setup": False}
    if seen.pair >= policy.pair_limit or seen.address >= policy.address_limit:
        await record_coalesced(panel.pool, now, who, "signin.refused_locked", email[:200])
        return _signin_form(request, viewer, refused, 429)
    found = await accounts.user_by_email(panel.pool, email)
    ok = await check_password_async(found[1] if found else None, password)
    if not ok or found is None:
        await accounts.add_failure(panel.pool, email, address, now, policy)
        await record_coalesced(panel.pool, now, who, "signin.failed", email[:200])
        if seen.pair + 1 == policy.pair_limit:
            await record(panel.pool, now, who, "signin.locked", email[:200])
        context = {
            "values": {"email": email},
            "error": _("Wrong e-mail or password."),
            "needs_setup": False,
        }
        return _signin_form(request, viewer, context, 401)
    user, _hash, totp = found
    if totp:
        # Failures are forgotten only once the second step is passed too.
        if seen.two_step >= policy.two_step_limit:
            await record_coalesced(panel.pool, now, who, "signin.refused_locked", email[:200])
            return _signin_form(request, viewer, refused, 429)
        return await _signed_in(request, user.id, "two_step", viewer)
    await accounts.clear_failures(panel.pool, email, address)
    await record(panel.pool, now, Actor(user.id, f"{user.name} <{user.email}>", address), "signin")
    return await _signed_in(request, user.id, "active", viewer)


@router.get("/signin/two-step")
async def two_step_page(request: Request, viewer: Public) -> Response:
    """The second step: a code from the authenticator app or a recovery code."""
    if viewer.session is None or viewer.session.state != "two_step":
        return redirect(request, "/signin")
    return render(request, viewer, "two_step.html", {"error": None})


async def totp_passes(panel: Panel, user_id: int, code: str) -> bool:
    """True when `code` is the member's current authenticator code, not used before (it is
    used now). A secret still kept in clear is sealed on the way."""
    stored, last_step = await accounts.totp_secret(panel.pool, user_id)
    keys = panel.config.keys
    secret = keys.open(stored) if stored else None
    if stored is None or secret is None:
        return False
    step = totp_step(secret, code, panel.config.clock(), last_step)
    if step is None or not await accounts.use_totp_step(panel.pool, user_id, step):
        return False
    if not keys.is_sealed(stored):
        await accounts.reseal_totp_secret(panel.pool, user_id, stored, keys.seal(secret))
    return True


async def second_factor(panel: Panel, user: User, code: str) -> str | None:
    """Check a code from the authenticator (not one used before) or a recovery code (spent);
    the audit kind of a sign-in with it, or None when it is not right."""
    if await totp_passes(panel, user.id, code):
        return "signin"
    if code and await accounts.use_recovery_code(
        panel.pool, user.id, panel.config.keys.recovery_candidates(code)
    ):
        return "signin.recovery_code"
    return None


@router.post("/signin/two-step")
async def two_step_submit(request: Request, viewer: Public) -> Response:
    """Check the code; the challenge expired with the session's deadline (five minutes).

    Wrong codes have their own count per account, which a correct password does not reset:
    past the limit the password is asked again, and codes wait until the window has passed.
    """
    if viewer.session is None or viewer.session.state != "two_step":
        return redirect(request, "/signin")
    code = (await _form(request)).get("code", "")
    async with ATTEMPTS.hold(f"code:{viewer.session.user.id}"):
        return await _code_step(request, viewer, viewer.session.user, code)


async def _code_step(request: Request, viewer: Viewer, user: User, code: str) -> Response:
    panel = panel_of(request)
    policy = panel.config.lockout
    now = panel.config.clock()
    address = address_of(request)
    who = Actor(user.id, f"{user.name} <{user.email}>", address)
    seen = await accounts.failures(panel.pool, user.email, address, now, policy)
    await _slow_down(panel, seen.two_step)
    if seen.two_step >= policy.two_step_limit:
        return await _back_to_password(request, who, user.email)
    kind = await second_factor(panel, user, code)
    if kind is None:
        await accounts.add_failure(panel.pool, user.email, address, now, policy, "two_step")
        await record_coalesced(panel.pool, now, who, "signin.two_step_failed", user.email)
        error = _("That code is not right. Try the newest code from your app.")
        return render(request, viewer, "two_step.html", {"error": error}, 401)
    await accounts.clear_failures(panel.pool, user.email, address)
    await record(panel.pool, now, who, kind)
    return await _signed_in(request, user.id, "active", viewer)


def _to_signin_signed_out(request: Request) -> Response:
    """To the sign-in page, with this browser's session cookie gone."""
    response = redirect(request, "/signin")
    clear_cookie(request, response, SESSION_COOKIE)
    return response


async def _back_to_password(request: Request, who: Actor, email: str) -> Response:
    """Too many wrong codes: end the half-signed-in session, start again from the password."""
    panel = panel_of(request)
    await accounts.end_session(
        panel.pool, request.cookies.get(cookie_name(request, SESSION_COOKIE), "")
    )
    await record_coalesced(panel.pool, panel.config.clock(), who, "signin.refused_locked", email)
    return _to_signin_signed_out(request)


@router.post("/signout")
async def signout(request: Request, viewer: Public) -> Response:
    """Sign this browser out."""
    panel = panel_of(request)
    cookie = request.cookies.get(cookie_name(request, SESSION_COOKIE))
    if cookie:
        await accounts.end_session(panel.pool, cookie)
    if viewer.session is not None:
        await record(panel.pool, panel.config.clock(), actor_of(request, viewer), "signout")
    return _to_signin_signed_out(request)


@router.post("/signout/everywhere")
async def signout_everywhere(request: Request, viewer: Account) -> Response:
    """End every session of this member, this one included."""
    panel = panel_of(request)
    ended = await accounts.end_all_sessions(panel.pool, viewer.user.id)
    await audit(request, viewer, "signout.everywhere", after={"sessions_ended": ended})
    return _to_signin_signed_out(request)


# -- language ----------------------------------------------------------------------------------


@router.post("/language")
async def switch_language(request: Request, viewer: Public) -> Response:
    """Switch the language: remembered for the member, and in a cookie for the browser."""
    panel = panel_of(request)
    values = await _form(request)
    language = values.get("language", "")
    target = safe_next(values.get("next"))
    if language not in LANGUAGES:
        return redirect(request, target)
    if viewer.session is not None and viewer.session.state == "active":
        await accounts.set_language(panel.pool, viewer.user.id, language)
    response = redirect(request, target)
    set_cookie(request, response, LANG_COOKIE, language, max_age=365 * 86400)
    return response


# -- invitations -------------------------------------------------------------------------------


@router.get("/invite/{token}")
async def invitation_page(request: Request, token: str, viewer: Public) -> Response:
    """Accept an invitation: choose a name and password."""
    invitation = await invitations.open_invitation(
        panel_of(request).pool, token, panel_of(request).config.clock()
    )
    if invitation is None:
        return render(request, viewer, "invitation_gone.html", status=404)
    return _invitation_form(request, viewer, token, invitation, {}, {})


@router.post("/invite/{token}")
async def invitation_accept(request: Request, token: str, viewer: Public) -> Response:
    """Create the member the invitation names, and sign them in."""
    panel = panel_of(request)
    now = panel.config.clock()
    invitation = await invitations.open_invitation(panel.pool, token, now)
    if invitation is None:
        return render(request, viewer, "invitation_gone.html", status=404)
    values = await _form(request)
    errors = check_new_member(values, need_email=False)
    if errors:
        return _invitation_form(request, viewer, token, invitation, values, errors, 422)
    try:
        user_id = await invitations.accept(
            panel.pool,
            invitation,
            values["name"],
            await hash_password_async(values["password"]),
            now,
            address_of(request),
        )
    except Conflict:
        errors = {
            "name": _("%(email)s is already a member: sign in instead.", email=invitation["email"])
        }
        return _invitation_form(request, viewer, token, invitation, values, errors, 409)
    if user_id is None:  # taken meanwhile, by another tab or another person
        return render(request, viewer, "invitation_gone.html", status=404)
    return await _signed_in(request, user_id, "active", viewer)


def _invitation_form(
    request: Request,
    viewer: Viewer,
    token: str,
    invitation: dict[str, Any],
    values: dict[str, str],
    errors: dict[str, str],
    status: int = 200,
) -> Response:
    """The invitation's form: a name and a password to choose, with what was typed and why
    it was refused."""
    context = {"invitation": invitation, "values": values, "errors": errors, "token": token}
    return render(request, viewer, "invitation.html", context, status)


# -- password reset links ----------------------------------------------------------------------


@router.get("/reset/{token}")
async def reset_page(request: Request, token: str, viewer: Public) -> Response:
    """A reset link from the owner: choose a new password."""
    panel = panel_of(request)
    reset = await invitations.open_reset(panel.pool, token, panel.config.clock())
    if reset is None:
        return render(request, viewer, "reset_gone.html", status=404)
    return _reset_form(request, viewer, token, reset, {})


@router.post("/reset/{token}")
async def reset_submit(request: Request, token: str, viewer: Public) -> Response:
    """Set the new password once; every session of the member ends, and they sign in again."""
    panel = panel_of(request)
    now = panel.config.clock()
    reset = await invitations.open_reset(panel.pool, token, now)
    if reset is None:
        return render(request, viewer, "reset_gone.html", status=404)
    values = await _form(request)
    errors = check_new_password(values)
    if errors:
        return _reset_form(request, viewer, token, reset, errors, 422)
    hashed = await hash_password_async(values["password"])
    if not await invitations.use_reset(panel.pool, reset, hashed, now, address_of(request)):
        return render(request, viewer, "reset_gone.html", status=404)
    return _to_signin_signed_out(request)


def _reset_form(
    request: Request,
    viewer: Viewer,
    token: str,
    reset: dict[str, Any],
    errors: dict[str, str],
    status: int = 200,
) -> Response:
    """The reset link's form: a new password to choose, and why the last one was refused."""
    return render(
        request, viewer, "reset.html", {"reset": reset, "errors": errors, "token": token}, status
    )
