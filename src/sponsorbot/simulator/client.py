"""A thin async client for the simulator's control API (tests, the demo, the load test)."""

from __future__ import annotations

from types import TracebackType
from typing import Any

import aiohttp
import orjson


class SimulatorError(Exception):
    """The control API refused an action (``status`` is 400 or 404)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status


BotRef = int | str


class SimulatorClient:
    """Drive a running simulator at ``base_url`` (for example ``http://127.0.0.1:8081``)."""

    def __init__(self, base_url: str, session: aiohttp.ClientSession | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._session = session
        self._own_session = session is None

    async def __aenter__(self) -> SimulatorClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the HTTP session if this client made it."""
        if self._own_session and self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def _call(self, path: str, body: dict[str, Any] | None = None, get: bool = False) -> Any:
        url = f"{self.base_url}/_sim/{path}"
        clean = {k: v for k, v in (body or {}).items() if v is not None}
        if get:
            request = self._http().get(url, params={k: str(v) for k, v in clean.items()})
        else:
            request = self._http().post(url, data=orjson.dumps(clean))
        async with request as response:
            data = orjson.loads(await response.read())
        if not data.get("ok"):
            raise SimulatorError(response.status, data.get("error", "unknown error"))
        return data["result"]

    def api_url(self, token: str, method: str) -> str:
        """The Bot API URL of ``method`` for ``token`` on this simulator."""
        return f"{self.base_url}/bot{token}/{method}"

    # World -------------------------------------------------------------------------------

    async def create_bot(
        self, username: str, token: str | None = None, first_name: str | None = None
    ) -> dict[str, Any]:
        """A new bot: ``{"id", "token", "username", "first_name"}``."""
        body = {"username": username, "token": token, "first_name": first_name}
        result: dict[str, Any] = await self._call("bots", body)
        return result

    async def bots(self) -> list[dict[str, Any]]:
        """Every bot, with the ``allowed_updates`` it last named (empty: Telegram's default)."""
        result: list[dict[str, Any]] = await self._call("bots", get=True)
        return result

    async def create_user(
        self,
        first_name: str = "User",
        last_name: str | None = None,
        username: str | None = None,
        language_code: str | None = None,
    ) -> dict[str, Any]:
        """A new person, as a Bot API User object."""
        body = {
            "first_name": first_name,
            "last_name": last_name,
            "username": username,
            "language_code": language_code,
        }
        result: dict[str, Any] = await self._call("users", body)
        return result

    async def create_users(
        self,
        count: int,
        first_name: str = "Visitor",
        language_code: str | None = None,
        started: BotRef | None = None,
    ) -> list[int]:
        """Many people at once (load tests); returns their ids. With `started`, each already
        has a chat with that bot, as if they had started it earlier."""
        body = {
            "count": count,
            "first_name": first_name,
            "language_code": language_code,
            "bot": started,
        }
        result: list[int] = await self._call("users/bulk", body)
        return result

    async def create_channel(
        self,
        title: str,
        username: str | None = None,
        private: bool = False,
        join_request: bool = False,
        chat_type: str = "channel",
        owner_id: int | None = None,
    ) -> dict[str, Any]:
        """A new channel: its Chat object plus ``owner_id`` and primary ``invite_link``."""
        body = {
            "title": title,
            "username": username,
            "private": private,
            "join_request": join_request,
            "type": chat_type,
            "owner_id": owner_id,
        }
        result: dict[str, Any] = await self._call("channels", body)
        return result

    async def make_admin(self, chat_id: int | str, member_id: int, **rights: bool) -> Any:
        """Make a bot or person an administrator; unnamed rights take Telegram's defaults."""
        return await self._call(
            "admins", {"chat_id": chat_id, "member_id": member_id, "rights": rights}
        )

    async def remove_admin(self, chat_id: int | str, member_id: int, remove: bool = False) -> Any:
        """Demote an administrator to member (``remove``: out of the chat)."""
        body = {"chat_id": chat_id, "member_id": member_id, "remove": remove}
        return await self._call("admins/remove", body)

    async def set_status(self, chat_id: int | str, member_id: int, status: str) -> None:
        """Make a person ``member``, ``restricted``, ``kicked`` (banned) or ``left``."""
        body = {"chat_id": chat_id, "member_id": member_id, "status": status}
        await self._call("status", body)

    async def revoke_token(self, bot: BotRef) -> str:
        """Revoke a bot's token; returns the new one."""
        result = await self._call("revoke_token", {"bot": bot})
        return str(result["token"])

    async def reset(self) -> None:
        """Empty the world (same seed)."""
        await self._call("reset")

    # People's actions --------------------------------------------------------------------

    async def open_link(self, user_id: int, bot: BotRef, payload: str = "") -> dict[str, Any]:
        """The person opens ``t.me/<bot>?start=<payload>``: ``{"message_id", "ts"}``."""
        body = {"user_id": user_id, "bot": bot, "payload": payload}
        result: dict[str, Any] = await self._call("open_link", body)
        return result

    async def open_links(self, opens: list[tuple[int, int | str, str]]) -> int:
        """Several people open links at once: (user_id, bot, payload) each (load tests)."""
        body = {"opens": [{"user_id": u, "bot": b, "payload": p} for u, b, p in opens]}
        result = await self._call("open_links", body)
        return int(result["opened"])

    async def open_url(self, user_id: int, url: str) -> dict[str, Any]:
        """The person taps any t.me URL (bot start link, public channel or invite link)."""
        result: dict[str, Any] = await self._call("open_url", {"user_id": user_id, "url": url})
        return result

    async def send_text(self, user_id: int, bot: BotRef, text: str) -> dict[str, Any]:
        """The person sends the bot a text."""
        body = {"user_id": user_id, "bot": bot, "text": text}
        result: dict[str, Any] = await self._call("send_text", body)
        return result

    async def send_file(
        self,
        user_id: int,
        bot: BotRef,
        kind: str = "document",
        file_name: str | None = None,
        caption: str | None = None,
    ) -> dict[str, Any]:
        """The person sends the bot a file: ``{"message_id", "file_id", "ts"}``."""
        body = {
            "user_id": user_id,
            "bot": bot,
            "kind": kind,
            "file_name": file_name,
            "caption": caption,
        }
        result: dict[str, Any] = await self._call("send_file", body)
        return result

    async def press_button(
        self, user_id: int, bot: BotRef, message_id: int, callback_data: str
    ) -> str:
        """The person presses an inline button; returns the callback query id."""
        body = {
            "user_id": user_id,
            "bot": bot,
            "message_id": message_id,
            "callback_data": callback_data,
        }
        result = await self._call("press_button", body)
        return str(result["callback_query_id"])

    async def join(
        self, user_id: int, chat_id: int | str | None = None, invite_link: str | None = None
    ) -> str:
        """The person joins; returns ``member`` or ``pending`` (a join request was made)."""
        body = {"user_id": user_id, "chat_id": chat_id, "invite_link": invite_link}
        result = await self._call("join", body)
        return str(result["status"])

    async def leave(self, user_id: int, chat_id: int | str) -> None:
        """The person leaves the chat."""
        await self._call("leave", {"user_id": user_id, "chat_id": chat_id})

    async def request_join(
        self, user_id: int, chat_id: int | str | None = None, invite_link: str | None = None
    ) -> None:
        """The person asks to join."""
        body = {"user_id": user_id, "chat_id": chat_id, "invite_link": invite_link}
        await self._call("request_join", body)

    async def block_bot(self, user_id: int, bot: BotRef, blocked: bool = True) -> None:
        """The person blocks (or unblocks) the bot."""
        await self._call("block", {"user_id": user_id, "bot": bot, "blocked": blocked})

    async def deactivate_user(self, user_id: int) -> None:
        """The person deletes their account."""
        await self._call("deactivate", {"user_id": user_id})

    # Conditions --------------------------------------------------------------------------

    async def advance_clock(self, seconds: float) -> float:
        """Move the simulated clock on (later dates in messages and updates); the new time."""
        result = await self._call("clock", {"seconds": seconds})
        return float(result["ts"])

    async def set_latency(self, fixed_ms: float, jitter_ms: float = 0.0) -> None:
        """Every Bot API call waits ``fixed_ms`` plus up to ``jitter_ms``."""
        await self._call("latency", {"fixed_ms": fixed_ms, "jitter_ms": jitter_ms})

    async def set_fault(
        self,
        method: str = "*",
        error_rate: float = 0.0,
        status: int = 500,
        timeout_rate: float = 0.0,
        hang_seconds: float = 30.0,
        force_429_next: int = 0,
        retry_after: int = 1,
    ) -> None:
        """Replace the faults of ``method`` (``*``: all methods)."""
        body = {
            "method": method,
            "error_rate": error_rate,
            "status": status,
            "timeout_rate": timeout_rate,
            "hang_seconds": hang_seconds,
            "force_429_next": force_429_next,
            "retry_after": retry_after,
        }
        await self._call("faults", body)

    async def clear_faults(self) -> None:
        """No more faults."""
        await self._call("faults/clear")

    async def set_limits(
        self, per_bot_per_second: int | None = None, per_chat_per_second: int | None = None
    ) -> dict[str, int]:
        """Change Telegram's flood limits."""
        body = {
            "per_bot_per_second": per_bot_per_second,
            "per_chat_per_second": per_chat_per_second,
        }
        result: dict[str, int] = await self._call("limits", body)
        return result

    # The simulated chain (TronGrid) ------------------------------------------------------

    @property
    def trongrid_url(self) -> str:
        """Where the simulated TronGrid answers (and the price sources: the same root)."""
        return self.base_url

    async def tron_transfer(
        self,
        kind: str,
        sender: str,
        recipient: str,
        amount: str,
        *,
        solidify: str = "default",
        solidify_after_s: float | None = None,
        timestamp_ms: int | None = None,
        **extra: str | None,
    ) -> dict[str, Any]:
        """Make a transaction of ``kind`` (usdt, usdt_revert, lookalike, foreign_usdt, trx,
        trc10) moving ``amount`` (a decimal string). ``solidify``: default (19 blocks), now or
        never (until :meth:`tron_solidify`), or ``solidify_after_s``; ``timestamp_ms`` fakes the
        payer's raw_data.timestamp; ``extra``: the kind's own fields. Answers the summary:
        ``hash``, ``block_number``, ``block_timestamp``, ``solid``..."""
        body = {
            "from": sender,
            "to": recipient,
            "amount": amount,
            "solidify": solidify,
            "solidify_after_s": solidify_after_s,
            "timestamp_ms": timestamp_ms,
            **extra,
        }
        result: dict[str, Any] = await self._call(f"tron/{kind}", body)
        return result

    async def tron_usdt(
        self, sender: str, recipient: str, amount: str, **timing: Any
    ) -> dict[str, Any]:
        """Pay USDT through the network's official contract (``timing``: as
        :meth:`tron_transfer`)."""
        return await self.tron_transfer("usdt", sender, recipient, amount, **timing)

    async def tron_usdt_revert(
        self, sender: str, recipient: str, amount: str, **timing: Any
    ) -> dict[str, Any]:
        """A USDT transfer that fails: REVERT, result FAILED, no Transfer log."""
        return await self.tron_transfer("usdt_revert", sender, recipient, amount, **timing)

    async def tron_lookalike(
        self, sender: str, recipient: str, amount: str, **timing: Any
    ) -> dict[str, Any]:
        """A transfer of a fake token named "USDT" (``contract=``, or the network's
        look-alike: see :meth:`tron_status`), with the same Transfer log shape."""
        return await self.tron_transfer("lookalike", sender, recipient, amount, **timing)

    async def tron_foreign_usdt(
        self, sender: str, recipient: str, amount: str, **timing: Any
    ) -> dict[str, Any]:
        """A transfer through another network's official USDT contract (``network=``; by
        default nile on mainnet, else mainnet's), on the chain being served."""
        return await self.tron_transfer("foreign_usdt", sender, recipient, amount, **timing)

    async def tron_trx(
        self, sender: str, recipient: str, amount: str, **timing: Any
    ) -> dict[str, Any]:
        """Pay TRX (a decimal string, sent as sun) in a TransferContract."""
        return await self.tron_transfer("trx", sender, recipient, amount, **timing)

    async def tron_trc10(
        self, sender: str, recipient: str, amount: str, **timing: Any
    ) -> dict[str, Any]:
        """A TRC-10 transfer (TransferAssetContract) of ``asset_id=`` (default 1002000)."""
        timing.setdefault("asset_id", "1002000")
        return await self.tron_transfer("trc10", sender, recipient, amount, **timing)

    async def tron_solidify(self, tx_hash: str) -> dict[str, Any]:
        """Make the transaction solid now; its summary."""
        result: dict[str, Any] = await self._call("tron/solidify", {"hash": tx_hash})
        return result

    async def tron_transaction(self, tx_hash: str) -> dict[str, Any]:
        """One transaction's summary (404 if the network served has no such hash)."""
        result: dict[str, Any] = await self._call("tron/transaction", {"hash": tx_hash}, get=True)
        return result

    async def tron_transactions(self) -> list[dict[str, Any]]:
        """Every transaction of the network served, oldest first."""
        result: list[dict[str, Any]] = await self._call("tron/transactions", get=True)
        return result

    async def tron_create_wallet(self, trx: str = "10000", usdt: str = "1000") -> dict[str, Any]:
        """A new random address with balances: ``{"address", "hex", "network", "trx", "usdt"}``."""
        result: dict[str, Any] = await self._call("tron/wallets", {"trx": trx, "usdt": usdt})
        return result

    async def tron_wallet(self, address: str) -> dict[str, Any]:
        """A control-made wallet with its balances now."""
        result: dict[str, Any] = await self._call("tron/wallets", {"address": address}, get=True)
        return result

    async def tron_status(self) -> dict[str, Any]:
        """Network, its USDT and look-alike contracts, head and solid blocks, key, faults."""
        result: dict[str, Any] = await self._call("tron/status", get=True)
        return result

    async def tron_set_network(
        self,
        network: str | None = None,
        solidify_blocks: int | None = None,
        delay_s: float | None = None,
    ) -> dict[str, Any]:
        """Serve mainnet, nile or shasta; change how many blocks a transaction waits to be
        solid, and how long every TronGrid answer takes. Answers :meth:`tron_status`."""
        body = {"network": network, "solidify_blocks": solidify_blocks, "delay_s": delay_s}
        result: dict[str, Any] = await self._call("tron/network", body)
        return result

    async def tron_require_api_key(self, key: str | None) -> None:
        """Require ``key`` in TRON-PRO-API-KEY (None: no key needed)."""
        await self._call("tron/api_key", {"key": key} if key is not None else {})

    async def tron_fault(self, kind: str, count: int = 1) -> int:
        """The next ``count`` TronGrid calls answer ``kind`` (429, 500 or garbage); returns
        how many faults are queued."""
        result = await self._call("tron/faults", {"kind": kind, "count": count})
        return int(result["faults_queued"])

    async def tron_clear_faults(self) -> None:
        """No more queued TronGrid faults."""
        await self._call("tron/faults/clear")

    # Price sources -----------------------------------------------------------------------

    async def prices(self) -> dict[str, dict[str, Any]]:
        """Each source's ``{"price", "down"}`` (down: None, "500", "429" or "garbage")."""
        result: dict[str, dict[str, Any]] = await self._call("prices", get=True)
        return result

    async def set_price(self, price: str, source: str | None = None) -> dict[str, dict[str, Any]]:
        """USD per TRX (decimal string) at ``source`` (coingecko, kraken, binance; None: all)."""
        result: dict[str, dict[str, Any]] = await self._call(
            "prices", {"price": price, "source": source}
        )
        return result

    async def price_down(self, source: str | None = None, mode: str = "500") -> None:
        """Take ``source`` (None: all) down: it answers 500, 429 or garbage."""
        await self._call("prices/down", {"source": source, "mode": mode})

    async def price_up(self, source: str | None = None) -> None:
        """Bring ``source`` (None: all) back."""
        await self._call("prices/up", {"source": source})

    # Reading -----------------------------------------------------------------------------

    async def read_chat(self, user_id: int, bot: BotRef) -> list[dict[str, Any]]:
        """The person's chat with the bot: messages with text, buttons, media, edited/deleted."""
        result = await self._call("chat", {"user_id": user_id, "bot": bot}, get=True)
        messages: list[dict[str, Any]] = result["messages"]
        return messages

    async def callback_answers(self, user_id: int, bot: BotRef) -> list[dict[str, Any]]:
        """The bot's answerCallbackQuery calls for this person (toasts and alerts)."""
        result = await self._call("chat", {"user_id": user_id, "bot": bot}, get=True)
        answers: list[dict[str, Any]] = result["callback_answers"]
        return answers

    async def call_log(self, since: int = 0, limit: int = 10_000) -> list[dict[str, Any]]:
        """Bot API calls after sequence number ``since``: seq, ts, method, bot_id, chat_id,
        ok, error_code, message_id (``ts`` of a send is when it was accepted)."""
        result = await self._call("calls", {"since": since, "limit": limit}, get=True)
        calls: list[dict[str, Any]] = result["calls"]
        return calls

    async def all_calls(self, since: int = 0) -> list[dict[str, Any]]:
        """Every call after ``since``, however many pages of ``call_log`` that takes."""
        calls: list[dict[str, Any]] = []
        while page := await self.call_log(since):
            calls.extend(page)
            since = page[-1]["seq"]
        return calls
