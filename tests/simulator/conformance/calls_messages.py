"""The calls that put messages in chats or change them: send*, copies, forwards, edits,
deletes and callback answers, each with typical and edge arguments (see cases.py)."""

from __future__ import annotations

from tests.simulator.conformance.spec import (
    PNG,
    Call,
    Ctx,
    Expect,
    Upload,
    bad,
    entity_types,
    equals,
    forbidden,
    html_pre,
    keep,
    present,
    text_mention,
    to_user,
)
from tests.simulator.conformance.wire import Control

KEYBOARD = {
    "inline_keyboard": [
        [{"text": "Open", "url": "https://example.com/a"}],
        [{"text": "Done", "callback_data": "done"}],
    ]
}
LONG = "x" * 4096


def _press(ctx: Ctx, ctl: Control) -> None:
    """The visitor presses the Done button of the keyboard message; its query is kept."""
    got = ctl.act(
        "press_button",
        user_id=ctx["user"],
        bot=ctx["bot"],
        message_id=ctx["kb_msg"],
        callback_data="done",
    )
    ctx["query"] = got["callback_query_id"]


def _flood(ctx: Ctx, ctl: Control) -> None:
    """One message a second per chat, and one sent already this second (to a chat of its own:
    the chat stays throttled for a while)."""
    ctl.act("limits", per_chat_per_second=1)
    ctl.bot_api(ctx["token"], "sendMessage", chat_id=ctx["flooded"], text="first")


def _unflood(ctx: Ctx, ctl: Control) -> None:
    """Back to the suite's limits (test_conformance.SIMULATOR)."""
    ctl.act("limits", per_chat_per_second=10_000)


