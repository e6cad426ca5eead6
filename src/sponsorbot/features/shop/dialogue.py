"""The advertiser's side, inside the bot: /advertise → a product → the material → summary →
submit, /cancel at any step; later the transaction hash, as text or a TronScan link.

Where the advertiser stands is their conversation state (`shop:material`, `shop:confirm`), so it
commits with the update that moved it. Buttons carry only a product id or nothing: what they
name is looked up again and must belong to this bot (callback data is the client's to forge).
Each handler runs in the advertiser's turn (`features/turn.py`); the person is upserted only
where they did something that counts (/advertise, usable material, a hash taken in).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import asyncpg

from sponsorbot.engine import calls
from sponsorbot.engine.conversation import Conversation, States, begin, end
from sponsorbot.engine.filters import ChatType, Command, State, command_of, from_person
from sponsorbot.engine.routing import UNHANDLED, Router
from sponsorbot.engine.unit import Context
from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.features.broadcasts.post import Button, Post, build
from sponsorbot.features.calendar import FSI, LRI, PDI
from sponsorbot.features.channels.service import REQUIRED_RIGHT, inspect, parse_ref, refusal
from sponsorbot.features.content.uploads import forwarded_chat
from sponsorbot.features.errors import FeatureError
from sponsorbot.features.shop import notices, queries
from sponsorbot.features.shop.buttons import AdCancel, AdMenu, AdProduct, AdSubmit
from sponsorbot.features.shop.ledger import enqueue, log_step
from sponsorbot.features.shop.rules import PAYABLE, show
from sponsorbot.features.texts import escape
from sponsorbot.features.turn import Turn, turned
from sponsorbot.telegram import Bot, TelegramError
from sponsorbot.telegram.entities import to_html
from sponsorbot.telegram.html import parse_html
from sponsorbot.tron.networks import HashError, parse_hash


class Step(States):
    """Where an advertiser stands in the dialogue (their conversation state)."""

    MATERIAL = "shop:material"  # a product picked: its material is asked for
    CONFIRM = "shop:confirm"  # the summary is shown: submit or cancel


ASK = {"gate_slot": "shop_ask_channel", "broadcast": "shop_ask_post", "banner": "shop_ask_banner"}
# A GIF comes with a `document` too, and goes out as one (broadcasts send these three kinds).
MEDIA = ("photo", "video", "document")
# A line ending a post that makes a button: "Text - https://..." (a dash or a pipe between).
BUTTON_LINE = re.compile(r"^(?P<text>.{1,64}?)\s+[-|–]\s+(?P<url>(https?|tg)://\S+)$")
# Text that looks like an attempt at a hash: long hex, or a TronScan link.
HASHY = re.compile(r"(?i)^(0x)?[0-9a-f]{30,100}$|tronscan|/transaction/")
MAX_BANNER = 200
# The advertiser's limits: hashes a person may send in an hour (turned-down ones count), and
# hashes one order may have being checked at once and in all.
HASHES_PER_HOUR = 10
CHECKING_PER_ORDER = 3
HASHES_PER_ORDER = 20
# Orders a person may have open at once (each waits in the owner's review queue).
OPEN_ORDERS_PER_PERSON = 3
# Reasons that time may change (the network saw it late, TronGrid was down): such a hash may be
# sent again this long after it was turned down.
RETRYABLE = ("unknown", "unconfirmed", "lookup_failed")
RETRY_AFTER = timedelta(minutes=10)
# How much of a post the summary shows, in characters the advertiser sees.
MAX_SHOWN = 300
# Who may book a gate slot for a chat: the people who run it.
RUNS_CHAT = ("creator", "administrator")


class Unusable(Exception):
    """Material that cannot be used; the message says why, to the advertiser."""


def who(person: dict[str, Any]) -> str:
    """The advertiser's name as the owner sees it."""
    name = " ".join(str(person.get(k) or "") for k in ("first_name", "last_name")).strip()
    if person.get("username"):
        name = f"{name} (@{person['username']})".strip()
    return name[:200]


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def post_of(message: dict[str, Any]) -> Post:
    """A post from what the advertiser sent: text or a captioned file with its formatting
    (bold, links, ...), and button lines at the end."""
    kind = next((k for k in MEDIA if message.get(k)), None)
    file_id = None
    if kind == "photo":
        file_id = message["photo"][-1]["file_id"]
    elif kind is not None:
        file_id = message[kind]["file_id"]
    raw = str(message.get("caption") if kind else message.get("text") or "")
    entities = message.get("caption_entities" if kind else "entities") or []
    lines = raw.rstrip().split("\n")
    buttons: list[tuple[Button, ...]] = []
    while lines and (match := BUTTON_LINE.match(lines[-1].strip())):
        buttons.insert(0, (Button(match["text"].strip(), advertiser_url(match["url"])),))
        lines.pop()
    kept = "\n".join(lines).rstrip()
    # Formatting of the button lines goes with them; what stays keeps its offsets.
    kept_end = _utf16(kept)
    inside = [e for e in entities if isinstance(e, dict) and _ends(e) <= kept_end]
    text = to_html(kept, inside)
    if not kept.strip() and kind is None:
        raise Unusable("the post has no text")
    post = Post(text=text, media_kind=kind, file_id=file_id, buttons=tuple(buttons[:10]))
    build(post)  # Telegram's own checks (length, markup), before anything is saved
    return post


