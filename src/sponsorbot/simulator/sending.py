"""Bot API methods that put messages in chats or change them: send*, copyMessage,
forwardMessage, editMessageText, editMessageReplyMarkup and deleteMessage."""

from __future__ import annotations

from typing import Any

from sponsorbot.simulator import errors as e
from sponsorbot.simulator.chats import visible_chat
from sponsorbot.simulator.errors import bad_request, forbidden, too_many_requests
from sponsorbot.simulator.filebytes import content_type_of
from sponsorbot.simulator.formatting import Users, format_text
from sponsorbot.simulator.markup import Markup, markup_for, parse_reply_markup
from sponsorbot.simulator.params import Params, Upload
from sponsorbot.simulator.replies import REPLIED_NOT_FOUND, ReplyTo, parse_reply
from sponsorbot.simulator.shapes import forward_origin, message_json
from sponsorbot.simulator.state import Handler, Simulator
from sponsorbot.simulator.types import shape
from sponsorbot.simulator.world import Bot, File, Message, MessageStore

# Telegram's limits, in code points (as tdlib counts), checked once the chat is known.
MAX_TEXT = 4096
MAX_CAPTION = 1024
# How long a bot may delete messages after they were sent, in seconds.
DELETE_WINDOW = 2 * 86400
# How the Bot API names each kind of file when one is sent as another.
FILE_TYPE_NAMES = {"photo": "Photo", "video": "Video", "document": "Document"}


def _private_store(sim: Simulator, bot: Bot, user_id: int) -> MessageStore:
    account = sim.world.accounts.get(user_id)
    if account is None or account.is_bot:
        raise bad_request(e.CHAT_NOT_FOUND)
    if account.deactivated:
        raise forbidden(e.DEACTIVATED)
    if bot.id in account.blocked_bots:
        raise forbidden(e.BLOCKED)
    store = bot.dialogs.get(user_id)
    if store is None:
        raise forbidden(e.CANT_INITIATE)
    return store


def target_store(sim: Simulator, bot: Bot, ref: int | str) -> MessageStore:
    """Where a bot's new message goes, or the error the real server gives for that chat."""
    if isinstance(ref, int) and ref > 0:
        return _private_store(sim, bot, ref)
    chat = visible_chat(sim, bot, ref, "write")
    if chat.type == "channel" and not chat.has_right(bot.id, "can_post_messages"):
        raise bad_request(e.NEED_ADMIN_RIGHTS)
    return chat.store


def readable_store(sim: Simulator, bot: Bot, ref: int | str, access: str) -> MessageStore:
    """A chat whose messages the bot may copy (``read``), edit (``edit``) or delete
    (``write``); a deactivated user's chat can only be read."""
    if isinstance(ref, int) and ref > 0:
        store = bot.dialogs.get(ref)
        if store is None:
            raise bad_request(e.CHAT_NOT_FOUND)
        account = sim.world.accounts[ref]
        if account.deactivated and access != "read":
            raise forbidden(e.DEACTIVATED)
        return store
    return visible_chat(sim, bot, ref, access).store


def formatted(
    p: Params, field: str, entities_field: str, users: Users | None = None
) -> tuple[str | None, list[Any]]:
    """Text (``field="text"``) or caption and its entities as Telegram stores them: after
    parse_mode or the ``entities_field`` JSON, cleaned, trimmed, with the automatic entities.
    None when the parameter is missing or the caption is left empty. ``users`` (the world's
    accounts) fill in text mentions; see :func:`~sponsorbot.simulator.formatting.format_text`."""
    text = p.opt_str(field)
    if text is None:
        return None, []
    mode = p.opt_str("parse_mode")
    caption = field != "text"
    shown, entities = format_text(
        text, mode, p.data.get(entities_field), users=users, caption=caption
    )
    return shown or None, entities


