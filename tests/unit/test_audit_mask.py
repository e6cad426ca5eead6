"""The audit log's mask: named secret keys hidden, other keys kept, token-shaped text hidden."""

from __future__ import annotations

from sponsorbot.features.accounts.audit import mask

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"


def test_secret_keys_are_masked_and_texts_about_codes_are_not() -> None:
    logged = mask(
        {
            "token": "sbt_abcdefghijklmnop",
            "Password": "hunter2hunter2",
            "fa.unknown_code": "این پیوند دیگر کار نمی‌کند.",
            "nested": [{"totp_secret": "JBSWY3DPEHPK3PXP"}],
            "note": f"pasted {TOKEN} by mistake",
        }
    )
    assert logged["token"] == "•••mnop"
    assert logged["Password"] == "•••ter2"
    assert logged["fa.unknown_code"] == "این پیوند دیگر کار نمی‌کند."
    assert logged["nested"][0]["totp_secret"] == "•••3PXP"
    assert TOKEN not in logged["note"]
