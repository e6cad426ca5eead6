"""The team (members, roles, invitations), the audit log, and one's own account."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Request
from fastapi.responses import Response

from sponsorbot.features.accounts import invitations
from sponsorbot.features.accounts import users as accounts
from sponsorbot.features.accounts.audit import AuditFilter, entries, kinds, record
from sponsorbot.features.accounts.security import (
    check_totp,
    hash_password_async,
    new_totp_secret,
    qr_svg,
    recovery_codes,
    totp_uri,
)
from sponsorbot.web.deps import services_of
from sponsorbot.web.panel import audit_view, i18n
from sponsorbot.web.panel.deps import Account, Audit, Team
from sponsorbot.web.panel.fields import day_of
from sponsorbot.web.panel.i18n import N_
from sponsorbot.web.panel.i18n import gettext as _
from sponsorbot.web.panel.identity import proves_identity
from sponsorbot.web.panel.routes_auth import check_new_password
from sponsorbot.web.panel.routes_broadcasts import BROADCAST_KIND_LABELS
from sponsorbot.web.panel.routes_shop import SHOP_KIND_LABELS
from sponsorbot.web.panel.web import (
    ROLE_NAMES,
    Viewer,
    actor_of,
    audit,
    base_url_of,
    panel_of,
    redirect,
    render,
)

router = APIRouter(include_in_schema=False, tags=["panel"])
TELEGRAM_ID = re.compile(r"\d{1,16}")

ROLE_HELP = {
    "admin": N_("Everything but the team"),
    "editor": N_("Content and gate"),
    "analyst": N_("Read-only, statistics"),
}

# What the audit page calls each kind of entry; a kind without a label shows as written.
KIND_LABELS = {
    "signin": N_("Signed in"),
    "signin.recovery_code": N_("Signed in with a recovery code"),
    "signin.failed": N_("Sign-in failed"),
    "signin.two_step_failed": N_("Two-step code failed"),
    "signin.locked": N_("Sign-in paused for this address after failed attempts"),
    "signin.refused_locked": N_("Sign-in refused: locked"),
    "signout": N_("Signed out"),
    "signout.everywhere": N_("Signed out everywhere"),
    "account.two_step_on": N_("Two-step sign-in turned on"),
    "account.two_step_off": N_("Two-step sign-in turned off"),
    "account.telegram_id_changed": N_("Telegram id changed"),
    "team.telegram_linked": N_("Telegram linked for alerts"),
    "team.telegram_unlinked": N_("Telegram unlinked"),
    "settings.control_bot": N_("Control bot changed"),
    "account.password_changed": N_("Password changed"),
    "account.password_reset": N_("Password set with a reset link"),
    "account.recovery_codes_renewed": N_("New recovery codes made"),
    "team.reset_link_created": N_("Password reset link created"),
    "team.owner_created": N_("Owner created at setup"),
    "team.invited": N_("Invitation created"),
    "team.invitation_revoked": N_("Invitation withdrawn"),
    "team.joined": N_("Joined the team"),
    "team.role_changed": N_("Role changed"),
    "team.removed": N_("Member removed"),
    "bot.added": N_("Bot added"),
    "bot.paused": N_("Bot paused"),
    "bot.resumed": N_("Bot resumed"),
    "bot.removed": N_("Bot removed"),
    "bot.redriven": N_("Failed messages tried again"),
    "bot.mode_changed": N_("Bot mode changed"),
    "bot.storage_changed": N_("Storage chat changed"),
    "bot.texts_changed": N_("Visitor texts changed"),
    "settings.changed": N_("Settings changed"),
    "channel.added": N_("Channel added"),
    "gate.changed": N_("Gate changed"),
    "content.created": N_("Content created"),
    "content.enabled": N_("Content link turned on"),
    "content.disabled": N_("Content link turned off"),
    "content.changed": N_("Content options changed"),
    "token.created": N_("API token created"),
    "token.revoked": N_("API token revoked"),
    "campaign.created": N_("Campaign created"),
    "campaign.changed": N_("Campaign changed"),
    "campaign.paused": N_("Campaign paused"),
    "campaign.resumed": N_("Campaign resumed"),
    "campaign.ended": N_("Campaign ended"),
    "campaign.report_rotated": N_("Report link replaced"),
    "campaign.report_revoked": N_("Report link withdrawn"),
    **BROADCAST_KIND_LABELS,
    **SHOP_KIND_LABELS,
}


# -- team --------------------------------------------------------------------------------------


async def _team_page(
    request: Request,
    viewer: Viewer,
    values: dict[str, str],
    errors: dict[str, str],
    link: str | None,
    status: int = 200,
    reset_link: str | None = None,
) -> Response:
    panel = panel_of(request)
    context = {
        "reset_link": reset_link,
        "members": await accounts.users(panel.pool),
        "invitations": await invitations.pending_invitations(panel.pool, panel.config.clock()),
        "role_names": ROLE_NAMES,
        "role_help": ROLE_HELP,
        "values": values,
        "errors": errors,
        "link": link,
    }
    return render(request, viewer, "team.html", context, status)


@router.get("/team")
async def team_page(request: Request, viewer: Team) -> Response:
    """Members with their roles, pending invitations, and the invitation form."""
    return await _team_page(request, viewer, {}, {}, None)


@router.post("/team/invitations")
async def team_invite(request: Request, viewer: Team) -> Response:
    """Invite someone: the link is shown once and expires in 72 hours."""
    panel = panel_of(request)
    form = await request.form()
    values = {"email": str(form.get("email", "")).strip(), "role": str(form.get("role", ""))}
    errors: dict[str, str] = {}
    if not accounts.EMAIL.match(values["email"]):
        errors["email"] = _("Enter an e-mail address like name@example.com.")
    if values["role"] not in ROLE_HELP:
        errors["role"] = _("Choose a role.")
    if errors:
        return await _team_page(request, viewer, values, errors, None, 422)
    now = panel.config.clock()
    _id, token = await invitations.invite(
        panel.pool, values["email"], values["role"], viewer.user.id, now
    )
    await record(
        panel.pool,
        now,
        actor_of(request, viewer),
        "team.invited",
        values["email"],
        after={"role": values["role"]},
    )
    link = f"{base_url_of(request)}invite/{token}"
    return await _team_page(request, viewer, {}, {}, link)


@router.post("/team/{user_id}/reset")
async def team_reset(request: Request, user_id: int, viewer: Team) -> Response:
    """Make a one-time link for a member to set a new password (shown once, 24 hours)."""
    panel = panel_of(request)
    member = await accounts.get_user(panel.pool, user_id)
    if member is None or member.id == viewer.user.id:
        return redirect(request, "/team")
    now = panel.config.clock()
    token = await invitations.new_reset(panel.pool, member.id, viewer.user.id, now)
    await record(
        panel.pool, now, actor_of(request, viewer), "team.reset_link_created", member.email
    )
    link = f"{base_url_of(request)}reset/{token}"
    return await _team_page(request, viewer, {}, {}, None, reset_link=link)


@router.post("/team/invitations/{invitation_id}/revoke")
async def team_revoke(request: Request, invitation_id: int, viewer: Team) -> Response:
    """Withdraw an invitation before it is used."""
    panel = panel_of(request)
    now = panel.config.clock()
    email = await invitations.revoke(panel.pool, invitation_id, now)
    if email is not None:
        await record(panel.pool, now, actor_of(request, viewer), "team.invitation_revoked", email)
    return redirect(request, "/team")


@router.post("/team/{user_id}/role")
async def team_role(request: Request, user_id: int, viewer: Team) -> Response:
    """Change a member's role (the owner's own role stays)."""
    panel = panel_of(request)
    role = str((await request.form()).get("role", ""))
    member = await accounts.get_user(panel.pool, user_id)
    if member is None or member.role == "owner" or role not in ROLE_HELP:
        return redirect(request, "/team")
    if role != member.role:
        await accounts.set_role(panel.pool, user_id, role)
        await audit(
            request,
            viewer,
            "team.role_changed",
            member.email,
            before={"role": member.role},
            after={"role": role},
        )
    return redirect(request, "/team")


@router.post("/team/{user_id}/remove")
async def team_remove(request: Request, user_id: int, viewer: Team) -> Response:
    """Remove a member: their sessions end at once, and the API tokens they made are revoked."""
    panel = panel_of(request)
    member = await accounts.get_user(panel.pool, user_id)
    if member is None or member.role == "owner":
        return redirect(request, "/team")
    now = panel.config.clock()
    await accounts.disable(panel.pool, user_id, now)
    revoked = await services_of(request).tokens.revoke_created_by(user_id)
    await record(
        panel.pool,
        now,
        actor_of(request, viewer),
        "team.removed",
        member.email,
        before={"name": member.name, "role": member.role},
        after={"tokens_revoked": revoked} if revoked else None,
    )
    return redirect(request, "/team")


# -- audit log ---------------------------------------------------------------------------------


def _day(text: str | None, zone: str) -> datetime | None:
    day = day_of(text)  # ISO, or Jalali from a Persian page
    return datetime.combine(day, time(0), ZoneInfo(zone)) if day else None


@router.get("/audit")
async def audit_page(request: Request, viewer: Audit) -> Response:
    """The audit log, newest first, filtered by person, kind and dates."""
    panel = panel_of(request)
    zone = str(viewer.workspace.get("time_zone") or "UTC")
    q = request.query_params
    person = q.get("person", "")
    until = _day(q.get("until"), zone)
    f = AuditFilter(
        user_id=int(person) if person.isdigit() else None,
        kind=q.get("kind") or None,
        since=_day(q.get("since"), zone),
        until=until + timedelta(days=1) if until else None,
        before_id=int(q["before"]) if q.get("before", "").isdigit() else None,
    )
    rows = await entries(panel.pool, f)
    more = (
        f"{request.url.path}?{_without_before(request)}&before={rows[-1]['id']}"
        if len(rows) == 50
        else None
    )

    def when(moment: datetime) -> str:
        return i18n.format_datetime(moment, zone)

    context = {
        "rows": rows,
        "lines": {r["id"]: audit_view.lines(r, when) for r in rows},
        "targets": await audit_view.targets(panel.pool, rows),
        "api_call": audit_view.api_call,
        "members": await accounts.users(panel.pool),
        "kinds": await kinds(panel.pool),
        "kind_labels": KIND_LABELS,
        "filters": {k: q.get(k, "") for k in ("person", "kind", "since", "until")},
        "more": more,
    }
    return render(request, viewer, "audit.html", context)


def _without_before(request: Request) -> str:
    return "&".join(f"{k}={v}" for k, v in request.query_params.multi_items() if k != "before")


# -- account -----------------------------------------------------------------------------------


async def _account_page(
    request: Request,
    viewer: Viewer,
    codes: list[str] | None = None,
    errors: dict[str, str] | None = None,
    typed: str | None = None,
    status: int = 200,
    notice: str | None = None,
) -> Response:
    stored = await accounts.telegram_id(panel_of(request).pool, viewer.user.id)
    context = {
        "codes": codes,
        "errors": errors or {},
        "telegram_id": typed if typed is not None else (stored or ""),
        "telegram_id_set": stored is not None,
        "notice": notice,
    }
    return render(request, viewer, "account.html", context, status)


@router.get("/account")
async def account_page(request: Request, viewer: Account) -> Response:
    """One's own account: password, Telegram id, two-step sign-in and sign-out everywhere."""
    return await _account_page(request, viewer)


