"""How many examples a property test tries, by the Hypothesis profile in force.

`dev` (the default, tests/conftest.py) caps every count so the fast tier stays fast;
`thorough` (CI: HYPOTHESIS_PROFILE=thorough pytest -m property) runs the counts as written.
"""

from __future__ import annotations

from hypothesis import settings

DEV = 25
# A property whose every example queries PostgreSQL.
DEV_DATABASE = 10


def examples(thorough: int, *, dev: int = DEV) -> int:
    """`thorough` under the thorough profile, else at most `dev`."""
    if settings.get_current_profile_name() == "thorough":
        return thorough
    return min(thorough, dev)
