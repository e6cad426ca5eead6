"""Features: one package each (gate, content, channels, bots, stats, accounts); `all` lists them."""
