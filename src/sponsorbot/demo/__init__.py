"""`sponsorbot demo`: the product on a simulated Telegram, with a month of made-up history.

`world` builds the simulated Telegram's side (bots, channels, people, files), `setup` connects
it to the product through the owner API as an owner would, `history` writes a month of past
activity straight into the database, `trickle` keeps live visitors coming, and `runner` starts
and stops the processes.
"""
