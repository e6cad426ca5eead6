"""One running simulator: the world plus limits, faults, latency, the call log and webhooks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sponsorbot.simulator.calllog import CallLog
from sponsorbot.simulator.limits import Faults, FloodLimiter, Latency
from sponsorbot.simulator.market import DEFAULT_PRICE, Prices
from sponsorbot.simulator.params import Params
from sponsorbot.simulator.tron import SOLIDIFY_BLOCKS, Chain
from sponsorbot.simulator.webhooks import Webhooks
from sponsorbot.simulator.world import Bot, World


@dataclass(slots=True)
class Options:
    """Start-up settings of a simulator (all of them can be changed later, except the seed)."""

    seed: int | None = None
    latency_ms: float = 0.0
    jitter_ms: float = 0.0
    per_bot_per_second: int = 30
    per_chat_per_second: int = 5
    webhook_retry_base: float = 1.0
    webhook_timeout: float = 10.0
    callback_timeout: float = 15.0
    poll_timeout_cap: float = 50.0
    # The simulated TronGrid: the network it serves, the TRON-PRO-API-KEY it requires (None:
    # none), and how many 3 s blocks a new transaction waits to be solid.
    tron_network: str = "mainnet"
    tron_api_key: str | None = None
    tron_solidify_blocks: int = SOLIDIFY_BLOCKS
    # USD per TRX at every simulated price source when the simulator starts (or is reset).
    trx_price: str = DEFAULT_PRICE


class Simulator:
    """Everything one simulator process keeps in memory."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.webhooks = Webhooks(options.webhook_retry_base, options.webhook_timeout)
        self._fresh()

    def _fresh(self) -> None:
        options = self.options
        self.world = World(options.seed)
        self.limiter = FloodLimiter(options.per_bot_per_second, options.per_chat_per_second)
        self.faults = Faults(options.seed)
        self.latency = Latency(options.latency_ms, options.jitter_ms, options.seed)
        self.calls = CallLog()
        self.tron = Chain(
            clock=self._clock,
            seed=options.seed,
            network=options.tron_network,
            api_key=options.tron_api_key,
            solidify_blocks=options.tron_solidify_blocks,
        )
        self.prices = Prices(options.trx_price)

    def _clock(self) -> float:
        # Through the world on every call: a reset makes a new world with its own clock.
        return self.world.clock()

    async def reset(self) -> None:
        """Back to an empty world with the same seed; limits, faults and latency as started;
        an empty chain on the network it started with, prices as started."""
        await self.webhooks.stop_all()
        self._fresh()

    async def close(self) -> None:
        """Stop webhook delivery and release its HTTP session."""
        await self.webhooks.close()


@dataclass(slots=True)
class Described:
    """A successful result that also carries a ``description`` (as setWebhook's does)."""

    result: Any
    description: str


Handler = Callable[[Simulator, Bot, Params], Awaitable[Any]]
