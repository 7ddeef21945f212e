#!/usr/bin/env python3
"""Writes IDNA test cases with the answers of Python's `idna` package, the oracle for
`PeerName`'s internationalised host names (Tests/TrustEngineTests/IDNATests.swift runs it).

Usage: Scripts/idna-oracle-cases.py SEED COUNT

Prints one JSON document: {"idna": VERSION, "uts46": UNICODE_VERSION, "unicodedata": VERSION,
"cases": [[name, expected-or-null, category], …]} where expected is `idna.encode(name, uts46=True)`
without its trailing dot, and null where it raises. Names are drawn (seeded) from fullwidth forms,
compatibility characters, deviation characters, joiners in and out of context, CONTEXTO characters,
right-to-left scripts and digits, leading combining marks, ignored characters, symbols, random
assigned code points, and `xn--` labels (valid, mutated, upper case).

Cases where the two sides deliberately differ are left out, as not applicable: ASCII labels (after
mapping) with `_`, a leading or trailing hyphen, or `--` in the third and fourth positions, which
`idna` refuses (IDNA2008 applies them to every label) and `PeerName` accepts in ASCII names as curl and
browsers do; and characters newer than Python's own `unicodedata` (it would refuse them for want of data).
"""

import json
import random
import sys
import unicodedata

import idna
import idna.uts46data

seed = int(sys.argv[1])
count = int(sys.argv[2])
rng = random.Random(seed)

FULLWIDTH = [chr(c) for c in range(0xFF10, 0xFF1A)] + [chr(c) for c in range(0xFF21, 0xFF3B)] + \
    [chr(c) for c in range(0xFF41, 0xFF5B)] + ["\uff0e", "\u3002", "\uff61", "\uff0d"]
COMPATIBILITY = list("ﬀﬁﬂﬃﬄﬅﬆℌℍℕℙℚℝℤ①②③⑩⑳㎏㎞㎡²³¹⁴ⅫⅩⅣ㍻™℡ǄǅĳĲµſẞǈǋﹰ㈱㋀ｶﾞｧ") + ["\u2126", "\u212a", "\u212b"]
DEVIATION = ["ß", "ς", "\u200d", "\u200c"]
LATIN = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + \
    [chr(c) for c in range(0xC0, 0x250) if unicodedata.name(chr(c), None)]
COMBINING = ["\u0301", "\u0308", "\u0327", "\u0300", "\u030a", "\u0323"]
GREEK = [chr(c) for c in range(0x391, 0x3CA) if unicodedata.name(chr(c), None)] + ["\u0375"]
CYRILLIC = [chr(c) for c in range(0x410, 0x450)]
HEBREW = [chr(c) for c in range(0x5D0, 0x5EB)] + ["\u05f3", "\u05f4"]
ARABIC = [chr(c) for c in range(0x627, 0x64B)] + [chr(c) for c in range(0x660, 0x66A)] + [chr(c) for c in range(0x6F0, 0x6FA)] + ["\u064b", "\u0650"]
DEVANAGARI = [chr(c) for c in range(0x915, 0x939)] + ["\u094d", "\u093f", "\u0947"]
JAPANESE = [chr(c) for c in range(0x3041, 0x3097)] + [chr(c) for c in range(0x30A1, 0x30FB)] + ["\u30fb", "日", "本", "語", "例", "え"]
HANGUL = [chr(c) for c in range(0xAC00, 0xAC40)] + [chr(c) for c in range(0x1100, 0x1113)] + [chr(c) for c in range(0x1161, 0x1170)]
IGNORED = ["\u00ad", "\u200b", "\ufe00", "\ufe0f", "\u2060", "\u180b"]
SYMBOLS = list("☃♥★©®✓€$%&!*+,/:;<=>?@[]^`{|}~ ") + ["\u2215", "\u2044", "\u00b7", "\u0640", "\u3000"]
TLDS = ["com", "jp", "de", "xn--zckzah", "テスト", "рф", "ＣＯＭ", "org"]