@router.post("/account/password")
async def account_password(request: Request, viewer: Account) -> Response:
    """Change one's own password: the current one first; every other session ends."""
    panel = panel_of(request)
    form = await request.form()
    values = {k: v for k, v in form.items() if isinstance(v, str)}
    errors = check_new_password(values)
    if not await proves_identity(request, viewer, values.get("current", ""), False):
        errors = {"current": _("That is not your current password.")}
    if errors:
        return await _account_page(request, viewer, errors=errors, status=422)
    assert viewer.session is not None
    await accounts.set_password(
        panel.pool, viewer.user.id, await hash_password_async(values["password"])
    )
    ended = await accounts.end_other_sessions(panel.pool, viewer.user.id, viewer.session.id_hash)
    await audit(request, viewer, "account.password_changed", after={"sessions_ended": ended})
    notice = _("Your password is changed. Every other session has ended.")
    return await _account_page(request, viewer, notice=notice)


@router.post("/account/telegram")
async def account_telegram(request: Request, viewer: Account) -> Response:
    """Set (or, left empty, clear) the member's own Telegram id, where previews are sent."""
    panel = panel_of(request)
    typed = str((await request.form()).get("telegram_id", "")).strip()
    # Any decimal digits (Persian ones too); Telegram's user ids have at most 52 bits.
    if typed and not (TELEGRAM_ID.fullmatch(typed) and 0 < int(typed) < 2**52):
        error = _("Your Telegram id is a positive whole number, like 123456789; or leave it empty.")
        return await _account_page(request, viewer, None, {"telegram_id": error}, typed, 422)
    new = int(typed) if typed else None
    old = await accounts.telegram_id(panel.pool, viewer.user.id)
    if new != old:
        await accounts.set_telegram_id(panel.pool, viewer.user.id, new)
        await audit(
            request,
            viewer,
            "account.telegram_id_changed",
            viewer.user.email,
            before={"telegram_id": old},
            after={"telegram_id": new},
        )
    return redirect(request, "/account")


