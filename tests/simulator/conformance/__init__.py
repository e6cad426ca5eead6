"""The simulator against real Bot API clients: aiogram 3 and python-telegram-bot.

`test_conformance.py` starts one simulator per library in the test process and runs one client
process per library, in that library's own virtual environment (`venvs.py`). The client
(`client_aiogram.py`, `client_ptb.py`) feeds the library every case of `cases.py` through
`driver.py` and prints one JSON line per case; the tests judge those lines. The modules the
clients import (`cases`, `driver`) use the standard library only.
"""
