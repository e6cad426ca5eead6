"""`python -m sponsorbot` is the same as the `sponsorbot` command."""

from sponsorbot.cli import main

main()