@router.get("/account/two-step")
async def two_step_setup(request: Request, viewer: Account) -> Response:
    """Show a new secret as a QR code, to be confirmed with a first code."""
    secret = new_totp_secret()
    return _two_step_form(request, viewer, secret, None)


def _two_step_form(request: Request, viewer: Viewer, secret: str, error: str | None) -> Response:
    name = str(viewer.workspace.get("name") or "Sponsorbot")
    uri = totp_uri(secret, viewer.user.email, name)
    context = {"secret": secret, "qr": qr_svg(uri), "error": error}
    return render(request, viewer, "two_step_setup.html", context, 422 if error else 200)


@router.post("/account/two-step")
async def two_step_enable(request: Request, viewer: Account) -> Response:
    """Turn two-step sign-in on once a code from the app matches; show recovery codes once."""
    panel = panel_of(request)
    form = await request.form()
    secret = str(form.get("secret", ""))
    code = str(form.get("code", ""))
    now = panel.config.clock()
    if len(secret) < 16 or not check_totp(secret, code, now):
        error = _("That code is not right. Check the time on your phone and try the newest code.")
        return _two_step_form(request, viewer, secret or new_totp_secret(), error)
    keys = panel.config.keys
    codes = recovery_codes()
    digests = [keys.recovery_digest(c) for c in codes]
    await accounts.enable_two_step(panel.pool, viewer.user.id, keys.seal(secret), digests)
    await record(panel.pool, now, actor_of(request, viewer), "account.two_step_on")
    return await _account_page(request, viewer, codes)


