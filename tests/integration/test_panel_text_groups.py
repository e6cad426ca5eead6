"""Bot settings' visitor texts: in groups (gate, uploaders, booking, payments, order states),
each text in exactly one, a changed text marked, a search box for panel.js, Save in reach."""

from __future__ import annotations

import re

from sponsorbot.features.texts import DEFAULTS
from sponsorbot.web.panel.routes_bot_settings import TEXT_GROUPS, TEXTS, text_group
from tests.integration.panel_kit import PanelApp, add_member, client, csrf_of, sign_in


def test_every_text_has_one_of_the_groups() -> None:
    groups = {g for g, _label in TEXT_GROUPS}
    assert {text_group(k) for k in TEXTS} == groups  # and no group is empty
    assert text_group("welcome") == "gate" and text_group("batch_added") == "uploader"
    assert text_group("shop_submitted") == "shop" and text_group("shop_pay") == "payments"
    assert text_group("shop_reason_too_early") == "payments"
    assert text_group("shop_state_running") == "states"
    assert set(TEXTS) <= set(DEFAULTS["en"])


async def test_the_texts_are_grouped_searchable_and_changed_ones_marked(panel: PanelApp) -> None:
    sim_bot = await panel.sim.create_bot("text_groups_bot")  # type: ignore[attr-defined]
    bot = await panel.engine.bots.add(sim_bot["token"], "polling")
    async with client(panel.app) as http:
        await sign_in(http, await add_member(panel.pool, "owner"))
        base = f"/bots/{bot['id']}/settings"
        csrf = await csrf_of(http, base)
        saved = await http.post(
            f"/bots/{bot['id']}/texts", data={"csrf": csrf, "en.welcome": "Hello there"}
        )
        assert saved.status_code == 303
        page = (await http.get(base)).text
        order = re.findall(r'<section class="text-group" data-group="(\w+)">', page)
        assert order == [g for g, _label in TEXT_GROUPS]
        # Each text once, under its group.
        for key in TEXTS:
            assert page.count(f'name="en.{key}"') == 1, key
        sections = dict(re.findall(r'data-group="(\w+)">(.*?)</section>', page, re.S))
        assert 'name="en.shop_pay"' in sections["payments"]
        assert 'name="en.welcome"' in sections["gate"]
        assert 'id="text-search"' in page and 'class="sticky-save"' in page
        welcome = re.search(r'<details class="text-block custom"[^>]*data-search="([^"]*)"', page)
        assert welcome is not None and "hello there" in welcome.group(1)
        assert page.count('class="text-block custom"') == 1
