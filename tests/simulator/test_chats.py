"""getChat, chat members, administrators, invite links and join requests."""

from __future__ import annotations

from typing import Any

import pytest

from sponsorbot.simulator.client import SimulatorError
from tests.simulator.conftest import Scene, Sim

CHANNEL_RIGHT_FIELDS = {
    "can_be_edited",
    "is_anonymous",
    "can_manage_chat",
    "can_delete_messages",
    "can_manage_video_chats",
    "can_restrict_members",
    "can_promote_members",
    "can_change_info",
    "can_invite_users",
    "can_post_stories",
    "can_edit_stories",
    "can_delete_stories",
    "can_send_welcome_messages",
    "can_post_messages",
    "can_edit_messages",
    "can_manage_direct_messages",
}


async def watch_members(sim: Sim, scene: Scene) -> None:
    """Ask for chat_member updates, as the product does."""
    await sim.updates(scene.token, allowed_updates=["message", "callback_query", "chat_member"])


async def test_get_chat(sim: Sim, scene: Scene) -> None:
    info = await sim.ok(scene.token, "getChat", chat_id="@news")
    assert info["id"] == scene.channel["id"] and info["type"] == "channel"
    assert info["title"] == "News" and info["username"] == "news"
    assert info["invite_link"].startswith("https://t.me/+")
    private = await sim.ok(scene.token, "getChat", chat_id=scene.user["id"])
    assert private["type"] == "private" and private["first_name"] == "Ann"
    secret = await sim.control.create_channel("Secret", private=True)
    assert await sim.error(scene.token, "getChat", chat_id=secret["id"]) == (
        400,
        "Bad Request: chat not found",
    )


async def test_chat_member_statuses(sim: Sim, scene: Scene) -> None:
    cid, uid = scene.channel["id"], scene.user["id"]

    async def status(user_id: int) -> dict[str, Any]:
        result: dict[str, Any] = await sim.ok(
            scene.token, "getChatMember", chat_id=cid, user_id=user_id
        )
        return result

    assert (await status(uid)) == {"user": (await status(uid))["user"], "status": "left"}
    await sim.control.join(uid, cid)
    assert (await status(uid))["status"] == "member"
    await sim.control.set_status(cid, uid, "restricted")
    restricted = await status(uid)
    assert restricted["status"] == "restricted" and restricted["is_member"] is True
    assert restricted["can_send_messages"] is False and restricted["until_date"] == 0
    await sim.control.set_status(cid, uid, "kicked")
    assert (await status(uid)) | {"user": None} == {
        "user": None,
        "status": "kicked",
        "until_date": 0,
    }
    creator = await status(scene.channel["owner_id"])
    assert creator["status"] == "creator" and creator["is_anonymous"] is False
    me = await status(scene.bot["id"])
    assert me["status"] == "administrator"
    assert set(me) - {"user", "status"} == CHANNEL_RIGHT_FIELDS
    assert me["can_invite_users"] is True and me["can_promote_members"] is False


async def test_member_rules_and_errors(sim: Sim, scene: Scene) -> None:
    other = await sim.control.create_channel("Other", username="other")
    uid = scene.user["id"]
    assert await sim.error(scene.token, "getChatMember", chat_id=other["id"], user_id=uid) == (
        400,
        "Bad Request: member list is inaccessible",
    )
    # Asking about itself works where the bot is nobody.
    assert (
        await sim.ok(scene.token, "getChatMember", chat_id=other["id"], user_id=scene.bot["id"])
    )["status"] == "left"
    assert await sim.error(
        scene.token, "getChatMember", chat_id=scene.channel["id"], user_id=12345
    ) == (400, "Bad Request: user not found")
    assert await sim.error(scene.token, "getChatMember", chat_id="@nobody", user_id=uid) == (
        400,
        "Bad Request: chat not found",
    )
    admins = await sim.ok(scene.token, "getChatAdministrators", chat_id=scene.channel["id"])
    assert sorted(a["status"] for a in admins) == ["administrator", "creator"]
    assert await sim.error(scene.token, "getChatAdministrators", chat_id=other["id"]) == (
        400,
        "Bad Request: member list is inaccessible",
    )


async def test_promote_demote_and_remove_send_my_chat_member(sim: Sim, scene: Scene) -> None:
    cid, bid = scene.channel["id"], scene.bot["id"]
    await sim.control.remove_admin(cid, bid)
    await sim.control.make_admin(cid, bid, can_invite_users=False)
    await sim.control.remove_admin(cid, bid, remove=True)
    updates = await sim.drain(scene.token)
    changes = [
        (
            u["my_chat_member"]["old_chat_member"]["status"],
            u["my_chat_member"]["new_chat_member"]["status"],
        )
        for u in updates
    ]
    assert changes == [
        ("administrator", "member"),
        ("member", "administrator"),
        ("administrator", "left"),
    ]
    promoted = updates[1]["my_chat_member"]
    assert promoted["new_chat_member"]["can_invite_users"] is False
    assert promoted["chat"]["id"] == cid and promoted["from"]["id"] == scene.channel["owner_id"]


async def test_invite_link_join_carries_the_link_name(sim: Sim, scene: Scene) -> None:
    await watch_members(sim, scene)
    cid, uid = scene.channel["id"], scene.user["id"]
    link = await sim.ok(
        scene.token, "createChatInviteLink", chat_id=cid, name="spring campaign", member_limit=10
    )
    assert link["name"] == "spring campaign" and link["member_limit"] == 10
    assert link["creator"]["id"] == scene.bot["id"] and link["is_primary"] is False
    assert await sim.control.join(uid, invite_link=link["invite_link"]) == "member"
    [update] = await sim.drain(scene.token)
    change = update["chat_member"]
    assert change["invite_link"]["name"] == "spring campaign"
    assert change["invite_link"]["invite_link"] == link["invite_link"]
    assert change["old_chat_member"]["status"] == "left"
    assert change["new_chat_member"]["status"] == "member"
    assert "via_join_request" not in change
    await sim.control.leave(uid, cid)
    [update] = await sim.drain(scene.token)
    assert update["chat_member"]["new_chat_member"]["status"] == "left"
    assert "invite_link" not in update["chat_member"]


