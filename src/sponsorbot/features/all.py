"""The feature list, and setting the features up on an engine.

`install(engine)` sets every feature up once for this process, each after the features it
requires: their routers go into the engine's root router (in the order of this list), their
jobs into its scheduler, and the returned `Features` hands their services to the web layer.
The runtime calls it; nothing else builds features.
"""

from __future__ import annotations

from dataclasses import replace

from sponsorbot.engine.core import Engine
from sponsorbot.engine.routing import Router
from sponsorbot.features import (
    accounts,
    alerts,
    bots,
    broadcasts,
    campaigns,
    channels,
    content,
    gate,
    shop,
    stats,
)
from sponsorbot.features.base import Feature, Features, Options, Parts, Shared, setup_order
from sponsorbot.features.botconfig import ConfigCache
from sponsorbot.features.fallback import stray_buttons

# Order matters for messages and buttons: the first handler that takes one wins. Content
# (an uploader's files and commands) goes before the gate (a visitor's /start and the rest);
# the team's chat (a link code is a /start link, a reason is plain text) before both.
FEATURES: tuple[Feature, ...] = (
    accounts.FEATURE,
    alerts.FEATURE,
    bots.FEATURE,
    stats.FEATURE,
    channels.FEATURE,
    content.FEATURE,
    gate.FEATURE,
    campaigns.FEATURE,
    broadcasts.FEATURE,
    shop.FEATURE,
)


def redrive_holds(features: tuple[Feature, ...] = FEATURES) -> tuple[str, ...]:
    """What the features keep from a re-drive (engine.redrive's `holds`)."""
    return tuple(hold for feature in features for hold in feature.redrive_holds)


def install(
    engine: Engine, features: tuple[Feature, ...] = FEATURES, options: Options | None = None
) -> Features:
    """Set the features up on this engine: routers, jobs, services. ValueError when a
    feature requires one that is not in `features`, or requirements go round in a circle."""
    options = options or Options()
    config = ConfigCache(engine.pool, options.config_ttl_s, engine.notifier)
    shared = Shared(engine, config, options, redrive_holds(features))
    made: dict[str, Parts] = {}
    for feature in setup_order(features):
        # Each setup sees the services of what it requires, the very instances they made.
        required = Features({name: made[name] for name in feature.requires})
        made[feature.name] = feature.setup(replace(shared, required=required))
    parts = {feature.name: made[feature.name] for feature in features}
    for part in parts.values():
        if part.router is not None:
            engine.router.include_router(part.router)
        for job in part.jobs:
            engine.scheduler.register(job.name, job.every_s, job.fn)
    # Catch-alls last, after every feature had its chance (the gate's welcome, stray buttons).
    for part in parts.values():
        if part.fallback is not None:
            engine.router.include_router(part.fallback)
    engine.router.include_router(stray_buttons(Router("stray buttons")))
    return Features(parts)