def _check_length(text: str | None, caption: bool = False) -> None:
    """tdlib's limits on a text or caption, which it checks after the chat: a message too
    long for a chat that does not exist is ``chat not found``."""
    if text is None:
        return
    if caption and len(text) > MAX_CAPTION:
        raise bad_request("message caption is too long")
    if not caption and len(text) > MAX_TEXT:
        raise bad_request(e.TEXT_TOO_LONG)


def _accept(
    sim: Simulator, bot: Bot, store: MessageStore, message: Message, p: Params
) -> dict[str, Any]:
    """Check the flood limits, then store the message and return it as the API shows it."""
    paid = p.flag("allow_paid_broadcast")
    wait = sim.limiter.acquire(bot.id, store.chat["id"], sim.world.clock(), paid=paid)
    if wait:
        raise too_many_requests(wait)
    message.message_id = store.new_id()
    store.messages[message.message_id] = message
    return message_json(message)


def _replied(
    sim: Simulator, bot: Bot, store: MessageStore, reply: ReplyTo | None
) -> Message | None:
    """The message replied to, once the target chat is known; None when there is none (or
    it is in another chat: the simulator does not show replies across chats)."""
    if reply is None:
        return None
    source = store if reply.chat is None else readable_store(sim, bot, reply.chat, "read")
    replied = source.live(reply.message_id)
    if replied is None and not reply.allow_without_reply:
        raise bad_request(REPLIED_NOT_FOUND)
    return replied if source is store else None


def _new_message(
    sim: Simulator,
    bot: Bot,
    store: MessageStore,
    p: Params,
    markup: Markup | None,
    reply: ReplyTo | None,
) -> Message:
    """A message of the bot's in ``store``: the reply is looked up, then the keyboard is
    checked against the chat, as the server and tdlib do."""
    replied = _replied(sim, bot, store, reply)
    channel = store.chat["type"] == "channel"
    return Message(
        message_id=0,
        date=sim.world.now(),
        chat=store.chat,
        sender=None if channel else bot.account.json(),
        sender_id=bot.id,
        reply_markup=markup_for(markup, store.chat["type"], channel_post=channel),
        protect_content=p.flag("protect_content"),
        reply_to=replied,
    )


async def send_message(sim: Simulator, bot: Bot, p: Params) -> Any:
    """sendMessage: the text is read first, then the keyboard, then the chat is checked."""
    text, entities = formatted(p, "text", "entities", sim.world.accounts)
    if not text:
        raise bad_request(e.TEXT_EMPTY)
    reply = parse_reply(p)
    markup = parse_reply_markup(p)
    store = target_store(sim, bot, p.chat_ref())
    message = _new_message(sim, bot, store, p, markup, reply)
    _check_length(text)
    message.text, message.entities = text, entities
    return _accept(sim, bot, store, message, p)


def _file_given(p: Params, kind: str) -> Upload | str | None:
    """The file of a send: a file_id or URL, or an upload in the part named ``kind`` or in
    the part ``attach://<name>`` names (aiogram uploads so); None when there is none."""
    ref = p.opt_str(kind)
    if ref is not None and not ref.startswith("attach://"):
        return ref
    return p.uploads.get(ref.removeprefix("attach://") if ref else kind)


def _media(sim: Simulator, given: Upload | str, kind: str) -> list[File]:
    """The file to send: an upload, a known file_id (of a kind that can be sent as ``kind``)
    or a URL."""
    if isinstance(given, Upload):
        file = sim.world.new_file(kind, given.filename, given.size)
        if given.data is not None:
            media_type = content_type_of(given.data, given.content_type, given.filename)
            sim.world.file_bytes.keep(file.file_id, given.data, media_type)
    else:
        ref = given
        known = sim.world.files.get(ref)
        if known is not None:
            # Videos and documents may stand for each other; photos only for photos.
            if (known.kind == "photo") != (kind == "photo"):
                found, wanted = FILE_TYPE_NAMES[known.kind], FILE_TYPE_NAMES[kind]
                raise bad_request(f"can't use file of type {found} as {wanted}")
            file = known
        elif ref.startswith(("http://", "https://")):
            file = sim.world.new_file(kind, ref.rsplit("/", 1)[-1] or None)
        else:
            raise bad_request(e.WRONG_FILE_ID)
    return sim.world.photo_sizes(file) if kind == "photo" else [file]


