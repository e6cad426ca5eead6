"""Bot API methods about chats: getChat, members, administrators, invite links and join
requests, with the access rules (and errors) of private chats, channels and supergroups."""

from __future__ import annotations

from typing import Any

from sponsorbot.simulator.actions import resolve_request
from sponsorbot.simulator.errors import (
    CHAT_NOT_FOUND,
    HIDE_REQUESTER_MISSING,
    INVITE_HASH_EXPIRED,
    MEMBER_LIST_INACCESSIBLE,
    USER_NOT_FOUND,
    bad_request,
    forbidden,
)
from sponsorbot.simulator.params import Params
from sponsorbot.simulator.shapes import (
    chat_full_json,
    invite_link_json,
    member_json,
    member_or_left,
    private_full_json,
    private_member,
)
from sponsorbot.simulator.state import Handler, Simulator
from sponsorbot.simulator.world import Account, Bot, Chat

# Telegram's limits on invite links: a name of 32 characters, at most 99999 members.
MAX_LINK_NAME = 32
MAX_MEMBER_LIMIT = 99999
NO_INVITE_RIGHTS = "not enough rights to manage chat invite link"
NO_REQUEST_RIGHTS = "not enough rights to manage chat join requests"


def visible_chat(sim: Simulator, bot: Bot, ref: int | str, access: str = "read") -> Chat:
    """A channel or supergroup the bot may reach for ``access`` (read, edit or write).

    Public chats can be read by anyone; writing or editing needs membership. A private chat
    the bot never was in is ``chat not found``; one it has left, ``not a member``.
    """
    chat = sim.world.chat_by_ref(ref)
    if chat is None or (chat.username is None and bot.id not in chat.bots_seen):
        raise bad_request(CHAT_NOT_FOUND)
    status = chat.status_of(bot.id)
    noun = "channel" if chat.type == "channel" else "supergroup"
    if status == "kicked":
        raise forbidden(f"bot was kicked from the {noun} chat")
    if status == "left" and (chat.username is None or access != "read"):
        raise forbidden(f"bot is not a member of the {noun} chat")
    return chat


def private_peer(sim: Simulator, bot: Bot, ref: int) -> Account:
    """The person of a private chat the bot knows (one who started it, or the bot itself)."""
    account = sim.world.accounts.get(ref)
    if account is None or (ref not in bot.dialogs and ref != bot.id):
        raise bad_request(CHAT_NOT_FOUND)
    return account


def _is_private(ref: int | str) -> bool:
    return isinstance(ref, int) and ref > 0


def _account(sim: Simulator, user_id: int) -> Account:
    account = sim.world.accounts.get(user_id)
    if account is None:
        raise bad_request(USER_NOT_FOUND)
    return account


