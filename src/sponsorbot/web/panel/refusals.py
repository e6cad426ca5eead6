"""Every refusal code with its HTTP status and its text for owners, in one table.

A service raises a `FeatureError` with a `Code`; the owner API answers that code, and the panel
shows the code's text here in the viewer's language (the English is the catalogues' message id,
the Persian its translation in `locale/fa`). A text's `%(name)s` placeholders are filled with
its `values`, or by the panel from the refusal's details where they vary (`errors.describe`).
A test holds this table to `Code`: every code has a text in both catalogues, and the status of
the exception it is raised with (`API_STATUS`, which the API answers).
"""

from __future__ import annotations

from dataclasses import dataclass

from sponsorbot.features.accounts.api_tokens import MAX_LIFETIME
from sponsorbot.features.campaigns.service import MAX_RETENTION_HOURS
from sponsorbot.features.errors import (
    Code,
    Conflict,
    FeatureError,
    Invalid,
    NotFound,
    Refused,
    TooLarge,
)
from sponsorbot.features.shop.products import MAX_TITLE
from sponsorbot.features.shop.service import MAX_REASON
from sponsorbot.web.panel.i18n import N_

# The owner API's status for each kind of refusal.
NOT_FOUND, CONFLICT, INVALID, REFUSED, TOO_LARGE = 404, 409, 422, 400, 413
API_STATUS: dict[type[FeatureError], int] = {
    NotFound: NOT_FOUND,
    Conflict: CONFLICT,
    Invalid: INVALID,
    Refused: REFUSED,
    TooLarge: TOO_LARGE,
}
# The status of a panel page showing each kind: the API's, but 422 for a refusal.
PAGE_STATUS: dict[type[FeatureError], int] = {**API_STATUS, Refused: INVALID}


@dataclass(frozen=True, slots=True)
class Refusal:
    """A code's status in the owner API and its text (an English catalogue message)."""

    status: int
    text: str
    values: tuple[tuple[str, object], ...] = ()


_CHOOSE_STATUS = N_("Choose a status from the list.")
_NO_BOT = N_("This bot does not exist.")
_ROLE = N_("Choose a role no higher than your own.")