def _sender(kind: str) -> Handler:
    async def send_media(sim: Simulator, bot: Bot, p: Params) -> Any:
        given = _file_given(p, kind)
        if given is None:
            raise bad_request(f"there is no {kind} in the request")
        caption, entities = formatted(p, "caption", "caption_entities", sim.world.accounts)
        reply = parse_reply(p)
        markup = parse_reply_markup(p)
        store = target_store(sim, bot, p.chat_ref())
        files = _media(sim, given, kind)
        _check_length(caption, caption=True)
        message = _new_message(sim, bot, store, p, markup, reply)
        message.media_kind, message.files = kind, files
        message.caption, message.caption_entities = caption, entities
        return _accept(sim, bot, store, message, p)

    send_media.__doc__ = f"send{kind.title()}: by file_id, URL or multipart upload."
    return send_media


def _source(sim: Simulator, bot: Bot, p: Params, not_found: str) -> Message:
    """The message to copy or forward (whether it may be is checked after the target chat)."""
    store = readable_store(sim, bot, p.chat_ref("from_chat_id"), "read")
    source = store.live(p.integer("message_id"))
    if source is None:
        raise bad_request(not_found)
    return source


def _target(sim: Simulator, bot: Bot, p: Params, source: Message) -> MessageStore:
    """Where a copy or forward of ``source`` goes; protected content goes nowhere."""
    store = target_store(sim, bot, p.chat_ref())
    if source.protect_content:
        raise bad_request(e.PROTECTED_CONTENT)
    return store


def _copy_content(message: Message, source: Message) -> None:
    message.text, message.entities = source.text, source.entities
    message.media_kind, message.files = source.media_kind, source.files
    message.caption, message.caption_entities = source.caption, source.caption_entities


async def copy_message(sim: Simulator, bot: Bot, p: Params) -> Any:
    """copyMessage: the same content without a link to the original; returns MessageId."""
    p.required("from_chat_id")
    caption = (
        formatted(p, "caption", "caption_entities", sim.world.accounts)
        if p.has("caption")
        else None
    )
    source = _source(sim, bot, p, e.MESSAGE_TO_COPY_NOT_FOUND)
    reply = parse_reply(p)
    markup = parse_reply_markup(p)
    store = _target(sim, bot, p, source)
    if caption is not None:
        _check_length(caption[0], caption=True)
    message = _new_message(sim, bot, store, p, markup, reply)
    _copy_content(message, source)
    if caption is not None:
        message.caption, message.caption_entities = caption
    return shape("MessageId", message_id=_accept(sim, bot, store, message, p)["message_id"])


async def forward_message(sim: Simulator, bot: Bot, p: Params) -> Any:
    """forwardMessage: the content with ``forward_origin``."""
    p.required("from_chat_id")
    source = _source(sim, bot, p, e.MESSAGE_TO_FORWARD_NOT_FOUND)
    store = _target(sim, bot, p, source)
    message = _new_message(sim, bot, store, p, None, None)
    _copy_content(message, source)
    message.forward_origin = forward_origin(source)
    return _accept(sim, bot, store, message, p)


def _editable(sim: Simulator, bot: Bot, p: Params) -> Message:
    """The message to edit, after the server's and tdlib's checks, in their order."""
    message_id = max(0, p.integer("message_id"))
    if not p.has("chat_id") and not message_id:
        if not p.has("inline_message_id"):
            raise bad_request("message identifier is not specified")
        raise bad_request("invalid inline message identifier specified")
    store = readable_store(sim, bot, p.chat_ref(), "edit")
    message = store.live(message_id)
    if message is None:
        raise bad_request(e.MESSAGE_TO_EDIT_NOT_FOUND)
    if message.forward_origin is not None or not _may_edit(sim, bot, store, message):
        raise bad_request(e.MESSAGE_CANT_BE_EDITED)
    return message


