"""The product's SQL for tests/integration/test_citus_ready.py: found in the source tree, and
read with libpg_query (pglast) to tell which statements join or touch several bots."""

from __future__ import annotations

import ast
import importlib
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pglast
from pglast import ast as pg
from pglast.enums import A_Expr_Kind, BoolExprType

import sponsorbot

DIST = "bot_id"
SRC = Path(sponsorbot.__file__).parent
MIGRATIONS = SRC / "db" / "migrations"


@dataclass(frozen=True)
class Schema:
    """What the checks need of the schema: the tables distributed by bot_id, and every
    table's columns (to tell whose an unqualified column is)."""

    bots: frozenset[str]
    columns: dict[str, set[str]]


# --- The product's SQL, found in the source -------------------------------------------------

# A statement's first word and more; not a command tag such as "UPDATE 0".
SQL_START = re.compile(r"^\s*\(?\s*(WITH|SELECT|INSERT|UPDATE|DELETE)\s+(?!\d+\s*$)\S")
# A str.format template (outbox._QUEUED): its formatted results are constants of their own.
TEMPLATE_FIELD = re.compile(r"\{[a-z_]+\}")


@dataclass
class Found:
    """The statements of the source tree, by where they are, and what could not be read."""

    statements: dict[str, str] = field(default_factory=dict)
    dynamic: set[str] = field(default_factory=set)


def product_sql() -> Found:
    """Every SQL statement in src/sponsorbot: module-level constants (as the module computes
    them, f-strings included), string literals anywhere, f-strings inside functions whose
    pieces are module constants, and the DML of the migrations. An f-string with a local
    value in it cannot be read statically: it is reported as dynamic, by module and function.
    """
    found = Found()
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        module = importlib.import_module(name)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for top in tree.body:
            for target in _assigned_names(top):
                value = getattr(module, target, None)
                if isinstance(value, str):
                    _add(found, f"{name}:{target}", value)
        pieces = {
            id(part)
            for joined in ast.walk(tree)
            if isinstance(joined, ast.JoinedStr)
            for part in joined.values
        }
        for where, node in _walk_with_place(tree, name):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in pieces:
                    _add(found, where, node.value)
            elif isinstance(node, ast.JoinedStr) and not where.endswith(":"):
                # At the top of the module it is part of a constant, read above.
                text = _render(node, vars(module))
                if text is not None:
                    _add(found, where, text)
                elif SQL_START.match(_skeleton(node)):
                    found.dynamic.add(where)
    for path in sorted(MIGRATIONS.glob("*.sql")):
        for n, sql in enumerate(pglast.split(path.read_text(encoding="utf-8"))):
            _add(found, f"{path.name}#{n + 1}", sql)
    return found


def _assigned_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _walk_with_place(tree: ast.Module, module: str) -> Iterator[tuple[str, ast.AST]]:
    """Every node, with `module:Class.function` (or `module:` at the top) it is in."""

    def visit(node: ast.AST, place: str) -> Iterator[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            inner = place
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{place}.{child.name}" if place else child.name
            yield f"{module}:{inner}", child
            yield from visit(child, inner)

    yield from visit(tree, "")


def _render(node: ast.JoinedStr, names: dict[str, Any]) -> str | None:
    """The f-string's text when every value in it is a module-level string, else None."""
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(str(part.value))
        elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name):
            value = names.get(part.value.id)
            if not isinstance(value, str):
                return None
            out.append(value)
        else:
            return None
    return "".join(out)


def _skeleton(node: ast.JoinedStr) -> str:
    return "".join(str(p.value) if isinstance(p, ast.Constant) else "x" for p in node.values)


def _add(found: Found, where: str, text: str) -> None:
    if SQL_START.match(text) and not TEMPLATE_FIELD.search(text):
        found.statements.setdefault(text, where)


