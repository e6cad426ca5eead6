"""The phone page's routes: the page itself, and the bytes of files bots upload
(``/_sim/files/<file_id>``), which the page shows photos and image documents with."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import aiohttp
import pytest

from sponsorbot.simulator.filebytes import FileBytes, content_type_of
from tests.simulator.conftest import Scene, Sim


def png(width: int = 3, height: int = 2) -> bytes:
    """A real (grey) PNG image."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


async def upload(
    sim: Sim,
    scene: Scene,
    method: str,
    field: str,
    data: bytes,
    file_name: str,
    content_type: str | None = None,
) -> dict[str, Any]:
    """A bot's multipart send*, as a bot library makes it; returns the sent message."""
    form = aiohttp.FormData()
    form.add_field("chat_id", str(scene.user["id"]))
    form.add_field("caption", "Scan to pay")
    form.add_field(field, data, filename=file_name, content_type=content_type)
    async with sim.http.post(f"{sim.url}/bot{scene.token}/{method}", data=form) as resp:
        body = await resp.json()
    assert body["ok"], body
    message: dict[str, Any] = body["result"]
    return message


async def get_file(sim: Sim, file_id: str, **headers: str) -> tuple[int, bytes, Any]:
    async with sim.http.get(f"{sim.url}/_sim/files/{file_id}", headers=headers) as resp:
        return resp.status, await resp.read(), resp.headers


async def test_a_photo_the_bot_uploads_is_served_by_its_file_id(sim: Sim, scene: Scene) -> None:
    image = png()
    sent = await upload(sim, scene, "sendPhoto", "photo", image, "order-1.png", "image/png")
    file_id = sent["photo"][-1]["file_id"]

    status, body, headers = await get_file(sim, file_id)
    assert status == 200
    assert body == image
    assert headers["Content-Type"] == "image/png"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in headers["Content-Security-Policy"]

    # The phone's chat names the same file, so the page can show it.
    chat = await sim.control.read_chat(scene.user["id"], "gate_bot")
    [media] = [m["media"] for m in chat if m["from"] == "bot"]
    assert media == {"kind": "photo", "file_id": file_id, "file_name": "order-1.png"}

    # Sent again by file_id, it is the same file with the same bytes.
    again = await sim.ok(scene.token, "sendPhoto", chat_id=scene.user["id"], photo=file_id)
    assert again["photo"][-1]["file_id"] == file_id
    assert (await get_file(sim, file_id))[1] == image

    # Asked again with the tag it had: not modified.
    status, body, _ = await get_file(sim, file_id, **{"If-None-Match": headers["ETag"]})
    assert (status, body) == (304, b"")


async def test_the_content_type_comes_from_the_bytes_then_the_upload(
    sim: Sim, scene: Scene
) -> None:
    # A PNG sent as a document with no type: still image/png.
    sent = await upload(sim, scene, "sendDocument", "document", png(), "qr", None)
    status, _, headers = await get_file(sim, sent["document"]["file_id"])
    assert (status, headers["Content-Type"]) == (200, "image/png")
    # Not an image: what the upload said, else a guess from the name.
    sent = await upload(sim, scene, "sendDocument", "document", b"%PDF-1.4", "a.pdf", "x/y")
    assert (await get_file(sim, sent["document"]["file_id"]))[2]["Content-Type"] == "x/y"
    sent = await upload(sim, scene, "sendDocument", "document", b"%PDF-1.4", "book.pdf")
    headers = (await get_file(sim, sent["document"]["file_id"]))[2]
    assert headers["Content-Type"] == "application/pdf"


async def test_files_without_bytes_are_404(sim: Sim, scene: Scene) -> None:
    uid = scene.user["id"]
    status, body, headers = await get_file(sim, "AgACAgIAAxkunknown")
    assert status == 404 and headers["Content-Type"] == "application/json"
    assert b"AgACAgIAAxkunknown" in body
    # By URL, or a person's file through the control API: the world has no bytes of them.
    by_url = await sim.ok(scene.token, "sendPhoto", chat_id=uid, photo="https://e.com/cat.jpg")
    assert (await get_file(sim, by_url["photo"][-1]["file_id"]))[0] == 404
    person = await sim.control.send_file(uid, "gate_bot", "photo", "me.jpg")
    assert (await get_file(sim, person["file_id"]))[0] == 404
    # An upload's bytes go with the world when it is reset.
    sent = await upload(sim, scene, "sendPhoto", "photo", png(), "p.png", "image/png")
    await sim.control.reset()
    assert (await get_file(sim, sent["photo"][-1]["file_id"]))[0] == 404


def test_kept_bytes_are_bounded() -> None:
    kept = FileBytes(max_files=3, max_total=9, max_file=6)
    assert not kept.keep("big", b"x" * 7, "image/png")  # over the per-file bound
    for n in range(4):
        assert kept.keep(f"f{n}", b"x" * 2, "image/png")
    assert len(kept) == 3 and kept.get("f0") is None  # the oldest went first
    assert kept.keep("f4", b"y" * 6, "image/png")  # four files, then 2 + 2 + 6 > 9: f1 and f2 go
    assert [kept.get(f) is not None for f in ("f1", "f2", "f3", "f4")] == [
        False,
        False,
        True,
        True,
    ]
    assert kept.total == 8
    stored = kept.get("f4")
    assert stored is not None and (stored.data, stored.content_type) == (b"y" * 6, "image/png")


@pytest.mark.parametrize(
    ("data", "declared", "name", "expected"),
    [
        (b"\xff\xd8\xff\xe0rest", "application/octet-stream", "x.bin", "image/jpeg"),
        (b"GIF89a...", None, None, "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", None, None, "image/webp"),
        (b"hello", "text/plain; charset=utf-8", None, "text/plain"),
        (b"hello", "not a type", "notes.txt", "text/plain"),
        (b"hello", None, None, "application/octet-stream"),
    ],
)
def test_content_type_of(
    data: bytes, declared: str | None, name: str | None, expected: str
) -> None:
    assert content_type_of(data, declared, name) == expected


async def test_the_phone_page_has_a_message_box(sim: Sim) -> None:
    async with sim.http.get(f"{sim.url}/_sim/phone") as resp:
        assert resp.status == 200
        page = await resp.text()
    assert 'id="message"' in page and 'id="send"' in page
    assert 'id="payload"' in page and 'id="url"' in page  # the start code and link stay
