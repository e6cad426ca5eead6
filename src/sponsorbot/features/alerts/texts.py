"""What the team reads in Telegram, in English and Persian (HTML parse mode).

These are the team's texts, not the visitors': an owner does not edit them per bot. Values are
escaped; in Persian every Latin run (@names, amounts with their unit, /commands, ids) sits in
an isolate (LRI … PDI) so that it keeps its own direction inside the sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sponsorbot.features.texts import escape

LRI, PDI = "\u2066", "\u2069"

TEAM_TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "order_review": (
            "🛒 <b>New order #{order}</b> to review\n{title} · {price} USDT\n"
            "From {advertiser} in @{bot}\n{material}"
        ),
        "order_resubmitted": (
            "🛒 <b>Order #{order} changed</b>: the advertiser sent new material\n"
            "{title} · {price} USDT\nFrom {advertiser} in @{bot}\n{material}"
        ),
        "payment_credited": (
            "💰 <b>Payment credited</b> to order #{order}: {amount} {coin} "
            "(counted as {credited} USDT), {paid} of {price} USDT paid."
        ),
        "payment_overpaid": (
            "💰 <b>Order #{order} is overpaid</b>: {paid} USDT received for a price of {price}. "
            "Decide on the panel whether to return the {extra} USDT extra."
        ),
        "payment_underpaid": (
            "⌛ <b>Order #{order} expired part paid</b>: {paid} of {price} USDT. Decide on the "
            "panel: return what was paid, or mark the order paid."
        ),
        "payment_unmatched": (
            "❓ <b>A payment needs your decision</b>: {amount} {coin} reached a shop's address "
            "and matches no order ({reason}). Assign it to an order or mark it returned on the "
            "panel."
        ),
        "bot_refused": (
            "⛔ <b>Telegram refused the token of @{bot}</b>: the bot stopped. Replace its token "
            "on the panel (Bot settings)."
        ),
        "channel_rights": (
            "⚠️ <b>@{bot} lost its rights in {channel}</b>, a channel of its gate ({problem}). "
            "Visitors cannot be checked there until it is an administrator again."
        ),
        "dead_updates": (
            "🧯 <b>@{bot}: {count} update(s) set aside</b> after their last attempt. "
            "Re-drive them once the cause is fixed."
        ),
        "given_up": (
            "🧯 <b>@{bot}: {count} message(s) given up</b> after hours of network errors. "
            "Re-drive sends them again."
        ),
        "tron_key": (
            "🔑 <b>TronGrid refused the API key</b> of @{bot}'s shop: payments are not checked "
            "until the key is replaced in the shop's settings."
        ),
        "campaign_reached": (
            "🎯 <b>Campaign “{name}” reached its goal</b>: {joins} joins of {goal}, {left} left."
        ),
        "campaign_ended": "🏁 <b>Campaign “{name}” ended</b>: {joins} joins, {left} left.",
        "broadcast_done": (
            "📣 <b>Broadcast “{title}” finished</b> in @{bot}: {sent} sent, {blocked} blocked "
            "the bot, {failed} failed."
        ),
        "digest": (
            "📊 <b>Yesterday, {day}</b>\nVisitors: {visitors} ({visitors_delta})\n"
            "Passed the gate: {passes} ({passes_delta})\nChannel joins: {joins} ({joins_delta})\n"
            "Revenue: {revenue} USDT ({revenue_delta})"
        ),
        "approve": "✅ Approve",
        "reject": "✖️ Reject",
        "change": "✏️ Ask for a change",
        "redrive": "🔁 Re-drive",
        "open": "Open in the panel",
        "linked": (
            "Linked: this chat gets the alerts of {name}'s panel account. Choose what you get "
            "on the panel's Notifications page; /unlink stops them."
        ),
        "link_bad": (
            "This link code is not valid or has expired. Make a new one on the panel's "
            "Notifications page."
        ),
        "link_private": "Send the link code in a private chat with the bot.",
        "unlinked": "Unlinked: this chat gets no more alerts.",
        "not_member": "This button is for the team's linked members.",
        "no_right": "Your role cannot do this.",
        "moved": "Order #{order} is already {state}: nothing changed.",
        "gone": "Order #{order} no longer exists.",
        "approved": "Approved by {name}: the payment request was sent.",
        "rejected": "Rejected by {name}: {reason}",
        "changed": "{name} asked for a change: {reason}",
        "ask_reject": "Why is order #{order} rejected? The advertiser reads your answer. /cancel",
        "ask_change": (
            "What should the advertiser change in order #{order}? They read your answer. /cancel"
        ),
        "reason_bad": "{problem} Send the reason again, or /cancel.",
        "reason_cancelled": "Cancelled: order #{order} is unchanged.",
        "refused": "Not done: {problem}",
        "redriven": "Re-driven by {name}: {updates} update(s) and {messages} message(s) queued.",
        "state_submitted": "waiting for review",
        "state_in_review": "back with the advertiser for a change",
        "state_other": "{state}",
        "none": "none",
        "up": "+{n}",
        "down": "−{n}",
        "same": "same as the day before",
        "no_before": "nothing the day before",
    },
    "fa": {
        "order_review": (
            "🛒 <b>سفارش تازهٔ #{order}</b> برای بررسی\n"
            "\u2068{title}\u2069 · \u2066{price} USDT\u2069\n"
            "از {advertiser} در \u2066@{bot}\u2069\n{material}"
        ),
        "order_resubmitted": (
            "🛒 <b>سفارش #{order} تغییر کرد</b>: آگهی‌دهنده محتوای تازه فرستاد\n"
            "\u2068{title}\u2069 · \u2066{price} USDT\u2069\n"
            "از {advertiser} در \u2066@{bot}\u2069\n{material}"
        ),
        "payment_credited": (
            "💰 <b>پرداخت برای سفارش #{order} ثبت شد</b>: \u2066{amount} {coin}\u2069 "
            "(معادل \u2066{credited} USDT\u2069)؛ \u2066{paid}\u2069 از \u2066{price} USDT\u2069 "
            "پرداخت شده."
        ),
        "payment_overpaid": (
            "💰 <b>سفارش #{order} بیش از قیمت پرداخت شده</b>: \u2066{paid} USDT\u2069 برای قیمت "
            "\u2066{price}\u2069. در پنل تصمیم بگیرید که \u2066{extra} USDT\u2069 اضافه "
            "بازگردانده شود یا نه."
        ),
        "payment_underpaid": (
            "⌛ <b>مهلت سفارش #{order} با پرداخت ناقص تمام شد</b>: \u2066{paid}\u2069 از "
            "\u2066{price} USDT\u2069. در پنل تصمیم بگیرید: آنچه پرداخت شده بازگردانده شود، یا "
            "سفارش پرداخت‌شده علامت بخورد."
        ),
        "payment_unmatched": (
            "❓ <b>یک پرداخت منتظر تصمیم شماست</b>: \u2066{amount} {coin}\u2069 به نشانی یک "
            "فروشگاه رسیده و با هیچ سفارشی جور نیست ({reason}). در پنل آن را به سفارشی نسبت "
            "دهید یا بازگردانده علامت بزنید."
        ),
        "bot_refused": (
            "⛔ <b>تلگرام توکن \u2066@{bot}\u2069 را نپذیرفت</b>: ربات متوقف شد. توکن آن را در "
            "پنل (تنظیمات ربات) عوض کنید."
        ),
        "channel_rights": (
            "⚠️ <b>\u2066@{bot}\u2069 دسترسی‌اش را در {channel} از دست داد</b>، کانالی از "
            "دروازهٔ آن ({problem}). تا دوباره ادمین کانال نشود، عضویت بازدیدکنندگان آنجا "
            "بررسی نمی‌شود."
        ),
        "dead_updates": (
            "🧯 <b>\u2066@{bot}\u2069: {count} به‌روزرسانی کنار گذاشته شد</b> پس از آخرین تلاش. "
            "پس از رفع علت، دوباره اجرا کنید."
        ),
        "given_up": (
            "🧯 <b>\u2066@{bot}\u2069: ارسال {count} پیام رها شد</b> پس از ساعت‌ها خطای شبکه. "
            "اجرای دوباره آن‌ها را می‌فرستد."
        ),
        "tron_key": (
            "🔑 <b>\u2066TronGrid\u2069 کلید \u2066API\u2069 فروشگاه \u2066@{bot}\u2069 "
            "را نپذیرفت</b>: تا "
            "کلید در تنظیمات فروشگاه عوض نشود، پرداخت‌ها بررسی نمی‌شوند."
        ),
        "campaign_reached": (
            "🎯 <b>کمپین «{name}» به هدفش رسید</b>: {joins} عضویت از {goal}، {left} ترک."
        ),
        "campaign_ended": "🏁 <b>کمپین «{name}» پایان یافت</b>: {joins} عضویت، {left} ترک.",
        "broadcast_done": (
            "📣 <b>ارسال همگانی «\u2068{title}\u2069» در \u2066@{bot}\u2069 تمام شد</b>: "
            "{sent} ارسال، "
            "{blocked} ربات را مسدود کرده‌اند، {failed} ناموفق."
        ),
        "digest": (
            "📊 <b>دیروز، {day}</b>\nبازدیدکنندگان: {visitors} ({visitors_delta})\n"
            "گذر از دروازه: {passes} ({passes_delta})\nعضویت در کانال‌ها: {joins} "
            "({joins_delta})\nدرآمد: \u2066{revenue} USDT\u2069 ({revenue_delta})"
        ),
        "approve": "✅ تأیید",
        "reject": "✖️ رد",
        "change": "✏️ درخواست تغییر",
        "redrive": "🔁 اجرای دوباره",
        "open": "باز کردن در پنل",
        "linked": (
            "پیوند برقرار شد: این گفتگو هشدارهای حساب پنل {name} را می‌گیرد. آنچه می‌گیرید را "
            "در صفحهٔ «اعلان‌ها»ی پنل انتخاب کنید؛ \u2066/unlink\u2069 آن‌ها را قطع می‌کند."
        ),
        "link_bad": (
            "این کد پیوند معتبر نیست یا منقضی شده. در صفحهٔ «اعلان‌ها»ی پنل کد تازه‌ای بسازید."
        ),
        "link_private": "کد پیوند را در گفتگوی خصوصی با ربات بفرستید.",
        "unlinked": "پیوند قطع شد: این گفتگو دیگر هشداری نمی‌گیرد.",
        "not_member": "این دکمه برای اعضای پیوندشدهٔ تیم است.",
        "no_right": "نقش شما اجازهٔ این کار را ندارد.",
        "moved": "سفارش #{order} اکنون {state} است: چیزی تغییر نکرد.",
        "gone": "سفارش #{order} دیگر وجود ندارد.",
        "approved": "{name} تأیید کرد: درخواست پرداخت فرستاده شد.",
        "rejected": "{name} رد کرد: {reason}",
        "changed": "{name} درخواست تغییر داد: {reason}",
        "ask_reject": (
            "چرا سفارش #{order} رد می‌شود؟ آگهی‌دهنده پاسخ شما را می‌خواند. \u2066/cancel\u2069"
        ),
        "ask_change": (
            "آگهی‌دهنده چه چیزی را در سفارش #{order} تغییر دهد؟ پاسخ شما را می‌خواند. "
            "\u2066/cancel\u2069"
        ),
        "reason_bad": "{problem} دلیل را دوباره بفرستید، یا \u2066/cancel\u2069.",
        "reason_cancelled": "لغو شد: سفارش #{order} تغییری نکرد.",
        "refused": "انجام نشد: {problem}",
        "redriven": (
            "{name} دوباره اجرا کرد: {updates} به‌روزرسانی و {messages} پیام در صف قرار گرفت."
        ),
        "state_submitted": "در انتظار بررسی",
        "state_in_review": "نزد آگهی‌دهنده برای تغییر",
        "state_other": "\u2066{state}\u2069",
        "none": "هیچ",
        "up": "\u2066+{n}\u2069",
        "down": "\u2066−{n}\u2069",
        "same": "برابر با روز پیش",
        "no_before": "روز پیش هیچ",
    },
}


def team_text(
    key: str, language: str, *, raw: Mapping[str, str] | None = None, **values: Any
) -> str:
    """The text `key` in `language` (English when unknown), values escaped, `raw` as built."""
    texts = TEAM_TEXTS.get(language) or TEAM_TEXTS["en"]
    fields = {k: escape(str(v)) for k, v in values.items()}
    fields.update(raw or {})
    return texts[key].format(**fields)


def isolate(text: str, language: str) -> str:
    """A Latin run (a name, an id) kept in its own direction inside a Persian sentence."""
    return f"{LRI}{text}{PDI}" if language == "fa" else text