def _ends(entity: dict[str, Any]) -> int:
    try:
        return int(entity.get("offset", 0)) + int(entity.get("length", 0))
    except (TypeError, ValueError):
        return 1 << 30


def banner_of(message: dict[str, Any]) -> dict[str, str]:
    """A banner: a line of text, then its link."""
    lines = [line.strip() for line in str(message.get("text") or "").split("\n") if line.strip()]
    if len(lines) != 2:
        raise Unusable("send two lines: the banner's text, then its link")
    if len(lines[0]) > MAX_BANNER:
        raise Unusable(f"the text is longer than {MAX_BANNER} characters")
    return {"text": lines[0], "url": advertiser_url(lines[1])}


def advertiser_url(url: str) -> str:
    """An advertiser's link, or Unusable: https:// with a host, or tg://resolve?... (a user, bot
    or channel). Stricter than the owner's check_url: other tg:// links act inside the reader's
    app (tg://proxy, tg://socks change how it connects), and http:// can be altered on the way."""
    url = url.strip()
    refused = Unusable(f"the link {url!r} must start with https:// (or be a tg://resolve?... link)")
    if any(char.isspace() for char in url):
        raise refused  # Telegram refuses such a button, and with it the message it is on
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # a malformed host, such as an unclosed [IPv6 address
        raise refused from None
    scheme = parts.scheme.lower()
    if scheme == "https" and host:
        return url
    if scheme == "tg" and parts.netloc.lower() == "resolve" and not parts.path and parts.query:
        return url
    raise refused


def in_language(product: Mapping[str, Any], lang: str) -> tuple[str, str]:
    """A product's title and description as an advertiser reads them: in Persian where the owner
    gave them in Persian, else the English ones."""
    if lang == "fa":
        return (
            product["title_fa"] or product["title"],
            product["description_fa"] or product["description"],
        )
    return product["title"], product["description"]


def menu_line(product: Mapping[str, Any], lang: str) -> str:
    """One product of the /advertise menu: its title, price and description. In Persian each
    Latin-capable part is isolated, so that a price and its unit stay together."""
    title, description = (escape(part) for part in in_language(product, lang))
    price = show(product["price_usdt"])
    if lang == "fa":
        detail = f" · {FSI}{description}{PDI}" if description else ""
        return f"• <b>{FSI}{title}{PDI}</b>: {LRI}{price} USDT{PDI}{detail}"
    detail = f" · {description}" if description else ""
    return f"• <b>{title}</b>: {price} USDT{detail}"


def describe(kind: str, material: dict[str, Any]) -> str:
    """The material in the summary (HTML)."""
    if kind == "gate_slot":
        at = f" (@{material['username']})" if material.get("username") else ""
        return f"📢 {escape(material['title'])}{escape(at)}"
    if kind == "banner":
        return f"📝 {escape(material['text'])}\n🔗 {escape(material['url'])}"
    post = material["post"]
    # Cut what the reader sees, not the HTML: a cut inside a tag makes Telegram refuse the
    # whole summary, and with it the Submit button.
    shown = parse_html(post["text"]).text
    text = escape(shown[:MAX_SHOWN]) + ("…" if len(shown) > MAX_SHOWN else "")
    extra = f"\n📎 {post['media_kind']}" if post.get("media_kind") else ""
    buttons = "".join(f"\n🔘 {escape(b['text'])}" for row in post["buttons"] for b in row)
    return f"📝 {text}{extra}{buttons}"


