"""The currencies an office writes its amounts in.

An office's invoices, policies and mails quote money in its own city's currency (a Leeds office
pays in GBP, a Toronto one in CAD). Readers of those texts -- the task families that find a quote
or a limit in them, the checks that accept a cell written as money -- match any of these codes.
"""

from __future__ import annotations

CURRENCY_CODES: tuple[str, ...] = ("USD", "EUR", "GBP", "CAD", "AUD", "NZD", "SGD", "ZAR")
CODE = "(?:" + "|".join(CURRENCY_CODES) + ")"  # a regular-expression piece matching one code
DOLLARS = ("USD", "CAD", "AUD", "NZD", "SGD")  # said with a dollar sign in the office's own chat


def spoken_prefix(code: str) -> str:
    """What a person in the office writes before an amount in chat: ``$`` for their own dollars,
    else the code (``EUR 207``); the code must be one of ``CURRENCY_CODES``."""
    if code not in CURRENCY_CODES:
        raise ValueError(f"unknown currency code {code!r}")
    return "$" if code in DOLLARS else f"{code} "