REFUSALS: dict[Code, Refusal] = {
    # Bots
    Code.TOKEN_MALFORMED: Refusal(
        INVALID,
        N_("This is not a bot token. It looks like 123456789:AAH… — copy it from @BotFather."),
    ),
    Code.TOKEN_REFUSED: Refusal(
        REFUSED,
        N_("Telegram refused this token. Check it in @BotFather, or create a new one."),
    ),
    Code.BOT_EXISTS: Refusal(CONFLICT, N_("This bot is already connected.")),
    Code.BOT_NOT_FOUND: Refusal(NOT_FOUND, _NO_BOT),
    Code.BOT_MISSING: Refusal(NOT_FOUND, _NO_BOT),
    Code.WEBHOOK_UNAVAILABLE: Refusal(
        INVALID,
        N_("Webhook mode needs a public https address (SPONSORBOT_PUBLIC_URL). Use polling."),
    ),
    Code.WEBHOOK_REFUSED: Refusal(
        REFUSED,
        N_(
            "Telegram refused the webhook. Check SPONSORBOT_PUBLIC_URL (HTTPS, a valid "
            "certificate)."
        ),
    ),
    # Channels and the gate
    Code.CHANNEL_REF: Refusal(
        INVALID, N_("Use @name, a t.me link, a post link or an id like -100…; channels only.")
    ),
    Code.CHAT_HIDDEN: Refusal(
        REFUSED,
        N_(
            "Telegram cannot show this chat to the bot. For a private channel, add the bot as "
            "an administrator first."
        ),
    ),
    # The campaign's check names the bots; this is the text without them (errors.describe).
    Code.RIGHTS_MISSING: Refusal(
        REFUSED,
        N_(
            "The bot lacks the right “Invite users via link” there: grant it in the "
            "channel's administrators, then add the channel again."
        ),
    ),
    Code.GATE_TWICE: Refusal(INVALID, N_("A channel appears twice in the gate.")),
    Code.GATE_FULL: Refusal(INVALID, N_("A gate holds at most %(n)s channels.")),
    Code.UNKNOWN_CHANNELS: Refusal(NOT_FOUND, N_("Add these channels to the bot first.")),
    Code.TEXTS_INVALID: Refusal(
        INVALID, N_("Some of these texts cannot be used: each says why beside it.")
    ),
    # Content
    Code.NO_STORAGE_CHAT: Refusal(
        CONFLICT, N_("Set the bot's storage chat first: uploaded files are kept there.")
    ),
    Code.EMPTY_FILE: Refusal(INVALID, N_("Choose a file that is not empty.")),
    Code.STORAGE_REFUSED: Refusal(
        REFUSED,
        N_(
            "Telegram refused the file in the storage chat. Check that the bot is an "
            "administrator there and may post."
        ),
    ),
    Code.TOO_LARGE: Refusal(
        TOO_LARGE, N_("The file is larger than %(mb)s MB, the most a bot may upload.")
    ),
    Code.CAPTION_TOO_LONG: Refusal(INVALID, N_("A caption holds up to 1024 characters.")),
    Code.TEXT_LENGTH: Refusal(INVALID, N_("Write the text to hand out (up to 4096 characters).")),
    Code.AUTO_DELETE_RANGE: Refusal(
        INVALID,
        N_(
            "Minutes from 0 (never) to 2820 (47 hours): Telegram lets a bot delete its "
            "messages only within 48 hours."
        ),
    ),
    # The team and its API tokens
    Code.TOKEN_NAME: Refusal(
        INVALID, N_("Name the token (1 to 100 characters), e.g. after the script using it.")
    ),
    Code.TOKEN_EXPIRY: Refusal(
        INVALID,
        N_("A token expires after 1 to %(n)s days."),
        (("n", MAX_LIFETIME.days),),
    ),
    Code.UNKNOWN_ROLE: Refusal(INVALID, _ROLE),
    Code.ROLE_TOO_HIGH: Refusal(CONFLICT, _ROLE),
    Code.REVOKE_ABOVE_RANK: Refusal(
        CONFLICT, N_("A token of a role above your own can only be revoked by a higher role.")
    ),
    Code.MEMBER_EXISTS: Refusal(CONFLICT, N_("This person is already a member of the team.")),
    # Alerts and statistics
    Code.LINK_BOT: Refusal(NOT_FOUND, N_("Choose one of the bots listed.")),
    Code.QUIET_HOURS: Refusal(INVALID, N_("Give both ends of the quiet hours, or neither.")),
    Code.VISITOR_MISSING: Refusal(NOT_FOUND, N_("This bot has never seen this person.")),
    Code.BAD_RANGE: Refusal(
        INVALID,
        N_("Give both days, From and To, at most %(n)s days apart."),
        (("n", 400),),
    ),
    # Campaigns
    Code.CAMPAIGN_NAME: Refusal(INVALID, N_("Give the campaign a name of 1 to 200 characters.")),
    Code.CAMPAIGN_GOAL: Refusal(
        INVALID, N_("The goal is a whole number of joins, at least 1 (or empty for none).")
    ),
    Code.CAMPAIGN_POSITION: Refusal(INVALID, N_("Choose first or last in the gate.")),
    Code.CAMPAIGN_RETENTION: Refusal(
        INVALID,
        N_("The retention window is 1 to %(n)s hours."),
        (("n", MAX_RETENTION_HOURS),),
    ),
    Code.CAMPAIGN_ENDS: Refusal(INVALID, N_("Choose an end date in the future, or none.")),
    Code.CAMPAIGN_BOTS: Refusal(INVALID, N_("Choose at least one bot for the campaign.")),
    Code.CAMPAIGN_STATUS: Refusal(INVALID, _CHOOSE_STATUS),
    Code.CAMPAIGN_MISSING: Refusal(NOT_FOUND, N_("This campaign does not exist.")),
    Code.CAMPAIGN_OVERLAP: Refusal(
        CONFLICT,
        N_("The campaign “%(name)s” already runs on this channel in one of these bots."),
    ),
    Code.CAMPAIGN_FINISHED: Refusal(CONFLICT, N_("A finished campaign cannot be changed.")),
    Code.CAMPAIGN_STATE: Refusal(CONFLICT, N_("The campaign cannot do that in its current state.")),
    Code.REPORT_MISSING: Refusal(
        NOT_FOUND, N_("This report link does not exist or was withdrawn.")
    ),
    # Broadcasts
    Code.BROADCAST_TITLE: Refusal(
        INVALID, N_("Give the broadcast a title of 1 to 200 characters.")
    ),
    Code.MEDIA_KIND: Refusal(
        INVALID, N_("Say whether the file is a photo, a video or a document.")
    ),
    Code.FILE_ID: Refusal(INVALID, N_("Give the media's Telegram file_id, or upload a file.")),
    Code.BUTTONS: Refusal(
        INVALID, N_("Up to 10 rows of up to 8 buttons, each with a text of 1 to 64 characters.")
    ),
    Code.BUTTON_URL: Refusal(
        INVALID, N_("A button's link is a whole address, such as https://example.com.")
    ),
    Code.POST_TEXT: Refusal(INVALID, N_("Telegram refuses this text: %(error)s")),
    Code.AUDIENCE: Refusal(
        INVALID, N_("Active within 1 to 3650 days; the language is English or Persian.")
    ),
    Code.SCHEDULE_PAST: Refusal(
        INVALID, N_("The scheduled time is in the past: choose a later one.")
    ),
    Code.SCHEDULE_MISSING: Refusal(INVALID, N_("Choose when to send it.")),
    Code.NO_TELEGRAM_ID: Refusal(
        INVALID, N_("Set your Telegram id in your account first: the preview is sent there.")
    ),
    Code.PREVIEW_REFUSED: Refusal(
        REFUSED,
        N_("Telegram refused the preview (%(error)s). Start the bot from your account first."),
    ),
    Code.STARTED: Refusal(CONFLICT, N_("A broadcast cannot be changed once it has started.")),
    Code.NOT_DRAFT: Refusal(CONFLICT, N_("Only a draft can be deleted.")),
    # The shop
    Code.SHOP_ADDRESS: Refusal(
        CONFLICT, N_("Set the shop's TRON address first, in the bot's Shop tab.")
    ),
    Code.SHOP_NETWORK: Refusal(INVALID, N_("Choose mainnet, Nile or Shasta.")),
    Code.SHOP_COINS: Refusal(INVALID, N_("Accept USDT, TRX or both.")),
    Code.SHOP_PAY_WITHIN: Refusal(INVALID, N_("The time to pay is 1 to 720 hours.")),
    Code.SHOP_API_KEY: Refusal(
        INVALID, N_("This TronGrid API key is not well-formed: no spaces, up to 200 characters.")
    ),
    Code.SHOP_FULL: Refusal(
        CONFLICT,
        N_("Every amount this address can ask for is taken by open orders: try again later."),
    ),
    Code.PRODUCT_KIND: Refusal(INVALID, N_("Choose what the product is.")),
    Code.PRODUCT_TITLE: Refusal(
        INVALID, N_("The title is 1 to %(n)s characters."), (("n", MAX_TITLE),)
    ),
    Code.PRODUCT_TITLE_FA: Refusal(INVALID, N_("Up to %(n)s characters."), (("n", MAX_TITLE),)),
    Code.PRODUCT_PRICE: Refusal(
        INVALID,
        N_("A price is more than 0 and below 1,000,000 USDT, with 6 decimal places at most."),
    ),
    Code.PRODUCT_JOINS: Refusal(INVALID, N_("A gate slot delivers 1 to 10,000,000 joins.")),
    Code.PRODUCT_DAYS: Refusal(INVALID, N_("A banner is shown for 1 to 365 days.")),
    Code.ORDER_STATE: Refusal(CONFLICT, N_("The order cannot do that in its current state.")),
    Code.ORDER_COIN: Refusal(CONFLICT, N_("This order takes no TRX.")),
    Code.REASON: Refusal(
        INVALID,
        N_("Write the advertiser a reason, up to %(n)s characters."),
        (("n", MAX_REASON),),
    ),
    Code.PRICES_UNAVAILABLE: Refusal(
        CONFLICT,
        N_(
            "No TRX price is available right now: approve again in a minute, or accept USDT "
            "only in the shop settings."
        ),
    ),
    Code.TX_HASH: Refusal(
        INVALID,
        N_("This is not a transaction hash: paste the 64-character hash or its TronScan link."),
    ),
    Code.TX_HASH_KNOWN: Refusal(CONFLICT, N_("This hash is already being checked for this order.")),
    Code.PAYMENT: Refusal(CONFLICT, N_("Only a turned-down hash can be checked again.")),
    Code.PAYMENT_STATUS: Refusal(INVALID, _CHOOSE_STATUS),
    Code.TRANSFER_STATE: Refusal(
        CONFLICT, N_("This transfer is not waiting for an order any more.")
    ),
    Code.TRANSFER_ADDRESS: Refusal(
        CONFLICT,
        N_("This transfer went to another address or network than the order's."),
    ),
}
