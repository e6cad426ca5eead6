"""Getting in: first-run setup, sign-in with optional two-step, sign-out, invitations, language."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.accounts import invitations
from sponsorbot.features.accounts import users as accounts
from sponsorbot.features.accounts.audit import Actor, record
from sponsorbot.features.accounts.security import (
    MIN_PASSWORD,
    check_password,
    check_totp,
    digest,
    hash_password,
    normalize_code,
)
from sponsorbot.features.errors import Conflict
from sponsorbot.web.panel.deps import Account, Public
from sponsorbot.web.panel.i18n import LANGUAGES
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.web import (
    LANG_COOKIE,
    SESSION_COOKIE,
    Viewer,
    actor_of,
    address_of,
    audit,
    panel_of,
    redirect,
    render,
    safe_next,
    set_cookie,
)

router = APIRouter(include_in_schema=False, tags=["panel"])


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
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


async def _signed_in(request: Request, user_id: int, state: str, viewer: Viewer) -> Response:
    """Start a session (the old one, if any, ends: a new id at every privilege change)."""
    panel = panel_of(request)
    old = request.cookies.get(SESSION_COOKIE)
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
    if not errors:
        async with panel.pool.acquire() as conn, conn.transaction():
            now = panel.config.clock()
            owner = await accounts.create_owner(
                conn,
                normalize_code(values["code"]),
                values["email"],
                values["name"],
                hash_password(values["password"]),
                now,
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


@router.post("/signin")
async def signin_submit(request: Request, viewer: Public) -> Response:
    """Check the password, with slow-down and lockout per account and per address."""
    panel = panel_of(request)
    policy = panel.config.lockout
    values = await _form(request)
    email, password = values.get("email", ""), values.get("password", "")
    address = address_of(request)
    now = panel.config.clock()
    account_failures, address_failures = await accounts.failures(
        panel.pool, email, address, now, policy
    )
    # Slow down every answer after a failure, whatever its outcome: guessing gets expensive.
    recent = max(account_failures, address_failures)
    if recent:
        await asyncio.sleep(min(policy.delay_step_s * recent, policy.max_delay_s))
    who = Actor(None, email[:200] or "?", address)
    locked = await accounts.locked_until(panel.pool, email, now)
    if locked is not None or address_failures >= policy.address_limit:
        await record(panel.pool, now, who, "signin.refused_locked", email[:200])
        error = _(
            "Too many failed attempts. Try again in %(n)s minutes.",
            n=int(policy.lock_for.total_seconds() // 60),
        )
        context = {"values": {"email": email}, "error": error, "needs_setup": False}
        return _signin_form(request, viewer, context, 429)
    found = await accounts.user_by_email(panel.pool, email)
    ok = check_password(found[1] if found else None, password)
    if not ok or found is None:
        locked_now = await accounts.add_failure(panel.pool, email, address, now, policy)
        await record(panel.pool, now, who, "signin.failed", email[:200])
        if locked_now:
            await record(panel.pool, now, who, "signin.locked", email[:200])
        context = {
            "values": {"email": email},
            "error": _("Wrong e-mail or password."),
            "needs_setup": False,
        }
        return _signin_form(request, viewer, context, 401)
    user, _hash, totp = found
    await accounts.clear_failures(panel.pool, email)
    if totp:
        return await _signed_in(request, user.id, "two_step", viewer)
    await record(panel.pool, now, Actor(user.id, f"{user.name} <{user.email}>", address), "signin")
    return await _signed_in(request, user.id, "active", viewer)


@router.get("/signin/two-step")
async def two_step_page(request: Request, viewer: Public) -> Response:
    """The second step: a code from the authenticator app or a recovery code."""
    if viewer.session is None or viewer.session.state != "two_step":
        return redirect(request, "/signin")
    return render(request, viewer, "two_step.html", {"error": None})


@router.post("/signin/two-step")
async def two_step_submit(request: Request, viewer: Public) -> Response:
    """Check the code; the challenge expired with the session's deadline (five minutes)."""
    panel = panel_of(request)
    if viewer.session is None or viewer.session.state != "two_step":
        return redirect(request, "/signin")
    user = viewer.session.user
    now = panel.config.clock()
    code = (await _form(request)).get("code", "")
    who = Actor(user.id, f"{user.name} <{user.email}>", address_of(request))
    # Wrong codes count as failed sign-ins: guessing codes locks the account like passwords.
    if await accounts.locked_until(panel.pool, user.email, now) is not None:
        await accounts.end_session(panel.pool, request.cookies.get(SESSION_COOKIE, ""))
        await record(panel.pool, now, who, "signin.refused_locked", user.email)
        return redirect(request, "/signin")
    secret = await accounts.totp_secret(panel.pool, user.id)
    passed = secret is not None and check_totp(secret, code, now)
    kind = "signin"
    if not passed and code:
        passed = await accounts.use_recovery_code(panel.pool, user.id, digest(normalize_code(code)))
        kind = "signin.recovery_code"
    if not passed:
        await record(panel.pool, now, who, "signin.two_step_failed", user.email)
        await accounts.add_failure(
            panel.pool, user.email, address_of(request), now, panel.config.lockout
        )
        error = _("That code is not right. Try the newest code from your app.")
        return render(request, viewer, "two_step.html", {"error": error}, 401)
    await record(panel.pool, now, who, kind)
    return await _signed_in(request, user.id, "active", viewer)


@router.post("/signout")
async def signout(request: Request, viewer: Public) -> Response:
    """Sign this browser out."""
    panel = panel_of(request)
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        await accounts.end_session(panel.pool, cookie)
    if viewer.session is not None:
        await record(panel.pool, panel.config.clock(), actor_of(request, viewer), "signout")
    response = redirect(request, "/signin")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.post("/signout/everywhere")
async def signout_everywhere(request: Request, viewer: Account) -> Response:
    """End every session of this member, this one included."""
    panel = panel_of(request)
    ended = await accounts.end_all_sessions(panel.pool, viewer.user.id)
    await audit(
        request,
        viewer,
        "signout.everywhere",
        after={"sessions_ended": ended},
    )
    response = redirect(request, "/signin")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


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
    context = {"invitation": invitation, "values": {}, "errors": {}, "token": token}
    return render(request, viewer, "invitation.html", context)


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
        context = {"invitation": invitation, "values": values, "errors": errors, "token": token}
        return render(request, viewer, "invitation.html", context, 422)
    try:
        user_id = await invitations.accept(
            panel.pool,
            invitation,
            values["name"],
            hash_password(values["password"]),
            now,
            address_of(request),
        )
    except Conflict:
        errors = {
            "name": _("%(email)s is already a member: sign in instead.", email=invitation["email"])
        }
        context = {"invitation": invitation, "values": values, "errors": errors, "token": token}
        return render(request, viewer, "invitation.html", context, 409)
    if user_id is None:  # taken meanwhile, by another tab or another person
        return render(request, viewer, "invitation_gone.html", status=404)
    return await _signed_in(request, user_id, "active", viewer)