async def _status(telegram: Bot, chat_id: int, user_id: int) -> str | None:
    """The person's status in the chat, or None when Telegram will not say (in a channel only
    its administrators may ask about others)."""
    try:
        member = await telegram.get_chat_member(chat_id, user_id)
    except TelegramError as exc:
        if exc.is_transient:
            raise
        return None
    return str(member.get("status"))


class Dialogue:
    """The advertiser's handlers."""

    def __init__(self, config: ConfigCache) -> None:
        self.config = config

    def router(self) -> Router:
        """The shop's handlers, before the gate's welcome."""
        router = Router("shop", ChatType("private"), from_person)
        router.message(Command("advertise"))(self.menu)
        router.message(Command("orders"))(self.orders)
        router.message(Command("cancel"), State(Step))(self.cancel)
        router.message(State(Step.MATERIAL))(self.material)
        router.message(self.looks_like_hash)(self.payment)
        router.callback_query(AdMenu.filter())(self.menu_button)
        router.callback_query(AdProduct.filter())(self.product)
        router.callback_query(AdSubmit.filter())(self.submit)
        router.callback_query(AdCancel.filter())(self.cancel_button)
        return router

    @staticmethod
    def looks_like_hash(message: dict[str, Any], _ctx: Context) -> bool:
        """A router filter: a text that is (or tries to be) a transaction hash or link."""
        text = message.get("text")
        return isinstance(text, str) and bool(HASHY.search(text.strip()))

    async def _menu(self, ctx: Context, turn: Turn) -> None:
        config, lang = turn.config, turn.lang
        if not config.shop_enabled:
            turn.say("shop_closed")
            return
        products = await ctx.db.fetch(queries.PRODUCTS, ctx.bot.id, True)
        if not products:
            turn.say("shop_empty")
            return
        lines = [turn.text("shop_menu")]
        rows = []
        for p in products:
            price = show(p["price_usdt"])
            lines.append(menu_line(p, lang))
            title = in_language(p, lang)[0]
            label = turn.text("shop_product_button", html=False, title=title, price=price)
            rows.append([{"text": label, "callback_data": AdProduct(p["id"]).pack()}])
        markup = {"inline_keyboard": rows}
        ctx.uow.queue(calls.send_message(turn.user_id, "\n".join(lines), markup=markup))

    @turned()
    async def menu(self, message: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """/advertise: the products with their prices."""
        end(ctx.uow, turn.user_id)
        await self._menu(ctx, turn)

    @turned(seen=False)
    async def menu_button(self, query: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """The welcome's button: the same menu."""
        turn.answer(query)
        await self._menu(ctx, turn)

    @turned(seen=False)
    async def orders(self, message: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """/orders: the advertiser's latest orders, and the payment request again for one that
        waits for payment (with its QR code, by the file_id Telegram gave it)."""
        user_id, texts = turn.user_id, turn.config.texts
        rows = await ctx.db.fetch(queries.ORDERS_OF_USER, ctx.bot.id, user_id)
        if not rows:
            turn.say("shop_no_orders")
            return
        lines = "\n".join(
            f"#{r['id']} {escape(r['title'])}: {turn.text('shop_state_' + r['state'])}"
            for r in rows
        )
        ctx.uow.queue(
            calls.send_message(user_id, turn.text("shop_your_orders", raw={"orders": lines}))
        )
        payable = next((r for r in rows if r["state"] in PAYABLE), None)
        if payable is not None:
            if payable["qr_file_id"]:
                ctx.uow.queue(calls.send_media(user_id, "photo", payable["qr_file_id"]))
            ctx.uow.queue(notices.payment_request(payable, texts))

    @turned(seen=False)
    async def product(
        self, query: dict[str, Any], ctx: Context, turn: Turn, pressed: AdProduct
    ) -> None:
        """A product was picked: ask for its material."""
        turn.answer(query)
        row = None
        if turn.config.shop_enabled:
            row = await ctx.db.fetchrow(queries.PRODUCT, ctx.bot.id, pressed.product_id)
        if row is None or not row["active"]:
            await self._menu(ctx, turn)
            return
        data = {"product_id": row["id"], "kind": row["kind"]}
        begin(ctx.uow, turn.user_id, Step.MATERIAL, data)
        turn.say(ASK[row["kind"]])

    @turned(seen=False)
    async def cancel(self, message: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """/cancel during the dialogue."""
        end(ctx.uow, turn.user_id)
        turn.say("shop_cancelled")

    @turned(seen=False)
    async def cancel_button(self, query: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """The summary's Cancel."""
        turn.answer(query)
        current = await ctx.conversation()
        if current is None or not Step.holds(current.state):
            turn.say("shop_nothing_open")
            return
        end(ctx.uow, turn.user_id)
        turn.say("shop_cancelled")

    @turned(seen=False)
    async def material(
        self, message: dict[str, Any], ctx: Context, turn: Turn, conversation: Conversation
    ) -> object:
        """The channel, the post or the banner (`conversation`: the open `shop:material` step);
        checked, then the summary."""
        if command_of(message) is not None:
            return UNHANDLED  # /start and other commands are not material
        data = dict(conversation.data)
        try:
            material = await self._material(ctx, data.get("kind", ""), message)
        except Unusable as exc:
            turn.say("shop_bad_material", reason=str(exc))
            return None
        except FeatureError as exc:
            turn.say("shop_bad_material", reason=exc.message)
            return None
        turn.person_seen()
        product = await ctx.db.fetchrow(queries.PRODUCT, ctx.bot.id, data.get("product_id") or 0)
        if product is None:
            end(ctx.uow, turn.user_id)
            await self._menu(ctx, turn)
            return None
        data["material"] = material
        begin(ctx.uow, turn.user_id, Step.CONFIRM, data)
        text = turn.text(
            "shop_summary",
            raw={"material": describe(product["kind"], material)},
            product=in_language(product, turn.lang)[0],
            price=show(product["price_usdt"]),
        )
        buttons = [
            {
                "text": turn.text("shop_submit_button", html=False),
                "callback_data": AdSubmit().pack(),
            },
            {
                "text": turn.text("shop_cancel_button", html=False),
                "callback_data": AdCancel().pack(),
            },
        ]
        markup = {"inline_keyboard": [buttons]}
        ctx.uow.queue(calls.send_message(turn.user_id, text, markup=markup))
        return None

    async def _material(self, ctx: Context, kind: str, message: dict[str, Any]) -> dict[str, Any]:
        if kind == "gate_slot":
            return await self._channel(ctx, message)
        if kind == "broadcast":
            return {"post": post_of(message).as_json()}
        if kind == "banner":
            return banner_of(message)
        raise Unusable("this product is no longer sold")

    async def _channel(self, ctx: Context, message: dict[str, Any]) -> dict[str, Any]:
        forwarded = forwarded_chat(message)
        if forwarded is not None:
            ref: int | str = int(forwarded["id"])
        else:
            ref = parse_ref(str(message.get("text") or ""))
        try:
            check = await inspect(ctx.telegram, ctx.bot.id, ref)
        except TelegramError as exc:
            if exc.is_transient:
                raise
            raise Unusable(exc.description) from None
        # Only the people who run a chat may book it, and the rest must not learn its title:
        # so this comes before anything that names the chat.
        status = await _status(ctx.telegram, check.chat_id, int(message["from"]["id"]))
        if status not in RUNS_CHAT:
            if status is None and "administrator" in check.missing:
                raise Unusable(
                    f"make this bot an administrator of your channel with the right "
                    f"{REQUIRED_RIGHT} first, then send the channel again"
                )
            raise Unusable("only the creator or an administrator of a channel can book it")
        config = await self.config.get(ctx.bot.id)
        if check.chat_id == config.storage_chat_id:
            raise Unusable("this chat is where the bot keeps its files; it cannot be advertised")
        # A slot for a channel the gate already shows would add nothing the visitor sees.
        if any(channel.chat_id == check.chat_id for channel in config.gate):
            raise Unusable("this channel is already in the bot's gate")
        if check.missing:
            raise Unusable(refusal(check.title, check.missing))
        return {"chat_id": check.chat_id, "title": check.title, "username": check.username}

    @turned(seen=False)
    async def submit(self, query: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """Submit: a new order, or the changed material of one sent back."""
        person, user_id = turn.user, turn.user_id
        turn.answer(query)
        current = await ctx.conversation()
        if current is None or current.state != Step.CONFIRM:
            # An old summary keeps its buttons in the chat: say whether it became an order
            # (one made after the summary was sent) or is simply closed.
            latest = await ctx.db.fetchrow(queries.ORDERS_OF_USER, ctx.bot.id, user_id)
            shown = int((query.get("message") or {}).get("date") or 0)
            if latest is not None and latest["created_at"].timestamp() >= shown > 0:
                turn.say("shop_already_submitted", order=latest["id"])
            else:
                turn.say("shop_summary_closed")
            return
        data = current.data
        lang = turn.lang
        bot_id = ctx.bot.id
        revised = data.get("order_id")
        if revised is None:
            open_orders = await ctx.db.fetchval(queries.OPEN_ORDERS_OF_USER, bot_id, user_id)
            if open_orders >= OPEN_ORDERS_PER_PERSON:
                # Each is a row in the owner's review queue; the summary stays for later.
                turn.say("shop_too_many_orders", most=OPEN_ORDERS_PER_PERSON)
                return

        async def save(conn: asyncpg.Connection) -> None:
            if revised is not None:
                order_id = await conn.fetchval(
                    queries.RESUBMIT, bot_id, revised, data["material"], user_id
                )
                kind = "resubmitted"
            else:
                order_id = await conn.fetchval(
                    queries.INSERT_ORDER,
                    bot_id,
                    data["product_id"],
                    user_id,
                    who(person),
                    lang,
                    data["material"],
                )
                kind = "submitted"
            if order_id is None:  # the product was withdrawn, or the order moved on meanwhile
                text = turn.text("shop_closed")
            else:
                await log_step(conn, order_id, kind, f"tg:{user_id}")
                text = turn.text("shop_submitted", order=order_id)
            await enqueue(conn, bot_id, [calls.send_message(user_id, text)])

        end(ctx.uow, user_id)
        ctx.uow.run_in_transaction(save)

    @turned(seen=False)
    async def payment(self, message: dict[str, Any], ctx: Context, turn: Turn) -> None:
        """A transaction hash (or its link) for the advertiser's order waiting for payment.

        Bounded per person and per order, turned-down hashes included: each hash costs the
        shop TronGrid lookups for up to 15 minutes."""
        user_id = turn.user_id
        try:
            tx_hash = parse_hash(str(message.get("text") or ""))
        except HashError:
            turn.say("shop_bad_hash")
            return
        order = await ctx.db.fetchrow(queries.OPEN_OF_USER, ctx.bot.id, user_id, list(PAYABLE))
        if order is None:
            turn.say("shop_not_payable")
            return
        order_id, bot_id = order["id"], ctx.bot.id
        known = await ctx.db.fetchrow(queries.PAYMENT_OF, order_id, tx_hash)
        if known is not None and not _may_retry(known):
            turn.say("shop_already_checking", hash=notices.short(tx_hash))
            return
        sent = await ctx.db.fetchval(queries.HASHES_OF_USER, bot_id, user_id)
        counts = await ctx.db.fetchrow(queries.HASHES_OF_ORDER, bot_id, order_id)
        if (
            sent >= HASHES_PER_HOUR
            or counts["checking"] >= CHECKING_PER_ORDER
            or counts["total"] >= HASHES_PER_ORDER
        ):
            turn.say("shop_too_many_hashes")
            return
        turn.person_seen()

        async def insert(conn: asyncpg.Connection) -> None:
            if known is not None:
                made = await conn.fetchval(queries.REQUEUE, bot_id, known["id"])
            else:
                made = await conn.fetchval(queries.INSERT_PAYMENT, order_id, bot_id, tx_hash, "bot")
            if made is not None:
                await log_step(conn, order_id, "hash_submitted", f"tg:{user_id}", hash=tx_hash)

        ctx.uow.run_in_transaction(insert)
        turn.say("shop_checking", hash=notices.short(tx_hash))


def _may_retry(payment: Mapping[str, Any]) -> bool:
    """A hash turned down for a reason time may change can be sent again after a pause."""
    return (
        payment["status"] == "rejected"
        and payment["reason"] in RETRYABLE
        and payment["decided_at"] is not None
        and datetime.now(UTC) - payment["decided_at"] >= RETRY_AFTER
    )