def function_statements(definition: str) -> list[str]:
    """The SQL statements in a function: its body for LANGUAGE sql, each embedded query for
    plpgsql (libpg_query parses PL/pgSQL too)."""
    if "LANGUAGE sql" in definition:
        body = re.search(r"AS \$function\$(.*)\$function\$", definition, re.S)
        return [body[1]] if body else []
    queries: list[str] = []

    def collect(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "query" and isinstance(item, str) and SQL_START.match(item):
                    queries.append(item)
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    collect(pglast.parse_plpgsql(definition))
    return queries


# --- Joins between bots -------------------------------------------------------------------


@dataclass
class Scope:
    """One SELECT, UPDATE or DELETE level: its tables by alias, and its AND-ed conditions."""

    parent: Scope | None
    tables: dict[str, str] = field(default_factory=dict)
    derived: set[str] = field(default_factory=set)
    conditions: list[Any] = field(default_factory=list)
    refs: set[str] = field(default_factory=set)
    children: list[Scope] = field(default_factory=list)

    def chain(self) -> Iterator[Scope]:
        """This scope, then each enclosing one."""
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent


def cross_bot_joins(sql: str, schema: Schema) -> list[str]:
    """The pairs of bot tables the statement joins without equal bot_ids."""
    scopes: list[Scope] = []
    for raw in pglast.parse_sql(sql):
        _statement(raw.stmt, None, frozenset(), scopes)
    problems = []
    for scope in scopes:
        problems += _unjoined(scope, schema)
    return problems


def _statement(node: Any, parent: Scope | None, ctes: frozenset[str], out: list[Scope]) -> None:
    """Split a statement into scopes (appended to `out`)."""
    with_clause = getattr(node, "withClause", None)
    if with_clause is not None:
        for cte in with_clause.ctes:
            _statement(cte.ctequery, parent, ctes, out)
        ctes = ctes | {cte.ctename for cte in with_clause.ctes}
    if isinstance(node, pg.SelectStmt) and node.larg is not None:
        _statement(node.larg, parent, ctes, out)
        _statement(node.rarg, parent, ctes, out)
        return
    if isinstance(node, pg.InsertStmt):
        if node.selectStmt is not None:
            _statement(node.selectStmt, parent, ctes, out)
        return
    if not isinstance(node, (pg.SelectStmt, pg.UpdateStmt, pg.DeleteStmt)):
        return
    scope = Scope(parent)
    out.append(scope)
    items: list[Any] = []
    if isinstance(node, (pg.UpdateStmt, pg.DeleteStmt)):
        items.append(node.relation)
    items += list(getattr(node, "fromClause", None) or getattr(node, "usingClause", None) or ())
    for item in items:
        _from_item(item, scope, ctes, out)
    if node.whereClause is not None:
        scope.conditions += _conjuncts(node.whereClause)
    for value in node:
        if value not in ("fromClause", "usingClause", "relation", "withClause"):
            _expressions(getattr(node, value), scope, ctes, out)


def _from_item(item: Any, scope: Scope, ctes: frozenset[str], out: list[Scope]) -> None:
    if isinstance(item, pg.RangeVar):
        relname = str(item.relname)
        alias = str(item.alias.aliasname) if item.alias else relname
        if relname in ctes and item.schemaname is None:
            scope.derived.add(alias)
        else:
            scope.tables[alias] = relname
    elif isinstance(item, pg.JoinExpr):
        _from_item(item.larg, scope, ctes, out)
        _from_item(item.rarg, scope, ctes, out)
        if item.quals is not None:
            scope.conditions += _conjuncts(item.quals)
            _expressions(item.quals, scope, ctes, out)
    elif isinstance(item, pg.RangeSubselect):
        # LATERAL or not, Citus plans a subquery in FROM on its own (pushed down or
        # materialised); its joins are checked in its own scope.
        _statement(item.subquery, scope if item.lateral else scope.parent, ctes, out)
        if item.alias:
            scope.derived.add(str(item.alias.aliasname))
    elif isinstance(item, pg.RangeFunction) and item.alias:
        scope.derived.add(str(item.alias.aliasname))


def _expressions(value: Any, scope: Scope, ctes: frozenset[str], out: list[Scope]) -> None:
    """Find column references (for correlation) and subqueries (scopes of their own)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            _expressions(item, scope, ctes, out)
    elif isinstance(value, pg.SubLink):
        child_out: list[Scope] = []
        _statement(value.subselect, scope, ctes, child_out)
        out += child_out
        _expressions(value.testexpr, scope, ctes, out)
    elif isinstance(value, pg.ColumnRef):
        fields = _fields(value)
        if len(fields) == 2:
            scope.refs.add(fields[0])
    elif isinstance(value, pg.Node):
        for name in value:
            _expressions(getattr(value, name), scope, ctes, out)


def _fields(ref: pg.ColumnRef) -> list[str]:
    """A column reference's names: [alias, column] or [column] (`*` left out)."""
    return [str(f.sval) for f in ref.fields or () if isinstance(f, pg.String)]


def _conjuncts(node: Any) -> list[Any]:
    if isinstance(node, pg.BoolExpr) and node.boolop == BoolExprType.AND_EXPR:
        return [c for arg in node.args or () for c in _conjuncts(arg)]
    return [node]


def _unjoined(scope: Scope, schema: Schema) -> list[str]:
    """Pairs of bot tables in this scope, or between it and an outer scope it refers to, whose
    bot_ids the conditions in force do not make equal."""
    bots = schema.bots
    mine = [(scope, a) for a, t in scope.tables.items() if t in bots]
    outer = []
    for alias in scope.refs - set(scope.tables) - scope.derived:
        for above in list(scope.chain())[1:]:
            if alias in above.tables:
                if above.tables[alias] in bots:
                    outer.append((above, alias))
                break
    pairs = list(itertools.combinations(mine, 2)) + list(itertools.product(mine, outer))
    if not pairs:
        return []
    equal = _Equalities(scope, schema)
    return [
        f"{a.tables[x]} {x} and {b.tables[y]} {y}"
        for (a, x), (b, y) in pairs
        if not equal.same((id(a), x, DIST), (id(b), y, DIST))
    ]


class _Equalities:
    """Union-find over the `a = b` conditions in force in a scope (its own and the enclosing
    scopes' AND-ed conditions): column references, parameters and constants."""

    def __init__(self, scope: Scope, schema: Schema) -> None:
        self.parent: dict[object, object] = {}
        for level in scope.chain():
            for cond in level.conditions:
                if (
                    isinstance(cond, pg.A_Expr)
                    and cond.kind == A_Expr_Kind.AEXPR_OP
                    and [n.sval for n in cond.name or ()] == ["="]
                ):
                    left = _term(cond.lexpr, level, schema)
                    right = _term(cond.rexpr, level, schema)
                    if left is not None and right is not None:
                        self.parent[self.find(left)] = self.find(right)

    def find(self, key: object) -> object:
        while self.parent.get(key, key) != key:
            key = self.parent[key]
        return key

    def same(self, a: object, b: object) -> bool:
        return self.find(a) == self.find(b)


def _term(node: Any, scope: Scope, schema: Schema) -> object | None:
    while isinstance(node, pg.TypeCast):
        node = node.arg
    if isinstance(node, pg.ParamRef):
        return ("$", node.number)
    if isinstance(node, pg.A_Const):
        return ("const", repr(node.val))
    if not isinstance(node, pg.ColumnRef):
        return None
    fields = _fields(node)
    for level in scope.chain():
        if len(fields) == 2 and (fields[0] in level.tables or fields[0] in level.derived):
            return (id(level), fields[0], fields[1])
        if len(fields) == 1:
            owners = [a for a, t in level.tables.items() if fields[0] in schema.columns.get(t, ())]
            if len(owners) == 1 and not level.derived:
                return (id(level), owners[0], fields[0])
    return None


def unpinned(sql: str, schema: Schema) -> list[str]:
    """The bot tables the statement reads or changes without tying them to one parameter or
    constant (an INSERT's own rows are tied by their values, not looked at here)."""
    scopes: list[Scope] = []
    for raw in pglast.parse_sql(sql):
        _statement(raw.stmt, None, frozenset(), scopes)
    loose = []
    for scope in scopes:
        equal = _Equalities(scope, schema)
        for alias, table in scope.tables.items():
            root = equal.find((id(scope), alias, DIST))
            if table in schema.bots and not (isinstance(root, tuple) and root[0] in ("$", "const")):
                loose.append(f"{table} {alias}")
    return loose
