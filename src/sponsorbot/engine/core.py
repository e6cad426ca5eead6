"""The engine assembled: what the api role and the worker role each run of it."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import asyncpg

from sponsorbot.config import Settings
from sponsorbot.engine import janitor
from sponsorbot.engine.bots import BotService
from sponsorbot.engine.intake import Intake
from sponsorbot.engine.leases import Leases, new_owner
from sponsorbot.engine.liveness import Liveness
from sponsorbot.engine.manager import BotManager
from sponsorbot.engine.notify import Notifier
from sponsorbot.engine.pauses import Pauses
from sponsorbot.engine.routing import Router
from sponsorbot.engine.scheduler import Scheduler
from sponsorbot.engine.token_box import TokenBox
from sponsorbot.engine.worker import Worker
from sponsorbot.telegram import BotApi

log = logging.getLogger(__name__)


class Engine:
    """One process's engine: the Bot API client, wake-ups, bots, and (worker role) the loops."""

    def __init__(
        self,
        settings: Settings,
        pool: asyncpg.Pool,
        dsn: str,
        router: Router | None = None,
        *,
        retry_base_s: float = 1.0,
    ) -> None:
        self.settings = settings
        self.pool = pool
        # Features include their routers into this one before the roles start.
        self.router = router or Router()
        self.api = BotApi(settings.telegram_api)
        self.notifier = Notifier(pool, dsn)
        self.bots = BotService(
            pool,
            self.api,
            TokenBox(settings.secret()),
            settings.public_url,
            self.notifier,
            allowed_updates=self.router.kinds,
        )
        self.intake = Intake(pool, self.notifier, gather_s=settings.intake_gather_ms / 1000)
        self.pauses = Pauses()
        self.leases = Leases(pool, new_owner(), settings.lease_s)
        self.manager = BotManager(
            pool,
            self.api,
            self.bots,
            self.leases,
            self.notifier,
            per_bot=settings.send_per_bot_per_s,
            per_chat=settings.send_per_chat_per_s,
            concurrency=settings.send_concurrency,
            retry_for_s=settings.retry_for_h * 3600,
            retry_cap_s=settings.retry_cap_s,
            pauses=self.pauses,
            # Of the shutdown grace: half to finish the updates in hand, a fifth for the
            # senders' calls in flight and a fifth for their last write (docs/adr/0022-shutdown.md).
            stop_wait_s=settings.shutdown_grace_s * 0.2,
            probe_s=settings.recovery_probe_s,
        )
        self.liveness = Liveness(
            dsn,
            self.leases.owner,
            self.notifier,
            on_down=self.manager.suspend,
            on_up=self.manager.resume,
        )
        self.worker = Worker(
            pool,
            self.router,
            self.notifier,
            self.api,
            self.manager.active,
            slots=settings.worker_slots,
            slots_max=settings.worker_slots_max,
            lock_s=settings.lock_timeout_s,
            max_attempts=settings.max_attempts,
            retry_base_s=retry_base_s,
            retry_cap_s=settings.retry_cap_s,
            retry_for_s=settings.retry_for_h * 3600,
            offer=self.manager.offer,
            pauses=self.pauses,
            claimer=lambda: self.liveness.key,
            on_refused=self.manager.refused,
            probe_s=settings.recovery_probe_s,
            wake_per_s=settings.send_per_bot_per_s,
            on_back=self.manager.telegram_back,
            commit_gather_s=settings.worker_commit_gather_ms / 1000,
            claim_gather_s=settings.worker_claim_gather_ms / 1000,
        )
        self.scheduler = Scheduler(pool, self.leases)
        sweeps = janitor.engine_sweeps(
            settings.retention_days * 86400, settings.dead_keep_days * 86400
        )

        async def cleanup(pool: asyncpg.Pool) -> None:
            await janitor.sweep(pool, sweeps)

        self.scheduler.register("cleanup", janitor.EVERY_S, cleanup)
        self._listener: asyncio.Task[None] | None = None

    def listen(self) -> None:
        """Start hearing other processes' wake-ups (both roles)."""
        if self._listener is None:
            self._listener = asyncio.create_task(self.notifier.listen(), name="listen")

    async def run_worker(self, stop: asyncio.Event) -> None:
        """The worker role: bots' senders and pollers, the claim loop, periodic jobs."""
        self.listen()
        await self.manager.refresh()
        # The liveness lock is let go last: until every update in hand is finished or given
        # back, other workers must not take this one for dead.
        done = asyncio.Event()
        alive = asyncio.create_task(self.liveness.run(done), name="liveness")
        tasks = [
            asyncio.create_task(self.manager.run(stop), name="bots"),
            asyncio.create_task(self.scheduler.run(stop), name="scheduler"),
        ]
        try:
            await self.worker.run(stop, self.settings.shutdown_grace_s * 0.5)
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
            done.set()
            await asyncio.gather(alive, return_exceptions=True)
            log.info("worker stopped after handling %d updates", self.worker.handled)

    async def close(self) -> None:
        """Store the webhook updates gathered, stop listening, close the Bot API session."""
        await self.intake.close()
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        await self.notifier.close()
        await self.api.close()
