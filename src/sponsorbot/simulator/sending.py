"""Bot API methods that put messages in chats or change them: send*, copyMessage,
forwardMessage, editMessageText, editMessageReplyMarkup and deleteMessage."""

from __future__ import annotations

from typing import Any

from sponsorbot.simulator import errors as e
from sponsorbot.simulator.chats import visible_chat
from sponsorbot.simulator.errors import bad_request, forbidden, too_many_requests
from sponsorbot.simulator.filebytes import content_type_of
from sponsorbot.simulator.html import parse_html
from sponsorbot.simulator.params import Params
from sponsorbot.simulator.shapes import message_json
from sponsorbot.simulator.state import Handler, Simulator
from sponsorbot.simulator.world import Bot, File, Message, MessageStore

MAX_TEXT = 4096
MAX_CAPTION = 1024


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
    chat = visible_chat(sim, bot, ref)
    status = chat.status_of(bot.id)
    if status in ("left", "kicked"):
        raise forbidden(e.NOT_CHANNEL_MEMBER if chat.type == "channel" else e.NOT_GROUP_MEMBER)
    if chat.type == "channel" and not chat.has_right(bot.id, "can_post_messages"):
        raise bad_request(e.NEED_ADMIN_RIGHTS)
    return chat.store


def readable_store(sim: Simulator, bot: Bot, ref: int | str) -> MessageStore:
    """A chat whose messages the bot may copy, edit or delete."""
    if isinstance(ref, int) and ref > 0:
        store = bot.dialogs.get(ref)
        if store is None:
            raise bad_request(e.CHAT_NOT_FOUND)
        return store
    chat = visible_chat(sim, bot, ref)
    if chat.status_of(bot.id) in ("left", "kicked"):
        raise forbidden(e.NOT_CHANNEL_MEMBER if chat.type == "channel" else e.NOT_GROUP_MEMBER)
    return chat.store


def formatted(p: Params, field: str, entities_field: str) -> tuple[str | None, list[Any]]:
    """Text and entities of ``field`` after parse_mode (HTML is checked like Telegram does)."""
    text = p.opt_str(field)
    if text is None:
        return None, []
    mode = (p.opt_str("parse_mode") or "").lower()
    if mode == "html":
        return parse_html(text)
    entities = p.json(entities_field)
    return text, entities if isinstance(entities, list) else []


def reply_markup(p: Params) -> dict[str, Any] | None:
    """The inline keyboard to keep on the message (other keyboards are not shown on it)."""
    markup = p.json("reply_markup")
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise bad_request(e.REPLY_MARKUP_INVALID)
    rows = markup.get("inline_keyboard")
    if rows is None:
        return None
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise bad_request('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array')
    for row in rows:
        for button in row:
            if not isinstance(button, dict) or not isinstance(button.get("text"), str):
                raise bad_request('can\'t find field "text"')
            data = button.get("callback_data")
            if data is not None and not 1 <= len(str(data).encode()) <= 64:
                raise bad_request(e.BUTTON_DATA_INVALID)
            if not any(k in button for k in ("url", "callback_data", "switch_inline_query")):
                raise bad_request("text buttons are unallowed in the inline keyboard")
    return {"inline_keyboard": rows}


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


def _new_message(sim: Simulator, bot: Bot, store: MessageStore, p: Params) -> Message:
    channel = store.chat["type"] == "channel"
    return Message(
        message_id=0,
        date=sim.world.now(),
        chat=store.chat,
        sender=None if channel else bot.account.json(),
        sender_id=bot.id,
        reply_markup=reply_markup(p),
        protect_content=p.flag("protect_content"),
    )


async def send_message(sim: Simulator, bot: Bot, p: Params) -> Any:
    """sendMessage."""
    store = target_store(sim, bot, p.chat_ref())
    text, entities = formatted(p, "text", "entities")
    if not text:
        raise bad_request(e.TEXT_EMPTY)
    if len(text) > MAX_TEXT:
        raise bad_request(e.TEXT_TOO_LONG)
    message = _new_message(sim, bot, store, p)
    message.text, message.entities = text, entities
    return _accept(sim, bot, store, message, p)


def _media(sim: Simulator, p: Params, kind: str) -> list[File]:
    upload = p.uploads.get(kind)
    if upload is not None:
        file = sim.world.new_file(kind, upload.filename, upload.size)
        if upload.data is not None:
            media_type = content_type_of(upload.data, upload.content_type, upload.filename)
            sim.world.file_bytes.keep(file.file_id, upload.data, media_type)
    else:
        ref = p.opt_str(kind)
        if ref is None:
            raise bad_request(f"there is no {kind} in the request")
        known = sim.world.files.get(ref)
        if known is not None:
            file = known
        elif ref.startswith(("http://", "https://")):
            file = sim.world.new_file(kind, ref.rsplit("/", 1)[-1] or None)
        else:
            raise bad_request(e.WRONG_FILE_ID)
    return sim.world.photo_sizes(file) if kind == "photo" else [file]


