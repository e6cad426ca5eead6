"""The new-campaign form offers the channels the bots are known to administer, and a channel
check that fails in several bots names every one of them at once."""

from __future__ import annotations

from typing import Any

from tests.integration.panel_kit import PanelApp, add_member, client, csrf_of, sign_in


async def _bots(panel: PanelApp, *names: str) -> list[dict[str, Any]]:
    sim: Any = panel.sim
    made = []
    for name in names:
        bot = await sim.create_bot(name)
        added = await panel.engine.bots.add(bot["token"], "polling")
        made.append({**bot, "id": added["id"]})
    return made


async def test_the_form_lists_known_channels_and_every_bot_lacking_rights(
    panel: PanelApp,
) -> None:
    sim: Any = panel.sim
    first, second, third = await _bots(panel, "pick_a_bot", "pick_b_bot", "pick_c_bot")
    owner = await sim.create_user("Sponsor")
    known = await sim.create_channel("Cinema club", username="cinemaclub", owner_id=owner["id"])
    await sim.make_admin(known["id"], first["id"])
    await panel.services.channels.add(first["id"], "@cinemaclub")
    stranger = await sim.create_channel("Far away", username="faraway", owner_id=owner["id"])
    await sim.make_admin(stranger["id"], first["id"])
    async with client(panel.app) as http:
        await sign_in(http, await add_member(panel.pool, "owner"))
        page = (await http.get("/campaigns/new")).text
        assert '<option value="@cinemaclub">Cinema club</option>' in page
        assert "Channels your bots administer" in page and "Administrator" in page
        csrf = await csrf_of(http, "/campaigns/new")
        answer = await http.post(
            "/campaigns",
            data={
                "csrf": csrf,
                "name": "Both at once",
                "channel": "@faraway",
                "bot_ids": [str(b["id"]) for b in (first, second, third)],
                "goal_joins": "",
                "goal_kind": "joins",
                "ends_at": "",
                "retention_hours": "24",
                "position": "first",
            },
        )
        assert answer.status_code == 422
        assert "@pick_b_bot is not an administrator" in answer.text
        assert "@pick_c_bot is not an administrator" in answer.text
        error = answer.text.split('id="e-channel">')[1].split("</p>")[0]
        assert "@pick_b_bot" in error and "@pick_c_bot" in error and "@pick_a_bot" not in error
