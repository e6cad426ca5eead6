"""Sponsorbot: self-hosted Telegram uploader bots with a forced-join gate, on PostgreSQL alone."""

__version__ = "0.1.0"
