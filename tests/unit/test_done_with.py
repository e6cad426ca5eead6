"""done_with: a handler's statements as CTEs in front of the done mark, parameters renumbered."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sponsorbot.engine.inbox import DONE_ARGS, done_with
from sponsorbot.engine.unit import UnitOfWork

PARAM = re.compile(r"\$(\d+)")


def statement(n: int, uses: list[int]) -> str:
    return f"INSERT INTO t{n} (a) SELECT {' + '.join(f'${u}' for u in uses) or '0'}"


@given(st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=6))
def test_parameters_follow_the_done_marks_in_order(counts: list[int]) -> None:
    # Each statement uses $1..$count, some more than once and out of order.
    sqls = tuple(statement(i, [*range(c, 0, -1), 1]) for i, c in enumerate(counts))
    combined = done_with(sqls)
    ctes = re.findall(r"w(\d+) AS \((INSERT INTO t\d+ \(a\) SELECT [^)]*)\)", combined)
    assert [int(i) for i, _ in ctes] == list(range(len(counts)))
    first = DONE_ARGS + 1
    for (_, body), count in zip(ctes, counts, strict=True):
        used = sorted({int(n) for n in PARAM.findall(body)})
        assert used == list(range(first, first + count))
        first += count
    done_part = combined[combined.index("done AS") :]
    assert max(int(n) for n in PARAM.findall(done_part)) == DONE_ARGS


def test_a_lost_claim_fails_the_statement() -> None:
    assert "sponsorbot_claim_lost()" in done_with(("DELETE FROM t WHERE a = $1",))


def test_write_takes_one_statement_only() -> None:
    with pytest.raises(ValueError, match="semicolon"):
        UnitOfWork(1).write_alone("DELETE FROM t; DELETE FROM u")