@router.post("/account/two-step/off")
async def two_step_disable(request: Request, viewer: Account) -> Response:
    """Turn two-step sign-in off: the password or a current code first."""
    panel = panel_of(request)
    typed = str((await request.form()).get("confirm_off", ""))
    if not await proves_identity(request, viewer, typed):
        errors = {"confirm_off": _("Enter your password or a current code from your app.")}
        return await _account_page(request, viewer, errors=errors, status=422)
    await accounts.disable_two_step(panel.pool, viewer.user.id)
    await record(
        panel.pool, panel.config.clock(), actor_of(request, viewer), "account.two_step_off"
    )
    return redirect(request, "/account")


@router.post("/account/two-step/recovery-codes")
async def recovery_codes_renew(request: Request, viewer: Account) -> Response:
    """New recovery codes, shown once (the old ones stop working): the password or a
    current code first."""
    panel = panel_of(request)
    typed = str((await request.form()).get("confirm_codes", ""))
    if not viewer.user.two_step:
        return redirect(request, "/account")
    if not await proves_identity(request, viewer, typed):
        errors = {"confirm_codes": _("Enter your password or a current code from your app.")}
        return await _account_page(request, viewer, errors=errors, status=422)
    keys = panel.config.keys
    codes = recovery_codes()
    await accounts.replace_recovery_codes(
        panel.pool, viewer.user.id, [keys.recovery_digest(c) for c in codes]
    )
    await audit(request, viewer, "account.recovery_codes_renewed")
    return await _account_page(request, viewer, codes)
