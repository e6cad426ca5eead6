"""Real TronGrid answers, for the verifier and client tests.

Every object here is an answer a TRON node gave for a real transaction, as published in public
documentation (the hash names the transaction; TronScan shows it):

- ``USDT_TRANSACTION``: ``/wallet/gettransactionbyid`` on mainnet for ``f591b0c6…4729``, a USDT
  ``transfer`` call (from a TRC-20 payment gateway's notes on TronGrid's answers).
- ``USDT_INFO`` and ``USDT_OUT_OF_ENERGY_INFO``: ``gettransactioninfobyid`` on mainnet for
  ``b69c51db…e9dc`` (3.5 USDT sent) and ``e63a324a…b481`` (a USDT transfer that ran out of
  energy), from a Python TRON client's documentation.
- ``TRX_TRANSACTION``: ``gettransactionbyid`` on mainnet for ``6adc5b54…9b02``, 30 TRX (same
  gateway notes); ``TRX_INFO``: ``gettransactioninfobyid`` for the TRX transfer
  ``23897196…d0d2`` (same client documentation): no log, a receipt with no ``result``.
- ``TRC10_TRANSACTION`` and ``TRC10_INFO``: both answers for ``d0807adb…5933``, a TRC-10 token
  transfer, the example of TRON's own developer reference.

Public documentation does not publish both answers for one USDT or TRX transfer, so the tests
pair a real transaction with a real info of the same kind. The verifier reads USDT only from
the info's logs and TRX only from the transaction's ``TransferContract``, so each half is read
for its own part; that the USDT transaction's call data names another recipient and amount than
the info's log is itself a check that call data is never read.
"""

from __future__ import annotations

import copy
from typing import Any

JsonDict = dict[str, Any]

USDT_TRANSACTION: JsonDict = {
    "ret": [{"contractRet": "SUCCESS"}],
    "signature": [
        "4bd57947ce504df9efb7c39035acd28daf7c3067c019ae0ff7d31db72dfa46fb"
        "7322ef28fddbe90115d6030d1995dc573498acf939fb815bb8a43c90285d421201"
    ],
    "txID": "f591b0c60730941e5a5fa09ded29993bbaab45ec91bef1a95fb6698876eb4729",
    "raw_data": {
        "contract": [
            {
                "parameter": {
                    "value": {
                        "data": "a9059cbb000000000000000000000000cb5f8073cedbb40ee156a6e5dc945c5c"
                        "ac067648000000000000000000000000000000000000000000000000000000000632ea00",
                        "owner_address": "41c53a7d3488cd47d41e72aeecd311efb4d64afb64",
                        "contract_address": "41a614f803b6fd780986a42c78ec9c7f77e6ded13c",
                    },
                    "type_url": "type.googleapis.com/protocol.TriggerSmartContract",
                },
                "type": "TriggerSmartContract",
            }
        ],
        "ref_block_bytes": "3921",
        "ref_block_hash": "412eb04792ea9688",
        "expiration": 1751296149000,
        "fee_limit": 100000000,
        "timestamp": 1751296090669,
    },
    "raw_data_hex": "0a0239212208412eb04792ea968840888c8a8bfc325aae01081f12a9010a3174797065"
    "2e676f6f676c65617069732e636f6d2f70726f746f636f6c2e54726967676572536d617274436f6e747261"
    "637412740a1541c53a7d3488cd47d41e72aeecd311efb4d64afb64121541a614f803b6fd780986a42c78ec"
    "9c7f77e6ded13c2244a9059cbb000000000000000000000000cb5f8073cedbb40ee156a6e5dc945c5cac06"
    "7648000000000000000000000000000000000000000000000000000000000632ea0070adc4868bfc329001"
    "80c2d72f",
}

USDT_INFO: JsonDict = {
    "id": "b69c51db8f9d974e6a38c76852c8ce1adcb682dbacb25ad8ad4f6876121fe9dc",
    "fee": 345000,
    "blockNumber": 66861993,
    "blockTimeStamp": 1731235554000,
    "contractResult": ["0000000000000000000000000000000000000000000000000000000000000000"],
    "contract_address": "41a614f803b6fd780986a42c78ec9c7f77e6ded13c",
    "receipt": {
        "energy_usage": 64285,
        "energy_usage_total": 64285,
        "net_fee": 345000,
        "result": "SUCCESS",
        "energy_penalty_total": 49635,
    },
    "log": [
        {
            "address": "a614f803b6fd780986a42c78ec9c7f77e6ded13c",
            "topics": [
                "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
                "00000000000000000000000060e6e92e57d61a9d68b5d95275cc9667d9e6c7c9",
                "000000000000000000000000cdae4e9a6287333a3f7df432b050af7b17e79e63",
            ],
            "data": "00000000000000000000000000000000000000000000000000000000003567e0",
        }
    ],
}
# The log's sender and recipient, and what it moved (0x3567e0 micro-USDT).
USDT_PAYER = "TJoaVSdktrnndU4dmKm33SWMKoXt4LLFbU"
USDT_PAYEE = "TUikLT3nTTjTkXPAuC4xUGj84vfSERCWRn"
USDT_AMOUNT = "3.500000"
USDT_BLOCK_TIME = "2024-11-10T10:45:54+00:00"

