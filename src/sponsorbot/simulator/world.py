"""The simulated world's state: accounts, bots, chats, messages, files and invite links.

Every identifier (ids, tokens, file ids, invite hashes) comes from one seeded random, so two
runs with the same seed and the same actions produce the same world.
"""

from __future__ import annotations

import random
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sponsorbot.simulator.filebytes import FileBytes
from sponsorbot.simulator.readers import to_integer_safe
from sponsorbot.simulator.types import (
    ADMIN_RIGHTS,
    CHANNEL_ONLY_RIGHTS,
    SUPERGROUP_ONLY_RIGHTS,
    shape,
)
from sponsorbot.simulator.updates import OPT_IN_UPDATES, UpdateQueue

URL_SAFE = string.ascii_letters + string.digits + "-_"

# The administrator rights of each kind of chat, as ChatMemberAdministrator lists them.
CHANNEL_RIGHTS = ADMIN_RIGHTS + CHANNEL_ONLY_RIGHTS
SUPERGROUP_RIGHTS = ADMIN_RIGHTS + SUPERGROUP_ONLY_RIGHTS
# Rights a bot gets when made admin without naming them: what Telegram's UI proposes.
DEFAULT_OFF_RIGHTS = frozenset({"is_anonymous", "can_promote_members"})


@dataclass(slots=True)
class Account:
    """A user or a bot as a member of chats (bots have an Account too)."""

    id: int
    first_name: str
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = None
    is_bot: bool = False
    deactivated: bool = False
    blocked_bots: set[int] = field(default_factory=set)
    # The User object, built again only when a name changes (it is in every message).
    _user: tuple[tuple[Any, ...], dict[str, Any]] | None = field(default=None, repr=False)

    def json(self) -> dict[str, Any]:
        """The Bot API User object (shared: do not change it)."""
        names = (self.first_name, self.last_name, self.username, self.language_code)
        if self._user is None or self._user[0] != names:
            user = shape(
                "User",
                id=self.id,
                is_bot=self.is_bot,
                first_name=self.first_name,
                last_name=self.last_name or None,
                username=self.username or None,
                language_code=self.language_code or None,
            )
            self._user = (names, user)
        return self._user[1]

    def private_chat_json(self) -> dict[str, Any]:
        """The Bot API Chat object of this user's private chat with a bot."""
        return shape(
            "Chat",
            id=self.id,
            first_name=self.first_name,
            last_name=self.last_name or None,
            username=self.username or None,
            type="private",
        )


@dataclass(slots=True)
class File:
    """A stored file; photos have several sizes, each a File of its own."""

    file_id: str
    file_unique_id: str
    kind: str
    file_size: int
    file_name: str | None = None
    mime_type: str | None = None
    width: int = 0
    height: int = 0
    duration: int = 0


@dataclass(slots=True)
class Message:
    """A message in a chat; ``chat`` and ``sender`` are the JSON objects the API shows."""

    message_id: int
    date: int
    chat: dict[str, Any]
    sender: dict[str, Any] | None
    sender_id: int
    text: str | None = None
    entities: list[dict[str, Any]] = field(default_factory=list)
    caption: str | None = None
    caption_entities: list[dict[str, Any]] = field(default_factory=list)
    media_kind: str | None = None
    files: list[File] = field(default_factory=list)
    reply_markup: dict[str, Any] | None = None
    protect_content: bool = False
    forward_origin: dict[str, Any] | None = None
    edit_date: int | None = None
    deleted: bool = False
    reply_to: Message | None = None  # the message this one answers, in the same chat


@dataclass(slots=True)
class MessageStore:
    """The messages of one chat, numbered from 1."""

    chat: dict[str, Any]
    messages: dict[int, Message] = field(default_factory=dict)
    next_id: int = 1

    def new_id(self) -> int:
        """Reserve the next message id."""
        message_id = self.next_id
        self.next_id += 1
        return message_id

    def live(self, message_id: int) -> Message | None:
        """The message with this id unless it does not exist or was deleted."""
        message = self.messages.get(message_id)
        return None if message is None or message.deleted else message


@dataclass(slots=True)
class Member:
    """A chat member's status, with administrator rights when status is administrator."""

    account_id: int
    status: str
    rights: dict[str, bool] = field(default_factory=dict)
    until_date: int = 0


@dataclass(slots=True)
class InviteLink:
    """A chat invite link and its counters."""

    link: str
    chat_id: int
    creator_id: int
    name: str | None = None
    expire_date: int | None = None
    member_limit: int | None = None
    creates_join_request: bool = False
    is_primary: bool = False
    is_revoked: bool = False
    joined: int = 0
    pending: int = 0

    def usable(self, now: float) -> bool:
        """Whether a visitor can still use this link."""
        if self.is_revoked or (self.expire_date is not None and self.expire_date <= now):
            return False
        return self.member_limit is None or self.joined < self.member_limit