async def test_chat_member_only_for_bots_that_ask(sim: Sim, scene: Scene) -> None:
    await sim.control.join(scene.user["id"], scene.channel["id"])
    assert await sim.drain(scene.token) == []


async def test_revoke_and_export(sim: Sim, scene: Scene) -> None:
    cid = scene.channel["id"]
    link = await sim.ok(scene.token, "createChatInviteLink", chat_id=cid)
    revoked = await sim.ok(
        scene.token, "revokeChatInviteLink", chat_id=cid, invite_link=link["invite_link"]
    )
    assert revoked["is_revoked"] is True
    stranger = await sim.control.create_user("Cy")
    with pytest.raises(SimulatorError, match="INVITE_HASH_EXPIRED"):
        await sim.control.join(stranger["id"], invite_link=link["invite_link"])
    old = (await sim.ok(scene.token, "getChat", chat_id=cid))["invite_link"]
    new = await sim.ok(scene.token, "exportChatInviteLink", chat_id=cid)
    assert new != old and new.startswith("https://t.me/+")
    assert (await sim.ok(scene.token, "getChat", chat_id=cid))["invite_link"] == new


async def test_join_requests(sim: Sim, scene: Scene) -> None:
    await watch_members(sim, scene)
    await sim.updates(scene.token, allowed_updates=["message", "chat_member", "chat_join_request"])
    cid = scene.channel["id"]
    link = await sim.ok(
        scene.token, "createChatInviteLink", chat_id=cid, name="vip", creates_join_request=True
    )
    # The server leaves the count out while it is zero.
    assert "pending_join_request_count" not in link
    ann, bo = scene.user["id"], (await sim.control.create_user("Bo"))["id"]
    assert await sim.control.join(ann, invite_link=link["invite_link"]) == "pending"
    await sim.control.request_join(bo, cid)
    first, second = await sim.drain(scene.token)
    request = first["chat_join_request"]
    assert request["from"]["id"] == ann and request["user_chat_id"] == ann
    assert request["invite_link"]["name"] == "vip"
    assert "invite_link" not in second["chat_join_request"]
    assert await sim.ok(scene.token, "approveChatJoinRequest", chat_id=cid, user_id=ann)
    assert await sim.ok(scene.token, "declineChatJoinRequest", chat_id=cid, user_id=bo)
    [joined] = await sim.drain(scene.token)
    assert joined["chat_member"]["invite_link"]["name"] == "vip"
    assert joined["chat_member"]["new_chat_member"]["status"] == "member"
    assert await sim.error(scene.token, "approveChatJoinRequest", chat_id=cid, user_id=bo) == (
        400,
        "Bad Request: HIDE_REQUESTER_MISSING",
    )
    member = await sim.ok(scene.token, "getChatMember", chat_id=cid, user_id=bo)
    assert member["status"] == "left"


async def test_direct_join_request_is_flagged(sim: Sim, scene: Scene) -> None:
    await watch_members(sim, scene)
    group = await sim.control.create_channel(
        "Club", username="club", join_request=True, chat_type="supergroup"
    )
    await sim.control.make_admin(group["id"], scene.bot["id"])
    assert (await sim.ok(scene.token, "getChat", chat_id="@club"))["join_by_request"] is True
    assert await sim.control.join(scene.user["id"], group["id"]) == "pending"
    await sim.drain(scene.token)
    await sim.ok(
        scene.token, "approveChatJoinRequest", chat_id=group["id"], user_id=scene.user["id"]
    )
    [joined] = await sim.drain(scene.token)
    assert joined["chat_member"]["via_join_request"] is True
    assert "invite_link" not in joined["chat_member"]


async def test_invite_links_need_admin_rights(sim: Sim, scene: Scene) -> None:
    other = await sim.control.create_channel("Other", username="other")
    await sim.control.make_admin(other["id"], scene.bot["id"], can_invite_users=False)
    code, description = await sim.error(scene.token, "createChatInviteLink", chat_id=other["id"])
    # tdlib's can_manage_dialog_invite_links refuses before asking Telegram.
    assert (code, description) == (400, "Bad Request: not enough rights to manage chat invite link")


async def test_open_url_follows_start_links_channels_and_invite_links(
    sim: Sim, scene: Scene
) -> None:
    await watch_members(sim, scene)
    uid = scene.user["id"]
    opened = await sim.control.open_url(uid, "https://t.me/gate_bot?start=xyz")
    assert opened["action"] == "start"
    [update] = await sim.drain(scene.token)
    assert update["message"]["text"] == "/start xyz"
    assert (await sim.control.open_url(uid, "https://t.me/news"))["status"] == "member"
    secret = await sim.control.create_channel("Secret", private=True)
    await sim.control.make_admin(secret["id"], scene.bot["id"])
    link = await sim.ok(scene.token, "createChatInviteLink", chat_id=secret["id"], name="ad")
    assert (await sim.control.open_url(uid, link["invite_link"]))["status"] == "member"
    kinds = [next(k for k in u if k != "update_id") for u in await sim.drain(scene.token)]
    # my_chat_member is not in the allowed_updates watch_members asked for.
    assert kinds == ["chat_member", "chat_member"]
    newcomer = await sim.control.create_user("Di")
    with pytest.raises(SimulatorError, match="invite link"):
        await sim.control.join(newcomer["id"], secret["id"])