def _may_edit(sim: Simulator, bot: Bot, store: MessageStore, message: Message) -> bool:
    """A bot edits its own messages; in a channel, any post if it may edit others' posts."""
    own = message.sender_id == bot.id
    if store.chat["type"] != "channel":
        return own
    chat = sim.world.chats[store.chat["id"]]
    return chat.has_right(bot.id, "can_edit_messages") or (
        own and chat.has_right(bot.id, "can_post_messages")
    )


def _edited_markup(p: Params, markup: Markup | None, message: Message) -> dict[str, Any] | None:
    """The new inline keyboard of an edited message (switch-inline buttons not on posts)."""
    chat_type = message.chat["type"]
    return markup_for(markup, chat_type, channel_post=message.sender is None, editing=True)


async def edit_message_text(sim: Simulator, bot: Bot, p: Params) -> Any:
    """editMessageText: no reply_markup means the keyboard goes, as in Telegram."""
    text, entities = formatted(p, "text", "entities", sim.world.accounts)
    if not text:
        raise bad_request(e.TEXT_EMPTY)
    parsed = parse_reply_markup(p)
    message = _editable(sim, bot, p)
    if message.text is None:
        raise bad_request(e.NO_TEXT_TO_EDIT)
    _check_length(text)
    markup = _edited_markup(p, parsed, message)
    if (text, entities, markup) == (message.text, message.entities, message.reply_markup):
        raise bad_request(e.NOT_MODIFIED)
    message.text, message.entities, message.reply_markup = text, entities, markup
    message.edit_date = sim.world.now()
    return message_json(message)


async def edit_message_reply_markup(sim: Simulator, bot: Bot, p: Params) -> Any:
    """editMessageReplyMarkup."""
    parsed = parse_reply_markup(p)
    message = _editable(sim, bot, p)
    markup = _edited_markup(p, parsed, message)
    if markup == message.reply_markup:
        raise bad_request(e.NOT_MODIFIED)
    message.reply_markup = markup
    message.edit_date = sim.world.now()
    return message_json(message)


async def delete_message(sim: Simulator, bot: Bot, p: Params) -> Any:
    """deleteMessage: own messages, or others' where the bot has can_delete_messages; none
    older than two days."""
    if not p.has("chat_id"):
        raise bad_request("chat identifier is not specified")
    message_id = max(0, p.integer("message_id"))
    if not message_id:
        raise bad_request("message identifier is not specified")
    store = readable_store(sim, bot, p.chat_ref(), "write")
    message = store.live(message_id)
    if message is None:
        raise bad_request(e.MESSAGE_TO_DELETE_NOT_FOUND)
    too_old = sim.world.now() - message.date > DELETE_WINDOW
    if store.chat["type"] == "private":
        if too_old:
            raise bad_request("message can't be deleted for everyone")
    else:
        chat = sim.world.chats[store.chat["id"]]
        own = message.sender_id == bot.id and (
            chat.type != "channel" or chat.has_right(bot.id, "can_post_messages")
        )
        if too_old or not (own or chat.has_right(bot.id, "can_delete_messages")):
            raise bad_request(e.MESSAGE_CANT_BE_DELETED)
    message.deleted = True
    return True


METHODS: dict[str, Handler] = {
    "sendmessage": send_message,
    "sendphoto": _sender("photo"),
    "sendvideo": _sender("video"),
    "senddocument": _sender("document"),
    "copymessage": copy_message,
    "forwardmessage": forward_message,
    "editmessagetext": edit_message_text,
    "editmessagereplymarkup": edit_message_reply_markup,
    "deletemessage": delete_message,
}