@dataclass(slots=True)
class JoinRequest:
    """A pending request to join a chat."""

    account_id: int
    date: int
    invite_link: str | None


@dataclass(slots=True)
class Chat:
    """A channel or supergroup."""

    id: int
    type: str
    title: str
    username: str | None
    join_by_request: bool
    store: MessageStore
    members: dict[int, Member] = field(default_factory=dict)
    invite_links: dict[str, InviteLink] = field(default_factory=dict)
    primary_link: str | None = None
    join_requests: dict[int, JoinRequest] = field(default_factory=dict)
    # Bots that have been members: Telegram keeps knowing a private chat a bot has left.
    bots_seen: set[int] = field(default_factory=set)

    def status_of(self, account_id: int) -> str:
        """The member's status, ``left`` for strangers."""
        member = self.members.get(account_id)
        return member.status if member else "left"

    def is_admin(self, account_id: int) -> bool:
        """Creator or administrator."""
        return self.status_of(account_id) in ("creator", "administrator")

    def has_right(self, account_id: int, right: str) -> bool:
        """Whether this member may do ``right`` (the creator may do everything)."""
        member = self.members.get(account_id)
        if member is None:
            return False
        return member.status == "creator" or (
            member.status == "administrator" and member.rights.get(right, False)
        )


@dataclass(slots=True)
class CallbackQuery:
    """A button press waiting for answerCallbackQuery."""

    id: str
    account_id: int
    created: float


@dataclass(slots=True)
class Bot:
    """A bot: its token, its update queue, its webhook and its private chats."""

    id: int
    token: str
    account: Account
    queue: UpdateQueue
    allowed_updates: list[str] = field(default_factory=list)
    webhook_url: str = ""
    secret_token: str | None = None
    max_connections: int = 0  # set with the webhook
    last_error_date: int | None = None
    last_error_message: str | None = None
    dialogs: dict[int, MessageStore] = field(default_factory=dict)
    callbacks: dict[str, CallbackQuery] = field(default_factory=dict)
    answers: list[dict[str, Any]] = field(default_factory=list)
    poll_generation: int = 0

    def wants(self, kind: str) -> bool:
        """Whether an update of this kind is stored for the bot (allowed_updates)."""
        if self.allowed_updates:
            return kind in self.allowed_updates
        return kind not in OPT_IN_UPDATES


