"""A fuzz run of the owner API from its own OpenAPI document (issue 15, "Bad input").

Schemathesis generates requests for every operation, valid and invalid, and sends them to the
real application (uvicorn, embedded PostgreSQL, the simulated Telegram, an owner token). No
answer may be a 500, and every answer must be one the document declares, in the shape it
declares. The number of examples is bounded so the run stays under a minute;
SPONSORBOT_FUZZ_EXAMPLES raises it for a longer local run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.integration.test_api_owner import connect_bot, owner_api

EXAMPLES = int(os.environ.get("SPONSORBOT_FUZZ_EXAMPLES", "10"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def _last(operation: Any) -> tuple[bool, str]:
    """Removing the bot goes last: everything else is tried on a bot that exists."""
    return (operation.method.upper() == "DELETE" and operation.path == "/bots/{bot_id}", "")


def fuzz(
    spec: dict[str, Any], base_url: str, token: str, fixed: dict[str, int]
) -> tuple[list[str], dict[int, int]]:
    """Run every operation with generated requests: the failures, one line each, and how
    many answers of each status came back. `fixed`: path parameters valid requests use (the
    real bot), and the only token that may be revoked (not the one the run uses)."""
    schema = schemathesis.openapi.from_dict(spec)
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    operations.sort(key=_last)
    headers = {"Authorization": f"Bearer {token}"}
    failures: list[str] = []
    statuses: dict[int, int] = {}
    session = requests.Session()
    for operation in operations:
        names = {p for p in fixed if "{" + p + "}" in operation.path}
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            # Valid requests go to the real bot, so they reach the services behind the checks;
            # a revocation always aims at the spare token, or the run would lock itself out.
            chosen = names if mode is GenerationMode.POSITIVE else names & {"token_id"}
            strategy = operation.as_strategy(
                generation_mode=mode,
                path_parameters={p: fixed[p] for p in chosen} or None,
                headers=headers,
            )

            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=strategy)
            def run(case: schemathesis.Case[Any]) -> None:
                response = case.call(base_url=base_url, headers=headers, session=session)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                try:
                    case.validate_response(response, checks=CHECKS, headers=headers)
                except Exception as exc:
                    failures.append(
                        f"{case.method} {case.formatted_path}: "
                        f"{response.status_code} {response.text[:300]!r}: {str(exc)[:500]}"
                    )

            with contextlib.suppress(Unsatisfiable):  # nothing of it can be made invalid
                run()
    return failures, statuses


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_the_owner_api_survives_a_fuzz_run_from_its_openapi_document(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """Issue 15: no 500 and no answer outside the document, for valid and invalid input."""
    async with owner_api(pool, db_dsn, tmp_path) as api:
        bot = await connect_bot(api)
        spec = (await api.http.get("/api/openapi.json")).json()
        base_url = str(api.http.base_url).rstrip("/")
        spare = await api.http.post("/api/v1/tokens", json={"name": "spare", "role": "analyst"})
        fixed = {"bot_id": bot["id"], "token_id": spare.json()["id"]}
        failures, statuses = await asyncio.to_thread(fuzz, spec, base_url, api.token, fixed)
    assert not failures, "\n".join(failures[:20])
    # It reached the services, not only the validation: some requests succeeded.
    assert sum(statuses.values()) > 300 and any(200 <= s < 300 for s in statuses), statuses
