"""The web parts: one module per feature with a web side, each exposing `PART = WebPart(...)`
(`sponsorbot.web.registry`), and their list, `all.WEB_PARTS`."""
