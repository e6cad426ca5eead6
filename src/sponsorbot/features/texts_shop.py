"""The ad shop's texts to advertisers, in English and Persian (the owner can override them like
the visitor texts). Values in braces are filled in by the shop; amounts are already formatted."""

from __future__ import annotations

SHOP_TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "shop_button": "📣 Advertise here",
        "shop_closed": "This bot does not take ads at the moment.",
        "shop_menu": "<b>Advertise in this bot</b>\nChoose what to book (prices in USDT):",
        "shop_empty": "There is nothing to book right now. Please come back later.",
        "shop_product_button": "{title} · {price} USDT",
        "shop_ask_channel": (
            "Send your channel: its @username, a t.me link, or forward a post from it.\n"
            "First make this bot an administrator of the channel with the right to invite "
            "users, so it can check who joins. /cancel stops."
        ),
        "shop_ask_post": (
            "Send the post as it should go out: a text, or a photo or video with a caption.\n"
            "For buttons, end it with lines like\n<code>Button text - https://example.com</code>\n"
            "/cancel stops."
        ),
        "shop_ask_banner": (
            "Send the banner: its text on the first line and its link on the second.\n"
            "/cancel stops."
        ),
        "shop_bad_material": "This cannot be used: {reason}\nPlease send it again, or /cancel.",
        "shop_summary": "<b>Your order</b>\n{product}: {price} USDT\n{material}\n\nSubmit it?",
        "shop_submit_button": "Submit ✅",
        "shop_cancel_button": "Cancel",
        "shop_submitted": (
            "Order #{order} is submitted. You will get the owner's answer here, "
            "with the payment details once it is approved."
        ),
        "shop_cancelled": "Cancelled. /advertise starts again.",
        "shop_nothing_open": "Nothing to cancel.",
        "shop_already_submitted": (
            "Order #{order} is already submitted. /orders shows where it stands."
        ),
        "shop_summary_closed": "This summary is closed. /advertise starts a new order.",
        "shop_rejected": "Order #{order} was not accepted: {reason}",
        "shop_change_asked": (
            "Order #{order} needs a change before it can be approved: {reason}\n"
            "Please send the material again."
        ),
        "shop_pay": (
            "Order #{order} is approved. Please pay exactly {amounts} on TRON ({network}) to "
            "this address:\n<code>{address}</code>\n\nPay by {expires}, from any wallet. "
            "The last digits of the amount are your order's own: a transfer of exactly this "
            "amount is credited by itself, any other amount waits for the owner. Sending the "
            "transaction hash or its TronScan link here speeds it up. /orders shows this again."
        ),
        "shop_amount_usdt": "<code>{usdt}</code> <b>USDT</b> (TRC-20)",
        "shop_amount_trx": "<code>{trx}</code> <b>TRX</b> (at {rate} USDT per TRX)",
        "shop_or": " or ",
        "shop_qr_caption": "Scan to pay order #{order}: {address}",
        "shop_bad_hash": (
            "That is not a transaction hash. Send the 64-character hash (letters a-f and "
            "digits) or the transaction's TronScan link."
        ),
        "shop_checking": (
            "Checking transaction {hash}. You will get the answer here within a minute."
        ),
        "shop_already_checking": "Transaction {hash} is already being checked for this order.",
        "shop_already_counted": "Transaction {hash} is already counted for order #{order}.",
        "shop_not_payable": "You have no order waiting for payment.",
        "shop_too_many_hashes": (
            "Too many transaction hashes for now. Please wait for the answers about the ones "
            "you sent, and try again in an hour."
        ),
        "shop_too_many_orders": (
            "You already have {most} open orders. Please wait until one is paid, declined or "
            "cancelled before booking another."
        ),
        "shop_unconfirmed": (
            "Transaction {hash} is on the network but not confirmed yet. "
            "I will keep checking it for 15 minutes."
        ),
        "shop_credited": (
            "Received {amount} {coin} (counted as {credited} USDT) for order #{order}: "
            "{paid} of {price} USDT paid."
        ),
        "shop_credited_usdt": (
            "Received {amount} USDT for order #{order}: {paid} of {price} USDT paid."
        ),
        "shop_still_due": (
            "{left} USDT is still due. Please pay exactly {amounts} by {due}: the "
            "amount is new, with your order's own last digits."
        ),
        "shop_requoted": (
            "A TRX rate is kept for a day, so order #{order} has a new one: {rate} USDT per "
            "TRX. Please pay exactly {amounts}."
        ),
        "shop_held": (
            "Transaction {hash} brought {amount} {coin}, which is not the exact amount order "
            "#{order} asks for, so it is kept for the owner, who can assign it to your order. "
            "To be credited at once, pay exactly {amounts}."
        ),
        "shop_paid": "Order #{order} is paid in full. Thank you! Your ad starts now.",
        "shop_overpaid": "You paid {extra} USDT more than the price; the owner can see it.",
        "shop_payment_refused": "Transaction {hash} does not count for order #{order}: {reason}",
        "shop_reason_no_usdt": (
            "it moved no USDT or TRX that this shop takes (only the official USDT contract "
            "counts, not a token that is merely named USDT)."
        ),
        "shop_reason_wrong_address": "the coins went to {to}, not to the shop's address {address}.",
        "shop_reason_too_early": (
            "it was made on {block_time}, before your order was approved; "
            "an older payment cannot pay a new order."
        ),
        "shop_reason_failed": "it failed on the network, so no coins moved.",
        "shop_reason_already_used": "it has already paid an order.",
        "shop_reason_wrong_network": (
            "it is USDT of another TRON network; this shop takes {network}."
        ),
        "shop_reason_unknown": (
            "the {network} network does not know it (checked for 15 minutes). Check the hash "
            "and the network."
        ),
        "shop_reason_unconfirmed": "it was not confirmed within 15 minutes.",
        "shop_reason_returned": "the owner has given this transfer back.",
        "shop_reason_lookup_failed": (
            "the network could not be asked about it for a day; the owner can see why."
        ),
        "shop_reminder": (
            "Reminder: {left} USDT is still due for order #{order}, by {due}. Please pay "
            "exactly {amounts}."
        ),
        "shop_expired": "Order #{order} has expired without full payment. {paid}",
        "shop_expired_paid": "The {paid} USDT you paid is recorded; the owner will contact you.",
        "shop_started": "Your ad for order #{order} is running.",
        "shop_report_gate_slot": "Order #{order} is complete: {joins} people joined your channel.",
        "shop_report_broadcast": "Order #{order} is complete: your post reached {reached} people.",
        "shop_report_banner": "Order #{order} is complete: your banner was shown {shown} times.",
        "shop_refunded": "Order #{order} was refunded by the owner.",
        "shop_order_cancelled": "Order #{order} was cancelled. {reason}",
        "shop_banner_open": "Open",
        "shop_your_orders": "<b>Your orders</b>\n{orders}",
        "shop_no_orders": "You have no orders yet. /advertise books one.",
        "shop_state_submitted": "waiting for the owner's review",
        "shop_state_in_review": "a change was asked: send the material again",
        "shop_state_awaiting_payment": "approved, waiting for your payment",
        "shop_state_partly_paid": "partly paid",
        "shop_state_paid": "paid, starting",
        "shop_state_running": "running",
        "shop_state_completed": "completed",
        "shop_state_rejected": "not accepted",
        "shop_state_expired": "expired",
        "shop_state_cancelled": "cancelled",
        "shop_state_refunded": "refunded",
    },
    "fa": {
        "shop_button": "📣 تبلیغ در این ربات",
        "shop_closed": "این ربات فعلاً تبلیغ نمی‌پذیرد.",
        "shop_menu": "<b>تبلیغ در این ربات</b>\nچه چیزی رزرو می‌کنید؟ (قیمت‌ها به \u2066USDT\u2069):",
        "shop_empty": "فعلاً چیزی برای رزرو نیست. لطفاً بعداً سر بزنید.",
        "shop_product_button": "\u2068{title}\u2069 · \u2066{price} USDT\u2069",
        "shop_ask_channel": (
            "کانال خود را بفرستید: \u2066@\u2069نام‌کاربری، لینک \u2066t.me\u2069، "
            "یا یک پست از آن را فوروارد کنید.\n"
            "اول این ربات را با دسترسی «دعوت کاربران با پیوند» ادمین کانال کنید تا بتواند "
            "عضویت‌ها را بررسی کند. \u2066/cancel\u2069 لغو می‌کند."
        ),
        "shop_ask_post": (
            "پست را همان‌طور که باید فرستاده شود بفرستید: متن، یا عکس یا ویدیو با توضیح.\n"
            "برای دکمه، در پایان خطی مانند این بنویسید:\n"
            "<code>متن دکمه - \u2066https://example.com\u2069</code>\n"
            "\u2066/cancel\u2069 لغو می‌کند."
        ),
        "shop_ask_banner": (
            "بنر را بفرستید: متن آن در خط اول و لینک آن در خط دوم.\n\u2066/cancel\u2069 لغو می‌کند."
        ),
        "shop_bad_material": (
            "این قابل استفاده نیست: {reason}\nلطفاً دوباره بفرستید، یا \u2066/cancel\u2069."
        ),
        "shop_summary": (
            "<b>سفارش شما</b>\n\u2068{product}\u2069: \u2066{price} USDT\u2069\n{material}\n\n"
            "ثبت شود؟"
        ),
        "shop_submit_button": "ثبت ✅",
        "shop_cancel_button": "لغو",
        "shop_submitted": (
            "سفارش #{order} ثبت شد. پاسخ مالک همین‌جا می‌رسد و پس از تأیید، "
            "مشخصات پرداخت را دریافت می‌کنید."
        ),
        "shop_cancelled": "لغو شد. با \u2066/advertise\u2069 دوباره شروع کنید.",
        "shop_nothing_open": "چیزی برای لغو نیست.",
        "shop_already_submitted": (
            "سفارش #{order} پیش‌تر ثبت شده است. \u2066/orders\u2069 وضعیت آن را نشان می‌دهد."
        ),
        "shop_summary_closed": (
            "این خلاصه بسته شده است. با \u2066/advertise\u2069 سفارش تازه‌ای آغاز کنید."
        ),
        "shop_rejected": "سفارش #{order} پذیرفته نشد: {reason}",
        "shop_change_asked": (
            "سفارش #{order} پیش از تأیید به تغییر نیاز دارد: {reason}\n"
            "لطفاً محتوا را دوباره بفرستید."
        ),
        "shop_pay": (
            "سفارش #{order} تأیید شد. لطفاً دقیقاً {amounts} را در ترون ({network}) به "
            "این آدرس بپردازید:\n\u2066<code>{address}</code>\u2069\n\n"
            "تا \u2066{expires}\u2069 از هر کیف پولی بپردازید. رقم‌های آخر مبلغ مخصوص "
            "سفارش شماست: انتقالی با دقیقاً همین "
            "مبلغ خودبه‌خود ثبت می‌شود و هر مبلغ دیگری منتظر مالک می‌ماند. فرستادن هش تراکنش یا "
            "لینک \u2066TronScan\u2069 آن در همین‌جا کار را سریع‌تر می‌کند. "
            "\u2066/orders\u2069 این را دوباره نشان می‌دهد."
        ),
        "shop_amount_usdt": "\u2066<code>{usdt}</code> <b>USDT</b> (TRC-20)\u2069",
        "shop_amount_trx": (
            "\u2066<code>{trx}</code> <b>TRX</b>\u2069 "
            "(با نرخ \u2066{rate} USDT\u2069 برای هر \u2066TRX\u2069)"
        ),
        "shop_or": " یا ",
        "shop_qr_caption": "برای پرداخت سفارش #{order} اسکن کنید: \u2066{address}\u2069",
        "shop_bad_hash": (
            "این هش تراکنش نیست. هش ۶۴ نویسه‌ای (حروف \u2066a\u2069 تا \u2066f\u2069 و رقم) "
            "یا لینک \u2066TronScan\u2069 تراکنش را بفرستید."
        ),
        "shop_checking": (
            "تراکنش \u2066{hash}\u2069 در حال بررسی است. پاسخ تا یک دقیقه همین‌جا می‌رسد."
        ),
        "shop_already_checking": "تراکنش \u2066{hash}\u2069 برای این سفارش در حال بررسی است.",
        "shop_already_counted": "تراکنش \u2066{hash}\u2069 پیش‌تر برای سفارش #{order} حساب شده است.",
        "shop_not_payable": "سفارشی در انتظار پرداخت ندارید.",
        "shop_too_many_hashes": (
            "فعلاً هش تراکنش زیادی فرستاده‌اید. لطفاً منتظر پاسخ هش‌های فرستاده‌شده بمانید و "
            "یک ساعت دیگر دوباره امتحان کنید."
        ),
        "shop_too_many_orders": (
            "شما هم‌اکنون {most} سفارش باز دارید. لطفاً پیش از رزرو سفارش تازه صبر کنید تا "
            "یکی پرداخت، رد یا لغو شود."
        ),
        "shop_unconfirmed": (
            "تراکنش \u2066{hash}\u2069 در شبکه هست ولی هنوز تأیید نشده. "
            "تا ۱۵ دقیقه بررسی را ادامه می‌دهم."
        ),
        "shop_credited": (
            "\u2066{amount} {coin}\u2069 (معادل \u2066{credited} USDT\u2069) برای سفارش #{order} "
            "دریافت شد: \u2066{paid}\u2069 از \u2066{price} USDT\u2069 پرداخت شده."
        ),
        "shop_credited_usdt": (
            "\u2066{amount} USDT\u2069 برای سفارش #{order} دریافت شد: "
            "\u2066{paid}\u2069 از \u2066{price} USDT\u2069 پرداخت شده."
        ),
        "shop_still_due": (
            "\u2066{left} USDT\u2069 هنوز باقی است. لطفاً تا \u2066{due}\u2069 دقیقاً "
            "{amounts} بپردازید: مبلغ تازه است و رقم‌های آخرش مخصوص سفارش شماست."
        ),
        "shop_requoted": (
            "نرخ \u2066TRX\u2069 یک روز نگه داشته می‌شود، پس سفارش #{order} نرخ تازه‌ای دارد: "
            "\u2066{rate} USDT\u2069 برای هر \u2066TRX\u2069. لطفاً دقیقاً {amounts} بپردازید."
        ),
        "shop_held": (
            "تراکنش \u2066{hash}\u2069 مبلغ \u2066{amount} {coin}\u2069 آورده که مبلغ دقیق سفارش "
            "#{order} نیست، پس برای مالک نگه داشته شد تا آن را به سفارش شما بدهد. برای ثبت "
            "فوری، دقیقاً {amounts} بپردازید."
        ),
        "shop_paid": "سفارش #{order} کامل پرداخت شد. ممنون! تبلیغ شما اکنون شروع می‌شود.",
        "shop_overpaid": "\u2066{extra} USDT\u2069 بیش از قیمت پرداخت کرده‌اید؛ مالک آن را می‌بیند.",
        "shop_payment_refused": (
            "تراکنش \u2066{hash}\u2069 برای سفارش #{order} پذیرفته نیست: {reason}"
        ),
        "shop_reason_no_usdt": (
            "هیچ \u2066USDT\u2069 یا \u2066TRX\u2069 قابل قبولی جابه‌جا نکرده است (فقط قرارداد رسمی "
            "\u2066USDT\u2069 حساب است، نه توکنی که فقط نامش \u2066USDT\u2069 است)."
        ),
        "shop_reason_wrong_address": (
            "سکه‌ها به \u2066{to}\u2069 رفته‌اند، نه به آدرس فروشگاه \u2066{address}\u2069."
        ),
        "shop_reason_too_early": (
            "در \u2066{block_time}\u2069، پیش از تأیید سفارش شما انجام شده است؛ "
            "پرداخت قدیمی‌تر نمی‌تواند سفارش تازه را بپردازد."
        ),
        "shop_reason_failed": "در شبکه ناموفق بوده و سکه‌ای جابه‌جا نشده است.",
        "shop_reason_already_used": "پیش‌تر یک سفارش را پرداخت کرده است.",
        "shop_reason_wrong_network": (
            "\u2066USDT\u2069 شبکهٔ دیگری از ترون است؛ این فروشگاه {network} را می‌پذیرد."
        ),
        "shop_reason_unknown": (
            "{network} آن را نمی‌شناسد (۱۵ دقیقه بررسی شد). هش و شبکه را بررسی کنید."
        ),
        "shop_reason_unconfirmed": "در ۱۵ دقیقه تأیید نشد.",
        "shop_reason_returned": "مالک این انتقال را بازگردانده است.",
        "shop_reason_lookup_failed": "یک روز نشد از شبکه دربارهٔ آن پرسید؛ مالک علتش را می‌بیند.",
        "shop_reminder": (
            "یادآوری: \u2066{left} USDT\u2069 برای سفارش #{order} تا \u2066{due}\u2069 "
            "باقی است. لطفاً دقیقاً {amounts} بپردازید."
        ),
        "shop_expired": "مهلت سفارش #{order} بدون پرداخت کامل تمام شد. {paid}",
        "shop_expired_paid": (
            "\u2066{paid} USDT\u2069 پرداختی شما ثبت شده است؛ مالک با شما تماس می‌گیرد."
        ),
        "shop_started": "تبلیغ سفارش #{order} در حال اجراست.",
        "shop_report_gate_slot": "سفارش #{order} کامل شد: {joins} نفر عضو کانال شما شدند.",
        "shop_report_broadcast": "سفارش #{order} کامل شد: پست شما به {reached} نفر رسید.",
        "shop_report_banner": "سفارش #{order} کامل شد: بنر شما {shown} بار نمایش داده شد.",
        "shop_refunded": "مبلغ سفارش #{order} را مالک بازگرداند.",
        "shop_order_cancelled": "سفارش #{order} لغو شد. {reason}",
        "shop_banner_open": "باز کردن",
        "shop_your_orders": "<b>سفارش‌های شما</b>\n{orders}",
        "shop_no_orders": "هنوز سفارشی ندارید. با \u2066/advertise\u2069 رزرو کنید.",
        "shop_state_submitted": "در انتظار بررسی مالک",
        "shop_state_in_review": "تغییر خواسته شده: محتوا را دوباره بفرستید",
        "shop_state_awaiting_payment": "تأیید شده، در انتظار پرداخت شما",
        "shop_state_partly_paid": "بخشی پرداخت شده",
        "shop_state_paid": "پرداخت شده، در حال شروع",
        "shop_state_running": "در حال اجرا",
        "shop_state_completed": "کامل شده",
        "shop_state_rejected": "پذیرفته نشد",
        "shop_state_expired": "منقضی شده",
        "shop_state_cancelled": "لغو شده",
        "shop_state_refunded": "بازپرداخت شده",
    },
}
