"""The features as installed: each service class has one instance in the process, and what a
feature requires is the very instance the required feature made (docs/adr/0023-feature-graph.md).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from types import FunctionType, MethodType, ModuleType

import asyncpg

from sponsorbot.engine.core import Engine
from sponsorbot.features.all import install
from sponsorbot.features.base import Features
from sponsorbot.features.bots.service import BotsService
from sponsorbot.features.broadcasts.service import BroadcastService
from sponsorbot.features.campaigns.service import CampaignService
from sponsorbot.features.gate.hooks import GateHooks
from sponsorbot.features.shop import in_gate
from sponsorbot.features.shop.service import ShopService
from tests.kit import make_settings


def reachable(*roots: object) -> Iterator[object]:
    """Every object reachable from `roots` through attributes, containers, bound methods and
    closures (not through a function's module globals, which reach everything)."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, ModuleType, str, bytes, int, float)):
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, FunctionType):
            # A cell's referent is its contents (an empty cell has none).
            stack.extend(r for cell in obj.__closure__ or () for r in gc.get_referents(cell))
            stack.extend(obj.__defaults__ or ())
        elif isinstance(obj, MethodType):
            stack.append(obj.__self__)
        else:
            stack.extend(gc.get_referents(obj))


def instances(engine: Engine, features: Features, classes: set[type]) -> dict[type, set[int]]:
    """The distinct instances of each class that the engine's routers and jobs or the
    features' parts hold."""
    found: dict[type, set[int]] = defaultdict(set)
    for obj in reachable(engine.router, engine.scheduler, features.parts):
        if type(obj) in classes:
            found[type(obj)].add(id(obj))
    return found


async def test_every_service_exists_once_and_requirements_get_that_one(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    engine = Engine(make_settings(db_dsn, "http://127.0.0.1:9", tmp_path), pool, db_dsn)
    try:
        features = install(engine)
        services = {type(s) for part in features.parts.values() for s in part.services}
        assert {ShopService, CampaignService, BroadcastService, BotsService} <= services
        held = instances(engine, features, services)
        twice = {cls.__name__: len(ids) for cls, ids in held.items() if len(ids) > 1}
        assert twice == {}, f"services made more than once: {twice}"
        # The ones that used to be made twice: the shop's (by the team's alerts) and the
        # campaign and broadcast services (by the shop, to fulfil paid ads).
        for cls in (ShopService, CampaignService, BroadcastService, BotsService):
            assert held[cls] == {id(features.get(cls))}
        # The shop added its button and banners to the gate's hooks.
        hooks = features.get(GateHooks)
        assert hooks.welcome_buttons == [in_gate.welcome_button]
        assert hooks.after_delivery == [in_gate.banners]
    finally:
        await engine.close()


def test_the_walk_finds_a_second_instance() -> None:
    first, second = BotsService.__new__(BotsService), BotsService.__new__(BotsService)

    class Holder:
        def __init__(self) -> None:
            self.service = first

        def act(self) -> None:
            return None

    def job() -> object:
        return second

    found = {id(o) for o in reachable([Holder().act, job]) if type(o) is BotsService}
    assert found == {id(first), id(second)}
