"""The ad shop: advertisers book products inside a bot, the owner approves, the advertiser pays
in USDT or TRX on TRON and sends the hash, a runner verifies it on TronGrid, and a paid order
starts its ad (a campaign, a broadcast or a banner) by itself.

It stands on the features it extends and fulfils through: the gate (its button and banners go
into the gate's hooks), campaigns and broadcasts (a paid ad is one of theirs, made by their own
services)."""

from __future__ import annotations

import asyncpg

from sponsorbot.engine.token_box import TokenBox
from sponsorbot.features.base import Feature, Job, Parts, Shared
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.broadcasts.service import BroadcastService
from sponsorbot.features.campaigns.service import CampaignService
from sponsorbot.features.gate.hooks import GateHooks
from sponsorbot.features.shop import in_gate, retention
from sponsorbot.features.shop.dialogue import Dialogue
from sponsorbot.features.shop.fulfil import Fulfilment
from sponsorbot.features.shop.runner import ShopRunner
from sponsorbot.features.shop.service import ShopService, reseal_keys
from sponsorbot.features.shop.watcher import ShopWatcher
from sponsorbot.tron.prices import PriceSources


def _service(shared: Shared) -> ShopService:
    """The shop's one service in this process (the panel's, the runner's, the team's buttons')."""
    engine = shared.engine
    settings = engine.settings
    made: list[PriceSources] = []

    def prices() -> PriceSources:
        # Made on first use: the HTTP session it shares belongs to a running event loop.
        if not made:
            made.append(
                PriceSources(
                    engine.api.session(),
                    settings.price_coingecko_url,
                    settings.price_kraken_url,
                    settings.price_binance_url,
                )
            )
        return made[0]

    return ShopService(
        engine.pool,
        engine.api,
        shared.required.get(BotsService),
        shared.config,
        TokenBox(settings.secret()),
        prices,
        engine.notifier,
        settings.tron_network.value,
        settings.allow_testnet,
    )


def setup(shared: Shared) -> Parts:
    """The advertiser's dialogue, the service, the runner, and the shop's part of the gate."""
    engine = shared.engine
    settings = engine.settings
    shop = _service(shared)
    box = shop.box
    hooks = shared.required.get(GateHooks)
    hooks.welcome_buttons.append(in_gate.welcome_button)
    hooks.after_delivery.append(in_gate.banners)
    # Paid orders become campaigns and broadcasts through those features' own services.
    required = shared.required
    fulfil = Fulfilment(engine.pool, required.get(CampaignService), required.get(BroadcastService))
    runner = ShopRunner(shop, settings, engine.api.session, fulfil)
    every = shared.options.shop_check_every_s
    watcher = ShopWatcher(shop, settings, engine.api.session)
    jobs = [
        Job("shop_runner", every, runner.tick),
        Job("shop_watch", shared.options.shop_watch_every_s, watcher.tick),
    ]
    if box.rotating:
        # A key rotation (SPONSORBOT_SECRET_KEY="new,old"): TronGrid keys move to the new key,
        # so the old one can be dropped later.

        async def reseal(pool: asyncpg.Pool) -> None:
            await reseal_keys(pool, box)

        jobs.append(Job("shop_reseal", 3600.0, reseal))
    jobs.append(Job("shop_cleanup", retention.CLEANUP_EVERY_S, retention.cleanup))
    return Parts(router=Dialogue(shared.config).router(), services=[shop], jobs=jobs)


FEATURE = Feature("shop", setup, requires=("bots", "gate", "campaigns", "broadcasts"))
