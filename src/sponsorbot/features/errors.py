"""What a feature service raises when the owner's request cannot be done; the web layer maps
each class to an HTTP status, the bot-side handlers to a reply."""

from __future__ import annotations

import enum
from typing import Any


class Code(enum.StrEnum):
    """Every refusal's stable code: the owner API answers it as "code", and the panel shows
    the text it has for it (`web/panel/refusals.py`) in the viewer's language. A raise may name
    a member or its word; a test holds every code raised in `src/` to this list, and this list
    to the codes raised."""

    AUDIENCE = "audience"
    AUTO_DELETE_RANGE = "auto_delete_range"
    BAD_RANGE = "bad_range"
    BOT_EXISTS = "bot_exists"
    BOT_MISSING = "bot_missing"
    BOT_NOT_FOUND = "bot_not_found"
    BROADCAST_TITLE = "broadcast_title"
    BUTTON_URL = "button_url"
    BUTTONS = "buttons"
    CAMPAIGN_BOTS = "campaign_bots"
    CAMPAIGN_ENDS = "campaign_ends"
    CAMPAIGN_FINISHED = "campaign_finished"
    CAMPAIGN_GOAL = "campaign_goal"
    CAMPAIGN_MISSING = "campaign_missing"
    CAMPAIGN_NAME = "campaign_name"
    CAMPAIGN_OVERLAP = "campaign_overlap"
    CAMPAIGN_POSITION = "campaign_position"
    CAMPAIGN_RETENTION = "campaign_retention"
    CAMPAIGN_STATE = "campaign_state"
    CAMPAIGN_STATUS = "campaign_status"
    CAPTION_TOO_LONG = "caption_too_long"
    CHANNEL_REF = "channel_ref"
    CHAT_HIDDEN = "chat_hidden"
    EMPTY_FILE = "empty_file"
    FILE_ID = "file_id"
    GATE_FULL = "gate_full"
    GATE_TWICE = "gate_twice"
    LINK_BOT = "link_bot"
    MEDIA_KIND = "media_kind"
    MEMBER_EXISTS = "member_exists"
    NO_STORAGE_CHAT = "no_storage_chat"
    NO_TELEGRAM_ID = "no_telegram_id"
    NOT_DRAFT = "not_draft"
    ORDER_COIN = "order_coin"
    ORDER_STATE = "order_state"
    PAYMENT = "payment"
    PAYMENT_STATUS = "payment_status"
    POST_TEXT = "post_text"
    PREVIEW_REFUSED = "preview_refused"
    PRICES_UNAVAILABLE = "prices_unavailable"
    PRODUCT_DAYS = "product_days"
    PRODUCT_JOINS = "product_joins"
    PRODUCT_KIND = "product_kind"
    PRODUCT_PRICE = "product_price"
    PRODUCT_TITLE = "product_title"
    PRODUCT_TITLE_FA = "product_title_fa"
    QUIET_HOURS = "quiet_hours"
    REASON = "reason"
    REPORT_MISSING = "report_missing"
    REVOKE_ABOVE_RANK = "revoke_above_rank"
    RIGHTS_MISSING = "rights_missing"
    ROLE_TOO_HIGH = "role_too_high"
    SCHEDULE_MISSING = "schedule_missing"
    SCHEDULE_PAST = "schedule_past"
    SHOP_ADDRESS = "shop_address"
    SHOP_API_KEY = "shop_api_key"
    SHOP_COINS = "shop_coins"
    SHOP_FULL = "shop_full"
    SHOP_NETWORK = "shop_network"
    SHOP_PAY_WITHIN = "shop_pay_within"
    STARTED = "started"
    STORAGE_REFUSED = "storage_refused"
    TEXT_LENGTH = "text_length"
    TEXTS_INVALID = "texts_invalid"
    TOKEN_EXPIRY = "token_expiry"
    TOKEN_MALFORMED = "token_malformed"
    TOKEN_NAME = "token_name"
    TOKEN_REFUSED = "token_refused"
    TOO_LARGE = "too_large"
    TRANSFER_ADDRESS = "transfer_address"
    TRANSFER_STATE = "transfer_state"
    TX_HASH = "tx_hash"
    TX_HASH_KNOWN = "tx_hash_known"
    UNKNOWN_CHANNELS = "unknown_channels"
    UNKNOWN_ROLE = "unknown_role"
    VISITOR_MISSING = "visitor_missing"
    WEBHOOK_REFUSED = "webhook_refused"
    WEBHOOK_UNAVAILABLE = "webhook_unavailable"


class FeatureError(Exception):
    """A request that cannot be done; the message says why in words an owner understands."""

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        # Stable, for a translated text in the panel; the message is the English fallback.
        self.code = code
        self.details = details


class NotFound(FeatureError):
    """The thing named does not exist (for this bot)."""


class Conflict(FeatureError):
    """It exists already, or the current state forbids the change."""


class Invalid(FeatureError):
    """The input is well-formed but cannot be used (an unknown channel reference, ...)."""


class Refused(FeatureError):
    """Telegram refused what was asked (the bot is not an admin, a right is missing, ...)."""


class TooLarge(FeatureError):
    """An upload over the size limit."""