MESSAGE_CALLS: tuple[Call, ...] = (
    # Sending text.
    Call(
        "sendMessage/typical",
        "sendMessage",
        lambda c: to_user(c, text="Hello there"),
        keep=keep("msg", "message_id"),
    ),
    Call(
        "sendMessage/html",
        "sendMessage",
        lambda c: to_user(
            c,
            text='<b>bold</b> <i>it</i> <a href="https://example.com">link</a> <code>c</code>',
            parse_mode="HTML",
        ),
        Expect(check=entity_types("bold", "italic", "text_link", "code")),
    ),
    Call(
        "sendMessage/html_pre_language",
        "sendMessage",
        lambda c: to_user(
            c, text='<pre><code class="language-python">x = 1</code></pre>', parse_mode="HTML"
        ),
        Expect(check=html_pre),
    ),
    Call(
        "sendMessage/html_text_mention",
        "sendMessage",
        lambda c: to_user(c, text=f'<a href="tg://user?id={c["user"]}">Ann</a>', parse_mode="HTML"),
        Expect(check=text_mention),
    ),
    Call(
        "sendMessage/html_utf16_offsets",
        "sendMessage",
        lambda c: to_user(c, text="😀 <b>bold</b>", parse_mode="HTML"),
        Expect(check=equals("entities", [{"offset": 3, "length": 4, "type": "bold"}])),
    ),
    Call(
        "sendMessage/html_lowercase_mode",
        "sendMessage",
        lambda c: to_user(c, text="<b>x</b>", parse_mode="html"),
        Expect(check=entity_types("bold")),
    ),
    Call(
        "sendMessage/markdownv2",
        "sendMessage",
        lambda c: to_user(c, text="*bold* _it_ `code` \\.", parse_mode="MarkdownV2"),
        Expect(check=entity_types("bold", "italic", "code")),
    ),
    Call(
        "sendMessage/markdown",
        "sendMessage",
        lambda c: to_user(c, text="*bold* _it_", parse_mode="Markdown"),
        Expect(check=entity_types("bold", "italic")),
    ),
    Call(
        "sendMessage/entities",
        "sendMessage",
        lambda c: to_user(
            c, text="bold text", entities=[{"type": "bold", "offset": 0, "length": 4}]
        ),
        Expect(check=entity_types("bold")),
    ),
    Call(
        "sendMessage/auto_entities",
        "sendMessage",
        lambda c: to_user(c, text="/help https://example.com @durov #tag"),
        Expect(check=entity_types("bot_command", "url", "mention", "hashtag")),
    ),
    Call(
        "sendMessage/inline_keyboard",
        "sendMessage",
        lambda c: to_user(c, text="Pick one", reply_markup=KEYBOARD),
        Expect(check=equals("reply_markup", KEYBOARD)),
        keep=keep("kb_msg", "message_id"),
    ),
    Call(
        "sendMessage/other_buttons",
        "sendMessage",
        lambda c: to_user(
            c,
            text="More",
            reply_markup={
                "inline_keyboard": [
                    [{"text": "Copy", "copy_text": {"text": "code-123"}}],
                    [{"text": "App", "web_app": {"url": "https://example.com/app"}}],
                    [{"text": "Login", "login_url": {"url": "https://example.com/login"}}],
                    [{"text": "Share", "switch_inline_query": "q"}],
                ]
            },
        ),
    ),
    Call(
        "sendMessage/reply_keyboard",
        "sendMessage",
        lambda c: to_user(
            c,
            text="Choose",
            reply_markup={"keyboard": [[{"text": "A"}, {"text": "B"}]], "resize_keyboard": True},
        ),
    ),
    Call(
        "sendMessage/remove_keyboard",
        "sendMessage",
        lambda c: to_user(c, text="Gone", reply_markup={"remove_keyboard": True}),
    ),
    Call(
        "sendMessage/protect_content",
        "sendMessage",
        lambda c: to_user(c, text="Secret", protect_content=True),
        Expect(check=equals("has_protected_content", True)),
        keep=keep("protected", "message_id"),
    ),
    Call(
        "sendMessage/longest",
        "sendMessage",
        lambda c: to_user(c, text=LONG),
    ),
    Call(
        "sendMessage/trimmed",
        "sendMessage",
        lambda c: to_user(c, text="  spaced out \n"),
        Expect(check=equals("text", "spaced out")),
    ),
    Call(
        "sendMessage/reply",
        "sendMessage",
        lambda c: to_user(c, text="Answer", reply_parameters={"message_id": c["user_msg"]}),
        Expect(check=present("reply_to_message")),
    ),
    Call(
        "sendMessage/options",
        "sendMessage",
        lambda c: to_user(
            c,
            text="Quiet https://example.com",
            disable_notification=True,
            link_preview_options={"is_disabled": True},
        ),
    ),
    Call(
        "sendMessage/channel_by_username",
        "sendMessage",
        lambda c: {"chat_id": "@" + c["channel_username"], "text": "A post"},
        keep=keep("post", "message_id"),
    ),
    Call(
        "sendMessage/supergroup",
        "sendMessage",
        lambda c: {"chat_id": c["supergroup"], "text": "Hello group"},
    ),
    Call(
        "sendMessage/empty",
        "sendMessage",
        lambda c: to_user(c, text=""),
        bad("message text is empty"),
        raw=True,
    ),
    Call(
        "sendMessage/whitespace",
        "sendMessage",
        lambda c: to_user(c, text="  \n "),
        bad("text must be non-empty"),
    ),
    Call(
        "sendMessage/too_long",
        "sendMessage",
        lambda c: to_user(c, text=LONG + "x"),
        bad("message is too long"),
    ),
    Call(
        "sendMessage/unsupported_parse_mode",
        "sendMessage",
        lambda c: to_user(c, text="x", parse_mode="Foo"),
        bad("unsupported parse_mode"),
    ),
    Call(
        "sendMessage/html_unclosed",
        "sendMessage",
        lambda c: to_user(c, text="<b>x", parse_mode="HTML"),
        bad("can't parse entities: Can't find end tag corresponding to start tag \"b\""),
    ),
    Call(
        "sendMessage/markdownv2_reserved",
        "sendMessage",
        lambda c: to_user(c, text="a.b", parse_mode="MarkdownV2"),
        bad(
            "can't parse entities: Character '.' is reserved and must be escaped with the "
            "preceding '\\'"
        ),
    ),
    Call(
        "sendMessage/bad_markup_json",
        "sendMessage",
        lambda c: to_user(c, text="x", reply_markup="{not json"),
        bad("can't parse reply keyboard markup JSON object"),
        raw=True,
    ),
    Call(
        "sendMessage/text_only_inline_button",
        "sendMessage",
        lambda c: to_user(c, text="x", reply_markup={"inline_keyboard": [[{"text": "t"}]]}),
        bad(
            "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        ),
        raw=True,
    ),
    Call(
        "sendMessage/button_bad_url",
        "sendMessage",
        lambda c: to_user(
            c, text="x", reply_markup={"inline_keyboard": [[{"text": "t", "url": "not a url"}]]}
        ),
        bad(),
    ),
    Call(
        "sendMessage/button_data_too_long",
        "sendMessage",
        lambda c: to_user(
            c,
            text="x",
            reply_markup={"inline_keyboard": [[{"text": "t", "callback_data": "d" * 65}]]},
        ),
        bad("BUTTON_DATA_INVALID"),
    ),
    Call(
        "sendMessage/never_started",
        "sendMessage",
        lambda c: {"chat_id": c["stranger"], "text": "hi"},
        forbidden("Forbidden: bot can't initiate conversation with a user"),
    ),
    Call(
        "sendMessage/blocked",
        "sendMessage",
        lambda c: {"chat_id": c["blocked"], "text": "hi"},
        forbidden("Forbidden: bot was blocked by the user"),
    ),
    Call(
        "sendMessage/deactivated",
        "sendMessage",
        lambda c: {"chat_id": c["gone"], "text": "hi"},
        forbidden("Forbidden: user is deactivated"),
    ),
    Call(
        "sendMessage/user_by_username",
        "sendMessage",
        lambda c: {"chat_id": "@ann_visitor", "text": "hi"},
        bad("chat not found"),
    ),
    Call(
        "sendMessage/unknown_chat",
        "sendMessage",
        lambda c: {"chat_id": -1009999999999, "text": "hi"},
        bad("chat not found"),
    ),
    Call(
        "sendMessage/flood",
        "sendMessage",
        lambda c: {"chat_id": c["flooded"], "text": "second"},
        Expect("retry_after"),
        before=_flood,
        after=_unflood,
    ),
    # Media.
    Call(
        "sendPhoto/upload",
        "sendPhoto",
        lambda c: to_user(
            c, photo=Upload("dot.png", PNG), caption="<b>A</b> dot", parse_mode="HTML"
        ),
        Expect(check=entity_types("bold", field="caption_entities")),
    ),
    Call("sendPhoto/file_id", "sendPhoto", lambda c: to_user(c, photo=c["user_photo"])),
    Call(
        "sendPhoto/url",
        "sendPhoto",
        lambda c: to_user(c, photo="https://example.com/cat.jpg"),
    ),
    Call(
        "sendPhoto/wrong_file_id",
        "sendPhoto",
        lambda c: to_user(c, photo="not-a-file-id"),
        bad("wrong file identifier/HTTP URL specified"),
    ),
    Call(
        "sendPhoto/caption_too_long",
        "sendPhoto",
        lambda c: to_user(c, photo=c["user_photo"], caption="c" * 1025),
        bad("message caption is too long"),
    ),
    Call(
        "sendVideo/upload",
        "sendVideo",
        lambda c: to_user(c, video=Upload("clip.mp4", b"\x00\x00\x00\x18ftypmp42" + bytes(64))),
    ),
    Call("sendVideo/file_id", "sendVideo", lambda c: to_user(c, video=c["user_video"])),
    Call(
        "sendDocument/upload",
        "sendDocument",
        lambda c: to_user(c, document=Upload("notes.txt", b"hello\n"), caption="Notes"),
    ),
    Call(
        "sendDocument/file_id",
        "sendDocument",
        lambda c: to_user(c, document=c["user_document"], protect_content=True),
    ),
    Call(
        "sendDocument/to_channel",
        "sendDocument",
        lambda c: {"chat_id": c["channel"], "document": c["user_document"]},
    ),
    # Copies and forwards.
    Call(
        "copyMessage/typical",
        "copyMessage",
        lambda c: {"chat_id": c["user"], "from_chat_id": c["user"], "message_id": c["msg"]},
    ),
    Call(
        "copyMessage/new_caption",
        "copyMessage",
        lambda c: {
            "chat_id": c["channel"],
            "from_chat_id": c["user"],
            "message_id": c["photo_msg"],
            "caption": "<i>new</i>",
            "parse_mode": "HTML",
        },
        before=lambda c, ctl: c.__setitem__(
            "photo_msg",
            ctl.bot_api(c["token"], "sendPhoto", chat_id=c["user"], photo=c["user_photo"])[
                "message_id"
            ],
        ),
    ),
    Call(
        "copyMessage/missing",
        "copyMessage",
        lambda c: {"chat_id": c["user"], "from_chat_id": c["user"], "message_id": 99999},
        bad("message to copy not found"),
    ),
    Call(
        "copyMessage/protected",
        "copyMessage",
        lambda c: {"chat_id": c["user"], "from_chat_id": c["user"], "message_id": c["protected"]},
        bad("message has protected content and can't be forwarded"),
    ),
    Call(
        "forwardMessage/from_user",
        "forwardMessage",
        lambda c: {"chat_id": c["user"], "from_chat_id": c["user"], "message_id": c["user_msg"]},
    ),
    Call(
        "forwardMessage/from_channel",
        "forwardMessage",
        lambda c: {"chat_id": c["user"], "from_chat_id": c["channel"], "message_id": c["post"]},
    ),
    Call(
        "forwardMessage/photo",
        "forwardMessage",
        lambda c: {
            "chat_id": c["channel"],
            "from_chat_id": c["user"],
            "message_id": c["photo_msg"],
        },
    ),
    Call(
        "forwardMessage/missing",
        "forwardMessage",
        lambda c: {"chat_id": c["user"], "from_chat_id": c["user"], "message_id": 99999},
        bad("message to forward not found"),
    ),
    # Edits and deletes.
    Call(
        "editMessageText/typical",
        "editMessageText",
        lambda c: {
            "chat_id": c["user"],
            "message_id": c["msg"],
            "text": "Edited <b>now</b>",
            "parse_mode": "HTML",
        },
        Expect(check=entity_types("bold")),
    ),
    Call(
        "editMessageText/keep_keyboard",
        "editMessageText",
        lambda c: {
            "chat_id": c["user"],
            "message_id": c["kb_msg"],
            "text": "Pick again",
            "reply_markup": KEYBOARD,
        },
        Expect(check=equals("reply_markup", KEYBOARD)),
    ),
    Call(
        "editMessageText/channel_post",
        "editMessageText",
        lambda c: {"chat_id": c["channel"], "message_id": c["post"], "text": "A post, edited"},
        Expect(check=present("edit_date")),
    ),
    Call(
        "editMessageText/not_modified",
        "editMessageText",
        lambda c: {
            "chat_id": c["user"],
            "message_id": c["kb_msg"],
            "text": "Pick again",
            "reply_markup": KEYBOARD,
        },
        bad(
            "message is not modified: specified new message content and reply markup are "
            "exactly the same as a current content and reply markup of the message"
        ),
    ),
    Call(
        "editMessageText/missing",
        "editMessageText",
        lambda c: {"chat_id": c["user"], "message_id": 99999, "text": "x"},
        bad("message to edit not found"),
    ),
    Call(
        "editMessageText/not_own",
        "editMessageText",
        lambda c: {"chat_id": c["user"], "message_id": c["user_msg"], "text": "x"},
        bad("message can't be edited"),
    ),
    Call(
        "editMessageReplyMarkup/typical",
        "editMessageReplyMarkup",
        lambda c: {
            "chat_id": c["user"],
            "message_id": c["msg"],
            "reply_markup": {"inline_keyboard": [[{"text": "Go", "callback_data": "go"}]]},
        },
    ),
    Call(
        "editMessageReplyMarkup/remove",
        "editMessageReplyMarkup",
        lambda c: {"chat_id": c["user"], "message_id": c["msg"]},
    ),
    Call(
        "deleteMessage/typical",
        "deleteMessage",
        lambda c: {"chat_id": c["user"], "message_id": c["msg"]},
        Expect(check=equals("", True)),
    ),
    Call(
        "deleteMessage/again",
        "deleteMessage",
        lambda c: {"chat_id": c["user"], "message_id": c["msg"]},
        bad("message to delete not found"),
    ),
    Call(
        "deleteMessage/channel_post",
        "deleteMessage",
        lambda c: {"chat_id": c["channel"], "message_id": c["post"]},
    ),
    # Callback queries.
    Call(
        "answerCallbackQuery/typical",
        "answerCallbackQuery",
        lambda c: {"callback_query_id": c["query"]},
        before=_press,
    ),
    Call(
        "answerCallbackQuery/alert",
        "answerCallbackQuery",
        lambda c: {"callback_query_id": c["query"], "text": "Done!", "show_alert": True},
        before=_press,
    ),
    Call(
        "answerCallbackQuery/answered",
        "answerCallbackQuery",
        lambda c: {"callback_query_id": c["query"]},
        bad("query is too old and response timeout expired or query ID is invalid"),
    ),
)