USDT_OUT_OF_ENERGY_INFO: JsonDict = {
    "id": "e63a324a43aebfe41273db4f7fdfe325b2257b4f5711595a5fc0f8a75cf1b481",
    "fee": 16500120,
    "blockNumber": 66860010,
    "blockTimeStamp": 1731229605000,
    "contractResult": [""],
    "contract_address": "41a614f803b6fd780986a42c78ec9c7f77e6ded13c",
    "receipt": {
        "energy_fee": 16500120,
        "energy_usage_total": 78572,
        "net_usage": 345,
        "result": "OUT_OF_ENERGY",
        "energy_penalty_total": 25905,
    },
    "result": "FAILED",
    "resMessage": "4e6f7420656e6f75676820656e6572677920666f7220275353544f524527206f70657261"
    "74696f6e20657865637574696e673a20637572496e766f6b65456e657267794c696d69745b37383537325d"
    "2c206375724f70456e657267795b32303030305d2c2070656e616c7479456e657267795b36383030305d2c"
    "2075736564456e657267795b33333536375d",
}

TRX_TRANSACTION: JsonDict = {
    "ret": [{"contractRet": "SUCCESS"}],
    "signature": [
        "318a168653bcfad326aec59f47244b993877fcf86b958f2ccf0703b0f0f78bcd"
        "4c15adfc8513b69dd0080554757016c6d981da7bed3286f503b7210680f43abc01"
    ],
    "txID": "6adc5b544de4dc0f7ba94b5c0a10004aeb7359a517f2fe409445b24f89419b02",
    "raw_data": {
        "contract": [
            {
                "parameter": {
                    "value": {
                        "amount": 30000000,
                        "owner_address": "4119ffc904ab2e54fa4f54ffdb1cafd89a44170044",
                        "to_address": "415b84403715b218b869b2e008117a1bbda850e726",
                    },
                    "type_url": "type.googleapis.com/protocol.TransferContract",
                },
                "type": "TransferContract",
            }
        ],
        "ref_block_bytes": "edc8",
        "ref_block_hash": "130f70b0c59f4871",
        "expiration": 1751041604622,
        "fee_limit": 15000000,
        "timestamp": 1751041488000,
    },
    "raw_data_hex": "0a02edc82208130f70b0c59f4871408ef8d991fb325a68080112640a2d747970652e676f"
    "6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412330a1541"
    "19ffc904ab2e54fa4f54ffdb1cafd89a441700441215415b84403715b218b869b2e008117a1bbda850e726"
    "188087a70e7080e9d291fb329001c0c39307",
}
TRX_PAYER = "TCLgK89AnXbC9rewvhNb9UgXCc2qJJpBXh"
TRX_PAYEE = "TJK6vTviYJ468yfUC3vGzRoZtSvY72rYbM"

TRX_INFO: JsonDict = {
    "id": "2389719608ed69f7ec3e72c1abb92acaa43b7175f3062f4ebc6e2e02cc82d0d2",
    "blockNumber": 66862205,
    "blockTimeStamp": 1731236190000,
    "contractResult": [""],
    "receipt": {"net_usage": 265},
}

TRC10_TRANSACTION: JsonDict = {
    "ret": [{"contractRet": "SUCCESS"}],
    "signature": [
        "ffbf691a89d95f6ad8175611c7d334c8159b95ff9c1e83872e7670103b185e85"
        "faf0a394b23d99581385d38038ab5c4684759c864a5621009f6e95da0a5feab501"
    ],
    "txID": "d0807adb3c5412aa150787b944c96ee898c997debdc27e2f6a643c771edb5933",
    "raw_data": {
        "contract": [
            {
                "parameter": {
                    "value": {
                        "amount": 16,
                        "asset_name": "54726f6e696373",
                        "owner_address": "414a5fe0179f2dd9c900194e63d661863cd0ade7b0",
                        "to_address": "41718de6b323652d1257437ace160c4f4198aae4e1",
                    },
                    "type_url": "type.googleapis.com/protocol.TransferAssetContract",
                },
                "type": "TransferAssetContract",
            }
        ],
        "ref_block_bytes": "6bdd",
        "ref_block_hash": "1616edaf3a57fe19",
        "expiration": 1546455678000,
        "timestamp": 1546455620175,
    },
}
TRC10_PAYEE = "TLKdMCfvLkeTabuuh64cPMqqDVLjondxfh"

TRC10_INFO: JsonDict = {
    "id": "d0807adb3c5412aa150787b944c96ee898c997debdc27e2f6a643c771edb5933",
    "fee": 2790,
    "blockNumber": 5467102,
    "blockTimeStamp": 1546455621000,
    "contractResult": [""],
    "receipt": {"net_fee": 2790},
}


def fresh(answer: JsonDict) -> JsonDict:
    """A deep copy to break one rule in, leaving the shared fixture as it was."""
    return copy.deepcopy(answer)
