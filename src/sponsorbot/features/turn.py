"""A person's turn: what every handler of a person's message or button press starts and ends
with, done in one place (docs/adr/0025-turns.md).

`@turned()` wraps a handler method `handler(self, event, ctx, turn, **data)`. Before it, the
turn is made: who wrote, their language, the bot's configuration and texts (the owner's
cached copy, no round trip). After it, unless it passed the update on (`UNHANDLED`), the turn
ends: the person is upserted (`people.seen`), and a subclass ends what it added (the gate's
events are written). Every write goes into the update's unit of work, so it commits with the
update, in the statement it already makes. The wrapped method is still `method(event, ctx,
**data)`: the router calls it, and so can a test.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sponsorbot.engine import calls
from sponsorbot.engine.routing import UNHANDLED
from sponsorbot.engine.unit import Context, UnitOfWork
from sponsorbot.features.botconfig import BotConfig, ConfigCache
from sponsorbot.features.people import seen
from sponsorbot.features.texts import language_of, render

MAX_ANSWER = 200  # answerCallbackQuery text limit


@dataclass(slots=True)
class Turn:
    """One person's update being answered: who, in which language, with which texts."""

    user: dict[str, Any]
    user_id: int
    lang: str
    config: BotConfig
    uow: UnitOfWork
    # Whether the person is upserted when the turn ends: the handler's default (`turned`),
    # which `person_seen` and `person_written` change.
    upsert_person: bool = True

    def text(self, key: str, *, html: bool = True, **values: Any) -> str:
        """A bot text in this person's language (the owner's override first)."""
        return render(key, self.lang, self.config.texts, html=html, **values)

    def say(self, key: str, *, markup: dict[str, Any] | None = None, **values: Any) -> None:
        """Send this person one bot text as a message."""
        self.uow.queue(calls.send_message(self.user_id, self.text(key, **values), markup=markup))

    def answer(
        self, query: dict[str, Any], key: str | None = None, *, alert: bool = False, **values: Any
    ) -> None:
        """Stop the button's spinner, with a short notice (or an alert) when `key` is given."""
        text = self.text(key, html=False, **values)[:MAX_ANSWER] if key else None
        self.uow.queue(calls.answer_callback(self.user_id, query["id"], text, alert=alert))

    def person_seen(self) -> None:
        """Upsert the person when the turn ends (for handlers that do not by default)."""
        self.upsert_person = True

    def person_written(self, sql: str, *args: Any) -> None:
        """Write the person with a statement of the handler's own that upserts them too (the
        gate's /start writes the person and their gate in one): no second upsert at the end."""
        self.uow.write_alone(sql, *args)
        self.upsert_person = False

    def end(self) -> None:
        """What the handler leaves to the end of its turn: the person, last seen now."""
        if self.upsert_person:
            seen(self.uow, self.user)


class Configured(Protocol):
    """A feature's handlers: they read the bot's configuration through the shared cache."""

    @property
    def config(self) -> ConfigCache:
        """The bots' configurations."""


# A handler method, as written (`self, event, ctx, turn, **data`) and as wrapped (no turn).
Method = Callable[..., Awaitable[object]]


def turned(make: type[Turn] = Turn, *, seen: bool = True) -> Callable[[Method], Method]:
    """Wrap `handler(self, event, ctx, turn, **data)` in a turn of the person the event is from
    (`make`: the turn's class). `seen=False`: the person is upserted only where the handler
    asks (`Turn.person_seen`). An event from no person is passed on (`UNHANDLED`)."""

    def wrap(handler: Method) -> Method:
        @functools.wraps(handler)
        async def run(
            owner: Configured, event: dict[str, Any], ctx: Context, **data: Any
        ) -> object:
            user = event.get("from")
            if not isinstance(user, dict) or not isinstance(user.get("id"), int):
                return UNHANDLED
            config = await owner.config.get(ctx.bot.id)
            lang = language_of(user.get("language_code"))
            turn = make(user, int(user["id"]), lang, config, ctx.uow, seen)
            result = await handler(owner, event, ctx, turn, **data)
            if result is not UNHANDLED:
                turn.end()
            return result

        return run

    return wrap
