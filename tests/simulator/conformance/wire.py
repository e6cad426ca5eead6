"""The simulator over plain HTTP, for the clients: its control API, raw Bot API calls (to set
the scene, not to test), and a webhook receiver. Standard library only: the clients run in the
libraries' virtual environments, where the product is not installed."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ControlError(RuntimeError):
    """The simulator refused a scene-setting call (a bug in the suite, not a finding)."""


class Control:
    """The simulator at ``base_url``: ``/_sim/...`` actions and raw ``/bot<token>/...`` calls."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    def _post(self, url: str, body: dict[str, Any]) -> Any:
        data = json.dumps({k: v for k, v in body.items() if v is not None}).encode()
        request = urllib.request.Request(  # noqa: S310 - a loopback http URL
            url, data=data, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return json.loads(exc.read())

    def act(self, path: str, **body: Any) -> Any:
        """POST ``/_sim/<path>``; its result, or ControlError."""
        answer = self._post(f"{self.base_url}/_sim/{path}", body)
        if not answer.get("ok"):
            raise ControlError(f"/_sim/{path} {body}: {answer.get('error')}")
        return answer["result"]

    def bot_api(self, token: str, method: str, **params: Any) -> Any:
        """A Bot API call that must succeed; its result."""
        answer = self._post(f"{self.base_url}/bot{token}/{method}", params)
        if not answer.get("ok"):
            raise ControlError(f"{method} {params}: {answer.get('description')}")
        return answer["result"]

    # The people and chats of a scene ------------------------------------------------------

    def user(self, first_name: str = "User", username: str | None = None) -> int:
        """A new person's id."""
        made = self.act("users", first_name=first_name, username=username, language_code="en")
        return int(made["id"])

    def started(self, bot: int, first_name: str = "Visitor") -> int:
        """A new person who opened the bot (its ``/start`` update is pending)."""
        user = self.user(first_name)
        self.act("open_link", user_id=user, bot=bot, payload="")
        return user

    def chat(self, title: str, **options: Any) -> dict[str, Any]:
        """A new channel (``type="supergroup"`` for a group): its Chat object and owner_id."""
        made: dict[str, Any] = self.act("channels", title=title, **options)
        return made

    def admin(self, chat: int, member: int, **rights: bool) -> None:
        """Make a bot or person an administrator of ``chat``."""
        self.act("admins", chat_id=chat, member_id=member, rights=rights)

    # Updates ------------------------------------------------------------------------------

    def drain(self, token: str) -> None:
        """Confirm every pending update of the bot (they belong to no case)."""
        pending = self.bot_api(token, "getUpdates", timeout=0)
        if pending:
            self.bot_api(token, "getUpdates", offset=pending[-1]["update_id"] + 1, timeout=0)

    def delivered(self, token: str, seconds: float = 5.0) -> None:
        """Wait until the webhook has taken every pending update."""
        deadline = time.monotonic() + seconds
        while self.bot_api(token, "getWebhookInfo")["pending_update_count"]:
            if time.monotonic() > deadline:
                raise ControlError("the webhook did not take the pending updates in time")
            time.sleep(0.005)


class Receiver:
    """A webhook endpoint on a free loopback port, recording each update with the secret
    header it came with."""

    def __init__(self) -> None:
        self.bodies: list[tuple[dict[str, Any], str | None]] = []
        self._lock = lock = threading.Lock()
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size))
                with lock:
                    bodies.append((body, self.headers.get("X-Telegram-Bot-Api-Secret-Token")))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the client's output is its JSON lines

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Where the simulator should post."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/hook"

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def take(self) -> list[tuple[dict[str, Any], str | None]]:
        """What arrived since the last take."""
        with self._lock:
            got = list(self.bodies)
            self.bodies.clear()
        return got