def _sender(kind: str) -> Handler:
    async def send_media(sim: Simulator, bot: Bot, p: Params) -> Any:
        store = target_store(sim, bot, p.chat_ref())
        files = _media(sim, p, kind)
        caption, entities = formatted(p, "caption", "caption_entities")
        if caption is not None and len(caption) > MAX_CAPTION:
            raise bad_request("message caption is too long")
        message = _new_message(sim, bot, store, p)
        message.media_kind, message.files = kind, files
        message.caption, message.caption_entities = caption, entities
        return _accept(sim, bot, store, message, p)

    send_media.__doc__ = f"send{kind.title()}: by file_id, URL or multipart upload."
    return send_media


def _source(sim: Simulator, bot: Bot, p: Params, not_found: str) -> Message:
    store = readable_store(sim, bot, p.chat_ref("from_chat_id"))
    source = store.live(p.req_int("message_id"))
    if source is None:
        raise bad_request(not_found)
    if source.protect_content:
        raise bad_request(e.PROTECTED_CONTENT)
    return source


def _copy_content(message: Message, source: Message) -> None:
    message.text, message.entities = source.text, source.entities
    message.media_kind, message.files = source.media_kind, source.files
    message.caption, message.caption_entities = source.caption, source.caption_entities


async def copy_message(sim: Simulator, bot: Bot, p: Params) -> Any:
    """copyMessage: the same content without a link to the original; returns MessageId."""
    source = _source(sim, bot, p, e.MESSAGE_TO_COPY_NOT_FOUND)
    store = target_store(sim, bot, p.chat_ref())
    message = _new_message(sim, bot, store, p)
    _copy_content(message, source)
    if p.has("caption"):
        message.caption, message.caption_entities = formatted(p, "caption", "caption_entities")
    return {"message_id": _accept(sim, bot, store, message, p)["message_id"]}


async def forward_message(sim: Simulator, bot: Bot, p: Params) -> Any:
    """forwardMessage: the content with ``forward_origin``."""
    source = _source(sim, bot, p, e.MESSAGE_TO_FORWARD_NOT_FOUND)
    store = target_store(sim, bot, p.chat_ref())
    message = _new_message(sim, bot, store, p)
    message.reply_markup = None
    _copy_content(message, source)
    if source.sender is not None:
        message.forward_origin = {
            "type": "user",
            "date": source.date,
            "sender_user": source.sender,
        }
    else:
        message.forward_origin = {
            "type": "channel",
            "date": source.date,
            "chat": source.chat,
            "message_id": source.message_id,
        }
    return _accept(sim, bot, store, message, p)


def _editable(sim: Simulator, bot: Bot, p: Params) -> Message:
    if p.has("inline_message_id"):
        raise bad_request(e.MESSAGE_TO_EDIT_NOT_FOUND)
    store = readable_store(sim, bot, p.chat_ref())
    message = store.live(p.req_int("message_id"))
    if message is None:
        raise bad_request(e.MESSAGE_TO_EDIT_NOT_FOUND)
    if message.sender_id != bot.id:
        raise bad_request(e.MESSAGE_CANT_BE_EDITED)
    return message


async def edit_message_text(sim: Simulator, bot: Bot, p: Params) -> Any:
    """editMessageText: no reply_markup means the keyboard goes, as in Telegram."""
    message = _editable(sim, bot, p)
    if message.text is None:
        raise bad_request(e.NO_TEXT_TO_EDIT)
    text, entities = formatted(p, "text", "entities")
    if not text:
        raise bad_request(e.TEXT_EMPTY)
    markup = reply_markup(p)
    if (text, entities, markup) == (message.text, message.entities, message.reply_markup):
        raise bad_request(e.NOT_MODIFIED)
    message.text, message.entities, message.reply_markup = text, entities, markup
    message.edit_date = sim.world.now()
    return message_json(message)


async def edit_message_reply_markup(sim: Simulator, bot: Bot, p: Params) -> Any:
    """editMessageReplyMarkup."""
    message = _editable(sim, bot, p)
    markup = reply_markup(p)
    if markup == message.reply_markup:
        raise bad_request(e.NOT_MODIFIED)
    message.reply_markup = markup
    message.edit_date = sim.world.now()
    return message_json(message)


async def delete_message(sim: Simulator, bot: Bot, p: Params) -> Any:
    """deleteMessage: own messages, or others' where the bot has can_delete_messages."""
    ref = p.chat_ref()
    store = readable_store(sim, bot, ref)
    message = store.live(p.req_int("message_id"))
    if message is None:
        raise bad_request(e.MESSAGE_TO_DELETE_NOT_FOUND)
    if store.chat["type"] != "private" and message.sender_id != bot.id:
        chat = sim.world.chats[store.chat["id"]]
        if not chat.has_right(bot.id, "can_delete_messages"):
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
