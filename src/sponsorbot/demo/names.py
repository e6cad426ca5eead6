"""Made-up Telegram names for the demo's people: what the visitors page shows and searches.

Persian speakers mostly write their names in Persian script, some in Latin letters; English
speakers in Latin letters. Many have no username, some no last name. Usernames are Latin, as
Telegram wants them (a letter first, then letters, digits and underscores, 5 to 32 of them).
"""

from __future__ import annotations

import random

# (in Persian script, in Latin letters)
PERSIAN_FIRST = (
    ("علی", "Ali"), ("رضا", "Reza"), ("محمد", "Mohammad"), ("سارا", "Sara"),
    ("مریم", "Maryam"), ("زهرا", "Zahra"), ("حسین", "Hossein"), ("فاطمه", "Fatemeh"),
    ("امیر", "Amir"), ("نگار", "Negar"), ("مهدی", "Mahdi"), ("پریسا", "Parisa"),
    ("کیان", "Kian"), ("آرش", "Arash"), ("نرگس", "Narges"), ("سینا", "Sina"),
    ("یاسمن", "Yasaman"), ("پویا", "Pouya"), ("الهام", "Elham"), ("بهار", "Bahar"),
    ("میلاد", "Milad"), ("شیما", "Shima"), ("امید", "Omid"), ("هستی", "Hasti"),
    ("محسن", "Mohsen"), ("نیلوفر", "Niloufar"), ("کاوه", "Kaveh"), ("ترانه", "Taraneh"),
    ("بابک", "Babak"), ("لیلا", "Leila"), ("عرفان", "Erfan"), ("مهسا", "Mahsa"),
)  # fmt: skip
PERSIAN_LAST = (
    ("محمدی", "Mohammadi"), ("رضایی", "Rezaei"), ("حسینی", "Hosseini"), ("احمدی", "Ahmadi"),
    ("کریمی", "Karimi"), ("موسوی", "Mousavi"), ("جعفری", "Jafari"), ("صادقی", "Sadeghi"),
    ("رحیمی", "Rahimi"), ("نوری", "Nouri"), ("کاظمی", "Kazemi"), ("قاسمی", "Ghasemi"),
    ("تهرانی", "Tehrani"), ("اکبری", "Akbari"), ("شریفی", "Sharifi"), ("عباسی", "Abbasi"),
    ("یزدانی", "Yazdani"), ("فرهادی", "Farhadi"), ("زارعی", "Zarei"), ("مرادی", "Moradi"),
)  # fmt: skip
ENGLISH_FIRST = (
    "James", "Emma", "Oliver", "Sophia", "Liam", "Mia", "Noah", "Ava", "Lucas", "Chloe",
    "Daniel", "Grace", "Ethan", "Lily", "Adam", "Zoe", "Sam", "Hannah", "Leo", "Nora",
    "Max", "Ella", "Ryan", "Sarah",
)  # fmt: skip
ENGLISH_LAST = (
    "Smith", "Brown", "Wilson", "Taylor", "Clarke", "Walker", "Hughes", "Turner", "Reed",
    "Morgan", "Bennett", "Carter", "Hayes", "Foster", "Price", "Ward",
)  # fmt: skip

WITH_USERNAME = 0.6
WITH_LAST_NAME = 0.7
# Persian speakers who write their name in Latin letters.
LATIN_PERSIAN = 0.15

Names = tuple[str | None, str, str | None]


def person_names(rng: random.Random, language: str, taken: set[str]) -> Names:
    """A person's username (or None), first name and last name (or None); the username is
    not one of `taken`, and is added to it."""
    if language == "fa":
        first, first_latin = rng.choice(PERSIAN_FIRST)
        last, last_latin = rng.choice(PERSIAN_LAST)
        if rng.random() < LATIN_PERSIAN:
            first, last = first_latin, last_latin
    else:
        first = first_latin = rng.choice(ENGLISH_FIRST)
        last = last_latin = rng.choice(ENGLISH_LAST)
    username = None
    if rng.random() < WITH_USERNAME:
        username = _username(rng, first_latin.lower(), last_latin.lower(), taken)
    return username, first, last if rng.random() < WITH_LAST_NAME else None


def _username(rng: random.Random, first: str, last: str, taken: set[str]) -> str:
    shapes = (
        f"{first}_{last}",
        f"{first}{last[0]}{rng.randint(1, 99)}",
        f"{first}{rng.randint(1975, 2009)}",
        f"{last}_{first[0]}",
        f"the_{first}",
    )
    name = rng.choice(shapes)
    if len(name) < 5:
        name += str(rng.randint(100, 999))
    # Made free with a number, drawing nothing: a person's draws do not depend on who came
    # before them (history.again makes some lives again).
    free, n = name, 1
    while free in taken:
        n += 1
        free = f"{name[:28]}{n}"
    taken.add(free)
    return free
