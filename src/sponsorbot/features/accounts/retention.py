"""How long the team's records are kept: the audit log for `SPONSORBOT_AUDIT_KEEP_DAYS`,
sign-in failures for a week, expired sessions, setup codes, invitations and reset links for
a while after they expire (docs/adr/0014-retention.md: anonymous sign-in attempts write
to these tables, so none of them may grow for ever)."""

from __future__ import annotations

from sponsorbot.engine.janitor import Sweep

DELETE_AUDIT = """
DELETE FROM audit_log WHERE id IN (
    SELECT id FROM audit_log WHERE at < now() - make_interval(secs => $2) LIMIT $1)
"""
DELETE_FAILURES = """
DELETE FROM signin_failures WHERE id IN (
    SELECT id FROM signin_failures WHERE at < now() - interval '7 days' LIMIT $1)
"""
DELETE_SESSIONS = """
DELETE FROM panel_sessions WHERE id_hash IN (
    SELECT id_hash FROM panel_sessions WHERE expires_at < now() - interval '1 day' LIMIT $1)
"""
DELETE_SETUP_CODES = """
DELETE FROM setup_codes WHERE code_hash IN (
    SELECT code_hash FROM setup_codes WHERE expires_at < now() - interval '1 day' LIMIT $1)
"""
DELETE_INVITATIONS = """
DELETE FROM invitations WHERE id IN (
    SELECT id FROM invitations WHERE expires_at < now() - interval '30 days' LIMIT $1)
"""
DELETE_RESETS = """
DELETE FROM password_resets WHERE id IN (
    SELECT id FROM password_resets WHERE expires_at < now() - interval '30 days' LIMIT $1)
"""


def sweeps(audit_keep_s: float) -> list[Sweep]:
    """The accounts feature's clean-up, for the janitor's `sweep`."""
    return [
        Sweep("audit_log", DELETE_AUDIT, (audit_keep_s,)),
        Sweep("signin_failures", DELETE_FAILURES),
        Sweep("panel_sessions", DELETE_SESSIONS),
        Sweep("setup_codes", DELETE_SETUP_CODES),
        Sweep("invitations", DELETE_INVITATIONS),
        Sweep("password_resets", DELETE_RESETS),
    ]
