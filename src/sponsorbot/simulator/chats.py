"""Bot API methods about chats: getChat, members, administrators, invite links and join
requests, with the access rules (and errors) of channels and supergroups."""

from __future__ import annotations

from typing import Any

from sponsorbot.simulator.actions import resolve_request
from sponsorbot.simulator.errors import (
    CHAT_ADMIN_REQUIRED,
    CHAT_NOT_FOUND,
    HIDE_REQUESTER_MISSING,
    INVITE_HASH_EXPIRED,
    MEMBER_LIST_INACCESSIBLE,
    USER_NOT_FOUND,
    bad_request,
)
from sponsorbot.simulator.params import Params
from sponsorbot.simulator.shapes import (
    chat_full_json,
    invite_link_json,
    member_json,
    member_or_left,
    private_full_json,
)
from sponsorbot.simulator.state import Handler, Simulator
from sponsorbot.simulator.world import Account, Bot, Chat


def visible_chat(sim: Simulator, bot: Bot, ref: int | str) -> Chat:
    """A channel or supergroup the bot can see: public ones always, private ones as a member."""
    chat = sim.world.chat_by_ref(ref)
    if chat is None or (chat.username is None and chat.status_of(bot.id) in ("left", "kicked")):
        raise bad_request(CHAT_NOT_FOUND)
    return chat


def managed_chat(sim: Simulator, bot: Bot, ref: int | str, right: str) -> Chat:
    """A chat where the bot is an administrator holding ``right``."""
    chat = visible_chat(sim, bot, ref)
    if not chat.has_right(bot.id, right):
        raise bad_request(CHAT_ADMIN_REQUIRED)
    return chat


def _account(sim: Simulator, p: Params) -> Account:
    account = sim.world.accounts.get(p.req_int("user_id"))
    if account is None:
        raise bad_request(USER_NOT_FOUND)
    return account


async def get_chat(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getChat: ChatFullInfo."""
    ref = p.chat_ref()
    if isinstance(ref, int) and ref > 0:
        account = sim.world.accounts.get(ref)
        if account is None or (ref not in bot.dialogs and ref != bot.id):
            raise bad_request(CHAT_NOT_FOUND)
        return private_full_json(account)
    return chat_full_json(sim.world, visible_chat(sim, bot, ref), bot)


async def get_chat_member(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getChatMember: the bot may ask about itself anywhere, about others as an admin."""
    ref = p.chat_ref()
    if isinstance(ref, int) and ref > 0:
        account = _account(sim, p)
        if ref not in bot.dialogs or account.id not in (ref, bot.id):
            raise bad_request(CHAT_NOT_FOUND)
        return {"user": account.json(), "status": "member"}
    chat = visible_chat(sim, bot, ref)
    account = _account(sim, p)
    if account.id != bot.id and not chat.is_admin(bot.id):
        raise bad_request(MEMBER_LIST_INACCESSIBLE)
    return member_or_left(sim.world, chat, account, bot.id)


async def get_chat_administrators(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getChatAdministrators: creator and administrators."""
    chat = visible_chat(sim, bot, p.chat_ref())
    if chat.type == "channel" and not chat.is_admin(bot.id):
        raise bad_request(MEMBER_LIST_INACCESSIBLE)
    return [
        member_json(sim.world, chat, m, bot.id)
        for m in chat.members.values()
        if m.status in ("creator", "administrator")
    ]


async def get_chat_member_count(sim: Simulator, bot: Bot, p: Params) -> Any:
    """getChatMemberCount."""
    chat = visible_chat(sim, bot, p.chat_ref())
    return sum(1 for m in chat.members.values() if m.status != "kicked")


async def create_chat_invite_link(sim: Simulator, bot: Bot, p: Params) -> Any:
    """createChatInviteLink: a named, limited or join-request link made by the bot."""
    chat = managed_chat(sim, bot, p.chat_ref(), "can_invite_users")
    name = p.opt_str("name")
    if name is not None and len(name) > 32:
        raise bad_request("invite link name is too long")
    member_limit = p.opt_int("member_limit")
    if member_limit is not None and not 1 <= member_limit <= 99999:
        raise bad_request("member limit must be between 1 and 99999")
    creates_join_request = p.flag("creates_join_request")
    if creates_join_request and member_limit is not None:
        raise bad_request(
            "member limit can't be specified for links requiring administrator approval"
        )
    link = sim.world.new_invite_link(chat, bot.id)
    link.name = name
    link.expire_date = p.opt_int("expire_date")
    link.member_limit = member_limit
    link.creates_join_request = creates_join_request
    return invite_link_json(sim.world, link, bot.id)


async def revoke_chat_invite_link(sim: Simulator, bot: Bot, p: Params) -> Any:
    """revokeChatInviteLink: a revoked primary link is replaced by a new one."""
    chat = managed_chat(sim, bot, p.chat_ref(), "can_invite_users")
    link = chat.invite_links.get(p.req_str("invite_link"))
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
    chat = managed_chat(sim, bot, p.chat_ref(), "can_invite_users")
    return _new_primary(sim, chat, bot)


async def _resolve(sim: Simulator, bot: Bot, p: Params, approve: bool) -> Any:
    chat = managed_chat(sim, bot, p.chat_ref(), "can_invite_users")
    account = _account(sim, p)
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