def assigned(c):
    return unicodedata.name(c, None) is not None or unicodedata.category(c) in ("Cc", "Cf", "Co", "Zs")


def random_assigned():
    while True:
        c = chr(rng.choice([rng.randrange(0xA0, 0x3000), rng.randrange(0x3000, 0xFFFF), rng.randrange(0x10000, 0x1FAFF)]))
        if unicodedata.category(c) not in ("Cs", "Cn", "Co") and assigned(c):
            return c


POOLS = {
    "fullwidth": (FULLWIDTH + LATIN[:62], 6),
    "compatibility": (COMPATIBILITY + LATIN[:36], 5),
    "deviation": (DEVIATION + LATIN[:26] + GREEK[:20], 5),
    "latin": (LATIN + COMBINING, 7),
    "greek": (GREEK + LATIN[:10], 6),
    "cyrillic": (CYRILLIC + LATIN[:10], 6),
    "hebrew": (HEBREW + list("0123456789-") + COMBINING[:1], 5),
    "arabic": (ARABIC + ["\u200c", "\u200d"] + list("0123456789-"), 5),
    "devanagari": (DEVANAGARI + ["\u200c", "\u200d"], 5),
    "japanese": (JAPANESE + ["\u30fb", "\u00b7"] + list("abc"), 5),
    "hangul": (HANGUL, 4),
    "ignored": (IGNORED + LATIN[:26], 6),
    "symbols": (SYMBOLS + LATIN[:26], 5),
    "random": (None, 4),
}


def label(category):
    pool, longest = POOLS[category]
    length = rng.randint(1, longest)
    if pool is None:
        return "".join(random_assigned() for _ in range(length))
    return "".join(rng.choice(pool) for _ in range(length))


def xn_label():
    # A valid A-label from a real U-label, sometimes mutated or upper-cased.
    for _ in range(50):
        try:
            encoded = idna.encode(label(rng.choice(["latin", "greek", "japanese", "hebrew", "arabic", "deviation"])), uts46=True).decode()
        except idna.IDNAError:
            continue
        if not encoded.startswith("xn--"):
            continue
        roll = rng.random()
        if roll < 0.3:
            position = rng.randrange(4, len(encoded))
            encoded = encoded[:position] + rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") + encoded[position + 1:]
        elif roll < 0.4:
            encoded = encoded.upper()
        return encoded
    return "xn--bcher-kva"


def applicable(name):
    try:
        mapped = idna.core.uts46_remap(name, std3_rules=False, transitional=False)
    except idna.IDNAError:
        return True
    for part in mapped.split("."):
        if part.isascii() and not part.lower().startswith("xn--"):
            if "_" in part or part.startswith("-") or part.endswith("-") or part[2:4] == "--":
                return False
    return True


cases = []
categories = list(POOLS) + ["xn", "mixed"]
while len(cases) < count:
    category = categories[len(cases) % len(categories)]
    if category == "xn":
        labels = [xn_label()] + ([label("latin")] if rng.random() < 0.3 else [])
    elif category == "mixed":
        labels = [label(rng.choice(list(POOLS))) for _ in range(rng.randint(1, 3))]
    else:
        labels = [label(category) for _ in range(rng.randint(1, 2))]
    name = ".".join(labels + [rng.choice(TLDS)])
    if rng.random() < 0.1:
        name += rng.choice([".", "\u3002"])
    if not applicable(name):
        continue
    try:
        expected = idna.encode(name, uts46=True).decode("ascii").rstrip(".")
    except (idna.IDNAError, UnicodeError):
        expected = None
    cases.append([name, expected, category])

json.dump({"idna": getattr(idna, "__version__", "?"), "uts46": idna.uts46data.__version__,
           "unicodedata": unicodedata.unidata_version, "cases": cases}, sys.stdout, ensure_ascii=True)
