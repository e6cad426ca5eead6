"""A simulated Telegram Bot API server: the world, the Bot API, the control API and the phone."""
