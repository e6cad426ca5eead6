"""The --statements report's text: one line per statement, safe in a Markdown table."""

from __future__ import annotations

from sponsorbot.loadtest.statements import TEXT_CHARS, short, table


def test_a_statement_is_one_line_cut_to_length() -> None:
    assert short("SELECT 1\n   FROM  bots\n") == "SELECT 1 FROM bots"
    long = "SELECT " + ", ".join(f"c{i}" for i in range(100)) + " FROM t"
    cut = short(long)
    assert len(cut) == TEXT_CHARS
    assert cut.endswith("…")
    assert long.startswith(cut[:-1])


def test_a_pipe_does_not_break_the_table() -> None:
    assert short("SELECT a || b") == "SELECT a \\|\\| b"


FIGURES = {
    "top": [
        {
            "statement": "WITH due AS (SELECT 1)",
            "calls": 0.43,
            "us": 230.4,
            "planning_us": 20.0,
            "planned_share": 0.09,
            "rows": 1.0,
            "wal_bytes": 470.0,
        }
    ],
    "all": {"statements": 12, "calls": 2.9, "us": 690.0, "planning_us": 31.0, "wal_bytes": 4800},
}


def test_the_table_has_the_totals_and_a_row_per_statement() -> None:
    text = table(FIGURES, 1.25)
    lines = text.splitlines()
    assert lines[0] == (
        "PostgreSQL's statements per visitor: 2.90 calls of 12 statements, 690 µs executing"
        " and planning (planning 31 µs), of 1,250 µs of PostgreSQL's CPU; the top 1:"
    )
    assert lines[3] == "| `WITH due AS (SELECT 1)` | 0.43 | 230 | 20 | 9% | 1.00 | 470 |"


def test_without_the_database_cpu_the_totals_say_nothing_of_it() -> None:
    assert "PostgreSQL's CPU" not in table(FIGURES, None)
