"""One payment check from start to end: the function the shop's runner and the CLI both call."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import aiohttp
from pydantic import SecretStr

from sponsorbot.config import ENV_PREFIX, TronNetwork
from sponsorbot.tron.address import parse_address
from sponsorbot.tron.client import TronGrid, TronGridError
from sponsorbot.tron.networks import network_info, network_of_genesis, network_of_link, parse_hash
from sponsorbot.tron.verifier import WRONG_NETWORK, Verdict, verify

__all__ = ["verify_hash"]

# The (base URL, network) pairs whose node showed that network's block 0, once per process:
# a node does not change chains, and the check costs a lookup. A refusal is not kept, so a
# node put right is believed on the next try without a restart.
_confirmed: set[tuple[str, TronNetwork]] = set()


async def verify_hash(
    session: aiohttp.ClientSession,
    trongrid_url: str,
    api_key: SecretStr | str | None,
    tx_hash: str,
    network: TronNetwork,
    address_text: str,
    approved_at: datetime,
    trx_rate: Decimal | None,
    *,
    accept_trx: bool,
    timeout_s: float = 5.0,
) -> Verdict:
    """Look ``tx_hash`` up on TronGrid and judge it as a payment to ``address_text``.

    ``tx_hash`` may be the hash or a TronScan link; a link naming another network is rejected
    as ``wrong_network`` without a lookup (its hash would only be ``unknown`` here, for 15
    minutes). Raises :class:`~sponsorbot.tron.networks.HashError` or
    :class:`~sponsorbot.tron.address.AddressError` for bad input, and
    :class:`~sponsorbot.tron.client.TronGridError` when TronGrid gives no usable answer (try
    again later), ``wrong_network`` among them when the node at ``trongrid_url`` serves another
    chain than ``network``: before its first verdict, a node must show ``network``'s block 0.
    """
    clean_hash = parse_hash(tx_hash)
    address = parse_address(address_text)
    linked = network_of_link(tx_hash)
    if linked is not None and linked != network:
        return Verdict("reject", WRONG_NETWORK)
    grid = TronGrid(session, trongrid_url, api_key, timeout_s=timeout_s)
    await _check_network(grid, network)
    transaction = await grid.transaction(clean_hash)
    # An unknown hash has no info either: one lookup is enough to say so.
    info = await grid.transaction_info(clean_hash) if transaction else None
    # Judge only the transaction asked about: a node (or anything between) that answers with
    # another one is not an answer.
    for answer, key in ((transaction, "txID"), (info, "id")):
        if answer and str(answer.get(key, "")).lower() != clean_hash:
            raise TronGridError("garbage", f"TronGrid answered about another transaction ({key})")
    return verify(
        transaction,
        info,
        network=network,
        address=address,
        approved_at=approved_at,
        accept_trx=accept_trx,
        trx_rate=trx_rate,
    )


async def _check_network(grid: TronGrid, network: TronNetwork) -> None:
    """Raise ``wrong_network`` unless the node behind ``grid`` has ``network``'s block 0.

    Without this, a node of one chain would be asked about another's payments: a URL left
    pointing at Nile would credit free test TRX as mainnet TRX (docs/adr/0018-tron-trust.md).
    """
    if (grid.base_url, network) in _confirmed:
        return
    served = await grid.genesis_block_id()
    if served != network_info(network).genesis_id:
        known = network_of_genesis(served)
        chain = known.value if known else f"an unknown chain (block 0 {served})"
        setting = f"{ENV_PREFIX}TRONGRID_URL_{network.value.upper()}"
        # The URL itself stays out: the message is shown to the owner and a URL may hold a key.
        raise TronGridError(
            "wrong_network",
            f"the TronGrid node serves {chain}, not {network.value}: nothing is judged until"
            f" {setting} (or {ENV_PREFIX}TRONGRID_URL) names a {network.value} node",
        )
    _confirmed.add((grid.base_url, network))
