"""Routing updates to handlers: routers with filters, fall-through, and observers.

A feature makes a `Router`, registers handlers on it per update kind with filters, and the
feature list includes every feature's router into the engine's root router. For a `message` or
a `callback_query`, the first handler whose filters all pass and that does not answer
`UNHANDLED` takes the update; the rest never see it. The observer kinds (`chat_member`,
`my_chat_member`, `chat_join_request`) are facts several features may want: every matching
handler sees them. What Telegram is asked to deliver (`allowed_updates`) is what is registered.

A filter answers True or False, or a mapping: it passes, and what it found goes to the handler
as keyword arguments (`CallbackData.filter()` hands `pressed=`, `State(...)` hands
`conversation=`), as aiogram's filters do; a router's own filters hand theirs to every handler
below it. A handler is `handler(event, ctx, **data)`, and gets the items it names (all of
them if it takes `**data`), so a handler ignores what it does not need, as in aiogram.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, TypeVar

from sponsorbot.engine.unit import Context


class _Unhandled:
    """The answer of a handler that looked at an update and passes it on."""

    def __repr__(self) -> str:
        return "UNHANDLED"


UNHANDLED: Final = _Unhandled()

# Several features may listen to these; every matching handler runs.
OBSERVER_KINDS = frozenset({"chat_member", "my_chat_member", "chat_join_request"})

# What a filter answers: pass or not, or pass with data for the handler.
Found = bool | Mapping[str, Any]
Filter = Callable[[Any, Context], Found | Awaitable[Found]]
# `handler(event, ctx, **data)`, with the data its filters found.
Handler = Callable[..., Awaitable[object]]
H = TypeVar("H", bound=Handler)
# The data of an update no filter found anything for: one shared, read-only instance, so the
# common case allocates nothing.
NO_DATA: Final[Mapping[str, Any]] = MappingProxyType({})


def accepted(handler: Handler) -> frozenset[str] | None:
    """The names of the data `handler` takes by keyword; None when it takes any (`**data`)."""
    try:
        parameters = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):  # a callable whose signature Python cannot tell
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(p.name for p in parameters if p.kind in named)


@dataclass(frozen=True, slots=True)
class _Registered:
    handler: Handler
    filters: tuple[Filter, ...]
    # The data names the handler takes (None: all); read once, at registration.
    accepts: frozenset[str] | None

    async def run(self, event: Any, ctx: Context, data: Mapping[str, Any]) -> object:
        """The handler, if its filters pass (UNHANDLED if not), with the data they found."""
        found = await _passes(self.filters, event, ctx, data)
        if found is None:
            return UNHANDLED
        if found and self.accepts is not None:
            found = {name: value for name, value in found.items() if name in self.accepts}
        if found:
            return await self.handler(event, ctx, **found)
        return await self.handler(event, ctx)


async def _passes(
    filters: tuple[Filter, ...], event: Any, ctx: Context, data: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """`data` and what the filters found, if every filter passes (in order, stopping at the
    first that does not); None if one does not."""
    for check in filters:
        result = check(event, ctx)
        # A bool first: most filters answer one (cheaper to tell than isawaitable).
        if result is True:
            continue
        if result is False:
            return None
        if not isinstance(result, (bool, Mapping)):
            result = await result
        if isinstance(result, Mapping):
            data = {**data, **result}
        elif not result:
            return None
    return data


class Router:
    """Handlers per update kind, in registration order, then the included routers."""

    def __init__(self, name: str = "root", *filters: Filter) -> None:
        """`filters` apply to every handler here and below (checked once per update)."""
        self.name = name
        self.filters = filters
        self._handlers: dict[str, list[_Registered]] = {}
        self._children: list[Router] = []
        self._parent: Router | None = None
        # The kinds handled here or below; asked on every update, so kept until a change.
        self._kinds: frozenset[str] | None = None
        self._ahead: dict[str, str] = {}

    def on(self, kind: str, *filters: Filter) -> Callable[[H], H]:
        """Register the decorated `handler(event, ctx, **data)` for updates of `kind` passing
        `filters`.

        `event` is the update's body (the message, the callback query, ...); `data` is what the
        filters (this router's and its parents' included) found, by name.
        """

        def register(handler: H) -> H:
            registered = _Registered(handler, filters, accepted(handler))
            self._handlers.setdefault(kind, []).append(registered)
            self._changed()
            return handler

        return register

    def message(self, *filters: Filter) -> Callable[[H], H]:
        """Register a handler of messages."""
        return self.on("message", *filters)

    def callback_query(self, *filters: Filter) -> Callable[[H], H]:
        """Register a handler of button presses."""
        return self.on("callback_query", *filters)

    def chat_member(self, *filters: Filter) -> Callable[[H], H]:
        """Register a listener of members joining and leaving chats the bot administers."""
        return self.on("chat_member", *filters)

    def my_chat_member(self, *filters: Filter) -> Callable[[H], H]:
        """Register a listener of changes to the bot's own membership."""
        return self.on("my_chat_member", *filters)

    def chat_join_request(self, *filters: Filter) -> Callable[[H], H]:
        """Register a listener of join requests."""
        return self.on("chat_join_request", *filters)

    def read_ahead(self, kind: str, sql: str) -> None:
        """Have the claim read `sql` for every update of `kind`; handlers get it as `ctx.ahead`.

        `sql` is a scalar subquery answering jsonb (or NULL), over the claimed row `c` (its
        `bot_id`, `chat_key`, `kind` and `payload`). It saves the round trip of a read nearly
        every update of that kind needs; one per kind in the whole tree. The answer is read when
        the update is claimed, which is as fresh as a read at the handler's start: nothing else
        touches the person's state while their update is in hand.
        """
        if ";" in sql:
            raise ValueError("one subquery, without a semicolon")
        self._ahead[kind] = sql

    def read_aheads(self) -> dict[str, str]:
        """Every kind's read-ahead here or below (the claim's extra column)."""
        found: dict[str, str] = {}
        for child in self._children:
            for kind, sql in child.read_aheads().items():
                if kind in found:
                    raise ValueError(f"two read-aheads for {kind!r} updates")
                found[kind] = sql
        for kind, sql in self._ahead.items():
            if kind in found:
                raise ValueError(f"two read-aheads for {kind!r} updates")
            found[kind] = sql
        return found

    def include_router(self, router: Router) -> Router:
        """Route to `router` after this router's own handlers; returns it."""
        if router is self or router._parent is not None:
            raise ValueError(f"router {router.name!r} is already included somewhere")
        ancestor: Router | None = self
        while ancestor is not None:
            if ancestor is router:
                raise ValueError(f"including {router.name!r} would make a cycle")
            ancestor = ancestor._parent
        router._parent = self
        self._children.append(router)
        self._changed()
        return router

    def kinds(self) -> list[str]:
        """The update kinds with a handler here or below (what `allowed_updates` asks for)."""
        return sorted(self._kind_set())

    def handles(self, kind: str) -> bool:
        """Whether any handler here or below takes updates of `kind`."""
        return kind in self._kind_set()

    def _kind_set(self) -> frozenset[str]:
        if self._kinds is None:
            found = set(self._handlers)
            for child in self._children:
                found |= child._kind_set()
            self._kinds = frozenset(found)
        return self._kinds

    def _changed(self) -> None:
        router: Router | None = self
        while router is not None:
            router._kinds = None
            router = router._parent

    async def dispatch(self, kind: str, update: dict[str, Any], ctx: Context) -> bool:
        """Route one update; True when a handler took it (an observer kind: when any ran)."""
        event = update.get(kind)
        if event is None:
            return False
        if kind in OBSERVER_KINDS:
            return await self._notify(kind, event, ctx, NO_DATA) > 0
        return await self._propagate(kind, event, ctx, NO_DATA) is not UNHANDLED

    async def _propagate(
        self, kind: str, event: Any, ctx: Context, data: Mapping[str, Any]
    ) -> object:
        if not self.handles(kind):
            return UNHANDLED
        if self.filters:
            found = await _passes(self.filters, event, ctx, data)
            if found is None:
                return UNHANDLED
            data = found
        for registered in self._handlers.get(kind, ()):
            result = await registered.run(event, ctx, data)
            if result is not UNHANDLED:
                return result
        for child in self._children:
            result = await child._propagate(kind, event, ctx, data)
            if result is not UNHANDLED:
                return result
        return UNHANDLED

    async def _notify(self, kind: str, event: Any, ctx: Context, data: Mapping[str, Any]) -> int:
        if not self.handles(kind):
            return 0
        if self.filters:
            found = await _passes(self.filters, event, ctx, data)
            if found is None:
                return 0
            data = found
        ran = 0
        for registered in self._handlers.get(kind, ()):
            if await registered.run(event, ctx, data) is not UNHANDLED:
                ran += 1
        for child in self._children:
            ran += await child._notify(kind, event, ctx, data)
        return ran