class World:
    """All state of one simulated Telegram, in memory."""

    def __init__(self, seed: int | None = None, clock: Callable[[], float] = time.time) -> None:
        self.rng = random.Random(seed)
        self._wall = clock
        # Added to the wall clock, so a test can see what a day later looks like.
        self.offset_s = 0.0
        self.accounts: dict[int, Account] = {}
        self.bots: dict[int, Bot] = {}
        self.bots_by_token: dict[str, Bot] = {}
        self.chats: dict[int, Chat] = {}
        self.usernames: dict[str, int] = {}
        self.files: dict[str, File] = {}
        # The bytes of small uploads, the newest kept (the phone page shows them).
        self.file_bytes = FileBytes()
        self.links: dict[str, InviteLink] = {}

    # Identifiers -------------------------------------------------------------------------

    def random_string(self, length: int, alphabet: str = URL_SAFE) -> str:
        """Random characters from the seeded random."""
        return "".join(self.rng.choices(alphabet, k=length))

    def _new_account_id(self, low: int, high: int) -> int:
        while True:
            candidate = self.rng.randint(low, high)
            if candidate not in self.accounts:
                return candidate

    def clock(self) -> float:
        """Unix time, moved on by `offset_s`."""
        return self._wall() + self.offset_s

    def now(self) -> int:
        """Unix time in whole seconds, as message dates are."""
        return int(self.clock())

    # Creation ----------------------------------------------------------------------------

    def _claim_username(self, username: str | None, owner_id: int) -> str | None:
        if not username:
            return None
        username = username.lstrip("@")
        key = username.lower()
        if key in self.usernames:
            raise ValueError(f"username @{username} is taken")
        self.usernames[key] = owner_id
        return username

    def create_user(
        self,
        first_name: str,
        last_name: str | None = None,
        username: str | None = None,
        language_code: str | None = None,
    ) -> Account:
        """Add a person."""
        account_id = self._new_account_id(100_000_000, 7_999_999_999)
        account = Account(account_id, first_name, last_name, None, language_code)
        account.username = self._claim_username(username, account_id)
        self.accounts[account_id] = account
        return account

    def create_bot(
        self, username: str, token: str | None = None, first_name: str | None = None
    ) -> Bot:
        """Add a bot; a given token must look like ``<digits>:<secret>`` and names the id."""
        if token is not None:
            digits, _, secret = token.partition(":")
            number = to_integer_safe(digits)
            if number is None or number <= 0 or not secret or token in self.bots_by_token:
                raise ValueError("token must be <digits>:<secret> and unused")
            bot_id = number
            if bot_id in self.accounts:
                raise ValueError("a bot with this id exists")
        else:
            bot_id = self._new_account_id(6_000_000_000, 8_999_999_999)
            token = f"{bot_id}:AA{self.random_string(33)}"
        if not username.lower().endswith("bot"):
            raise ValueError("a bot's username must end in 'bot'")
        account = Account(bot_id, first_name or username, is_bot=True)
        account.username = self._claim_username(username, bot_id)
        self.accounts[bot_id] = account
        bot = Bot(bot_id, token, account, UpdateQueue(self.rng.randint(100_000, 900_000_000)))
        self.bots[bot_id] = bot
        self.bots_by_token[token] = bot
        return bot

    def revoke_token(self, bot: Bot) -> str:
        """Give the bot a new token; the old one answers 401 from now on."""
        del self.bots_by_token[bot.token]
        bot.token = f"{bot.id}:AA{self.random_string(33)}"
        self.bots_by_token[bot.token] = bot
        return bot.token

    def create_chat(
        self,
        title: str,
        owner: Account,
        username: str | None = None,
        chat_type: str = "channel",
        join_by_request: bool = False,
    ) -> Chat:
        """Add a channel or supergroup owned by ``owner``, with a primary invite link."""
        chat_id = -(10**12 + self.rng.randint(1_000_000_000, 2_999_999_999))
        while chat_id in self.chats:
            chat_id -= 1
        claimed = self._claim_username(username, chat_id)
        chat_json = shape("Chat", id=chat_id, title=title, username=claimed, type=chat_type)
        chat = Chat(chat_id, chat_type, title, claimed, join_by_request, MessageStore(chat_json))
        chat.members[owner.id] = Member(owner.id, "creator")
        self.chats[chat_id] = chat
        primary = self.new_invite_link(chat, owner.id)
        primary.is_primary = True
        chat.primary_link = primary.link
        return chat

    def new_invite_link(self, chat: Chat, creator_id: int) -> InviteLink:
        """A fresh invite link of ``chat`` (not primary)."""
        link = InviteLink(f"https://t.me/+{self.random_string(16)}", chat.id, creator_id)
        chat.invite_links[link.link] = link
        self.links[link.link] = link
        return link

    def new_file(self, kind: str, file_name: str | None = None, size: int = 0) -> File:
        """Register a new file; its ids are as opaque as Telegram's."""
        prefix = {"photo": "AgACAgIAAxk", "video": "BAACAgIAAxk", "document": "BQACAgIAAxk"}
        file = File(
            file_id=prefix.get(kind, "CAACAgIAAxk") + self.random_string(60),
            file_unique_id="AQAD" + self.random_string(12),
            kind=kind,
            file_size=size or self.rng.randint(10_000, 5_000_000),
            file_name=file_name,
        )
        if kind in ("photo", "video"):
            file.width, file.height = 1280, 720
        if kind == "video":
            file.duration = self.rng.randint(5, 600)
            file.mime_type = "video/mp4"
        elif kind == "document":
            file.mime_type = "application/octet-stream"
        self.files[file.file_id] = file
        return file

    def photo_sizes(self, full: File) -> list[File]:
        """A photo as Telegram stores it: a thumbnail and the full size."""
        thumb = self.new_file("photo", size=max(1, full.file_size // 20))
        thumb.width, thumb.height = 320, 180
        return [thumb, full]

    # Lookups -----------------------------------------------------------------------------

    def _id_by_ref(self, ref: int | str) -> int | None:
        """The id ``ref`` names: itself, the number written in it, or a username's owner."""
        if isinstance(ref, int):
            return ref
        text = str(ref)
        number = to_integer_safe(text)
        return number if number is not None else self.usernames.get(text.lstrip("@").lower())

    def bot_by_ref(self, ref: int | str) -> Bot | None:
        """A bot by id, numeric string or username (with or without ``@``)."""
        bot_id = self._id_by_ref(ref)
        return self.bots.get(bot_id) if bot_id is not None else None

    def chat_by_ref(self, ref: int | str) -> Chat | None:
        """A channel or supergroup by id, numeric string or ``@username``."""
        chat_id = ref if isinstance(ref, int) else self._id_by_ref(ref)
        return self.chats.get(chat_id) if chat_id is not None else None

    def dialog(self, bot: Bot, account: Account) -> MessageStore:
        """The private chat between a bot and a user, created on first use."""
        store = bot.dialogs.get(account.id)
        if store is None:
            store = MessageStore(account.private_chat_json())
            bot.dialogs[account.id] = store
        return store

    # Updates -----------------------------------------------------------------------------

    def emit(self, bot: Bot, kind: str, payload: dict[str, Any], chat_key: int) -> None:
        """Store an update for ``bot`` if its allowed_updates lets it through."""
        if bot.wants(kind):
            bot.queue.push(kind, payload, chat_key, self.clock())
