"""How long the team's records are kept: the audit log for `SPONSORBOT_AUDIT_KEEP_DAYS`,
sign-in failures for a week, expired sessions, setup codes, invitations and reset links for
a while after they expire (docs/adr/0014-retention.md: anonymous sign-in attempts write
to these tables, so none of them may grow for ever)."""

from __future__ import annotations

from sponsorbot.engine.janitor import Sweep


def _batch(table: str, key: str, stale: str) -> str:
    """The statement deleting a batch of `table`'s rows that `stale` finds: at most $1 of
    them, picked by `key`, so that a long backlog never holds one long transaction."""
    return f"""
DELETE FROM {table} WHERE {key} IN (
    SELECT {key} FROM {table} WHERE {stale} LIMIT $1)
"""


DELETE_AUDIT = _batch("audit_log", "id", "at < now() - make_interval(secs => $2)")
DELETE_FAILURES = _batch("signin_failures", "id", "at < now() - interval '7 days'")
DELETE_SESSIONS = _batch("panel_sessions", "id_hash", "expires_at < now() - interval '1 day'")
DELETE_SETUP_CODES = _batch("setup_codes", "code_hash", "expires_at < now() - interval '1 day'")
DELETE_INVITATIONS = _batch("invitations", "id", "expires_at < now() - interval '30 days'")
DELETE_RESETS = _batch("password_resets", "id", "expires_at < now() - interval '30 days'")


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