async def get_chat(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getChat: ChatFullInfo."""
    ref = p.chat_ref()
    if _is_private(ref):
        return private_full_json(private_peer(sim, bot, int(ref)))
    return chat_full_json(visible_chat(sim, bot, ref), bot)


async def get_chat_member(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getChatMember: anyone may be asked about in a supergroup, in a channel only by an
    administrator (the bot may always ask about itself)."""
    user_id = p.user_id()
    ref = p.chat_ref()
    if _is_private(ref):
        peer = private_peer(sim, bot, int(ref))
        if user_id not in (peer.id, bot.id):
            raise bad_request("member not found")
        return private_member(_account(sim, user_id))
    chat = visible_chat(sim, bot, ref)
    account = _account(sim, user_id)
    if account.id != bot.id and chat.type == "channel" and not chat.is_admin(bot.id):
        raise bad_request(MEMBER_LIST_INACCESSIBLE)
    return member_or_left(sim.world, chat, account, bot.id)


async def get_chat_administrators(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getChatAdministrators: creator and administrators, the bot itself the only bot."""
    ref = p.chat_ref()
    if _is_private(ref):
        private_peer(sim, bot, int(ref))
        raise bad_request("there are no administrators in the private chat")
    chat = visible_chat(sim, bot, ref)
    if chat.type == "channel" and not chat.is_admin(bot.id):
        raise bad_request(MEMBER_LIST_INACCESSIBLE)
    # The server leaves other bots out unless asked for them (an undocumented return_bots).
    others = p.flag("return_bots")
    accounts = sim.world.accounts
    return [
        member_json(sim.world, chat, m, bot.id)
        for m in chat.members.values()
        if m.status in ("creator", "administrator")
        and (others or m.account_id == bot.id or not accounts[m.account_id].is_bot)
    ]


async def get_chat_member_count(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getChatMemberCount: a private chat has two members (one, the bot's chat with itself)."""
    ref = p.chat_ref()
    if _is_private(ref):
        return 1 if private_peer(sim, bot, int(ref)).id == bot.id else 2
    chat = visible_chat(sim, bot, ref)
    return sum(1 for m in chat.members.values() if m.status != "kicked")


def _reach(sim: Simulator, bot: Bot, ref: int | str) -> Chat | None:
    """The chat the bot may write to (None for a private chat), or the error why not."""
    if _is_private(ref):
        private_peer(sim, bot, int(ref))
        return None
    return visible_chat(sim, bot, ref, "write")


def _managed(chat: Chat | None, bot: Bot, no_rights: str) -> Chat:
    """The chat if the bot may manage its invite links (or join requests), else the error."""
    if chat is None:
        if no_rights == NO_REQUEST_RIGHTS:
            raise bad_request("the chat can't have join requests")
        raise bad_request("can't invite members to a private chat")
    if not chat.has_right(bot.id, "can_invite_users"):
        raise bad_request(no_rights)
    return chat


async def create_chat_invite_link(sim: Simulator, bot: Bot, p: Params) -> Any:
    """createChatInviteLink: a named, limited or join-request link made by the bot."""
    # The server clamps the numbers and cuts the name short; it refuses none of them.
    name = (p.opt_str("name") or "").strip()[:MAX_LINK_NAME]
    expire_date = max(0, p.integer("expire_date"))
    member_limit = min(max(0, p.integer("member_limit")), MAX_MEMBER_LIMIT + 1)
    creates_join_request = p.flag("creates_join_request")
    reached = _reach(sim, bot, p.chat_ref())
    if creates_join_request and member_limit:
        raise bad_request(
            "member limit can't be specified for links requiring administrator approval"
        )
    chat = _managed(reached, bot, NO_INVITE_RIGHTS)
    if member_limit > MAX_MEMBER_LIMIT:
        raise bad_request("USAGE_LIMIT_INVALID")
    link = sim.world.new_invite_link(chat, bot.id)
    link.name = name or None
    link.expire_date = expire_date or None
    link.member_limit = member_limit or None
    link.creates_join_request = creates_join_request
    return invite_link_json(sim.world, link, bot.id)


async def revoke_chat_invite_link(sim: Simulator, bot: Bot, p: Params) -> Any:
    """revokeChatInviteLink: a revoked primary link is replaced by a new one."""
    chat = _managed(_reach(sim, bot, p.chat_ref()), bot, NO_INVITE_RIGHTS)
    url = p.opt_str("invite_link")
    if url is None:
        raise bad_request("invite link must be non-empty")
    link = chat.invite_links.get(url)
    if link is None or link.is_revoked:
        raise bad_request(INVITE_HASH_EXPIRED)
    link.is_revoked = True
    if link.is_primary:
        _new_primary(sim, chat, bot)
    return invite_link_json(sim.world, link, bot.id)


def _new_primary(sim: Simulator, chat: Chat, bot: Bot) -> str:
    old = chat.invite_links.get(chat.primary_link or "")
    if old is not None:
        old.is_revoked = True
        old.is_primary = False
    link = sim.world.new_invite_link(chat, bot.id)
    link.is_primary = True
    chat.primary_link = link.link
    return link.link


async def export_chat_invite_link(sim: Simulator, bot: Bot, p: Params) -> Any:
    """exportChatInviteLink: a new primary link (the old one stops working)."""
    chat = _managed(_reach(sim, bot, p.chat_ref()), bot, NO_INVITE_RIGHTS)
    return _new_primary(sim, chat, bot)


async def _resolve(sim: Simulator, bot: Bot, p: Params, approve: bool) -> Any:
    user_id = p.user_id()
    chat = _managed(_reach(sim, bot, p.chat_ref()), bot, NO_REQUEST_RIGHTS)
    account = _account(sim, user_id)
    if account.id not in chat.join_requests:
        raise bad_request(HIDE_REQUESTER_MISSING)
    resolve_request(sim.world, chat, account, bot.account, approve)
    return True


async def approve_chat_join_request(sim: Simulator, bot: Bot, p: Params) -> Any:
    """approveChatJoinRequest: the user becomes a member (a chat_member update follows)."""
    return await _resolve(sim, bot, p, approve=True)


async def decline_chat_join_request(sim: Simulator, bot: Bot, p: Params) -> Any:
    """declineChatJoinRequest."""
    return await _resolve(sim, bot, p, approve=False)


METHODS: dict[str, Handler] = {
    "getchat": get_chat,
    "getchatmember": get_chat_member,
    "getchatadministrators": get_chat_administrators,
    "getchatmembercount": get_chat_member_count,
    "createchatinvitelink": create_chat_invite_link,
    "revokechatinvitelink": revoke_chat_invite_link,
    "exportchatinvitelink": export_chat_invite_link,
    "approvechatjoinrequest": approve_chat_join_request,
    "declinechatjoinrequest": decline_chat_join_request,
}
