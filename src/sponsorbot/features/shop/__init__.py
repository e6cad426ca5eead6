"""The ad shop: advertisers book products inside a bot, the owner approves, the advertiser pays
in USDT or TRX on TRON and sends the hash, a runner verifies it on TronGrid, and a paid order
starts its ad (a campaign, a broadcast or a banner) by itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

import asyncpg

from sponsorbot.features.base import Feature, Parts, Shared
from sponsorbot.features.shop import retention

if TYPE_CHECKING:
    from sponsorbot.features.shop.service import ShopService


def make_service(shared: Shared) -> ShopService:
    """The shop's service for this process (the panel's, the runner's, the team's buttons')."""
    from sponsorbot.engine.token_box import TokenBox
    from sponsorbot.features.shop.service import ShopService
    from sponsorbot.tron.prices import PriceSources

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
        shared.bots,
        shared.config,
        TokenBox(settings.secret()),
        prices,
        engine.notifier,
        settings.tron_network.value,
        settings.allow_testnet,
    )


def setup(shared: Shared) -> Parts:
    """The advertiser's dialogue, the service and the runner."""
    # Imported here, not at the top: the gate imports this package's buttons, and the shop
    # stands on campaigns, whose crediting stands on the gate.
    from sponsorbot.features.base import Job
    from sponsorbot.features.broadcasts.service import BroadcastService
    from sponsorbot.features.campaigns.service import CampaignService
    from sponsorbot.features.shop.dialogue import Dialogue
    from sponsorbot.features.shop.fulfil import Fulfilment
    from sponsorbot.features.shop.runner import ShopRunner
    from sponsorbot.features.shop.service import reseal_keys
    from sponsorbot.features.shop.watcher import ShopWatcher

    engine = shared.engine
    settings = engine.settings
    shop = make_service(shared)
    box = shop.box
    # Paid orders become campaigns and broadcasts through those features' own services.
    fulfil = Fulfilment(
        engine.pool,
        CampaignService(engine.pool, engine.api, shared.bots, shared.config),
        BroadcastService(engine.pool, engine.api, shared.bots, shared.config, engine.notifier),
    )
    runner = ShopRunner(shop, fulfil, settings, engine.api.session)
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


FEATURE = Feature("shop", setup)
