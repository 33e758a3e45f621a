"""Bytes a builder makes from its arguments alone, kept for the next call with the same arguments.

The gates replay a dozen plans per task that differ in one call; the other calls write the same
document, PDF, mail or event again (the same text, title and office time). Those builders are pure
(every stamp is an argument), so ``remembered`` keeps each one's latest ``MAX_ENTRIES`` results.
Results must be immutable (bytes, tuples of frozen records). An error is never kept: the next
call raises it again. Calls whose text and bytes arguments are over ``MAX_CHARS`` long together,
or whose arguments cannot be hashed (a list), are made every time, so a stranger's huge text is
not held.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import Any, TypeVar

T = TypeVar("T")
MAX_ENTRIES = 64
MAX_CHARS = 256 * 1024


def _part(value: Any) -> Any:
    """A value as part of a key: with its type (``1`` and ``1.0`` are equal, and build apart), and a
    time with its zone and fold (two equal instants in two zones are written apart)."""
    if isinstance(value, datetime):
        return datetime, value.isoformat(), repr(value.tzinfo), value.fold
    return type(value), value


def _size(values: Any) -> int:
    return sum(len(v) for v in values if isinstance(v, (str, bytes)))


def remembered(build: Callable[..., T]) -> Callable[..., T]:
    """``build`` with its latest results kept (see the module's docstring); ``.cache_clear()`` empties them."""
    cache: OrderedDict[Any, T] = OrderedDict()

    @wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        key = (tuple(map(_part, args)), tuple(sorted((k, _part(v)) for k, v in kwargs.items())))
        try:
            found = key in cache
        except TypeError:  # an argument that cannot be a key
            return build(*args, **kwargs)
        if found:
            cache.move_to_end(key)
            return cache[key]
        value = build(*args, **kwargs)
        if _size(args) + _size(kwargs.values()) <= MAX_CHARS:
            cache[key] = value
            if len(cache) > MAX_ENTRIES:
                cache.popitem(last=False)
        return value

    wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]  # as functools.lru_cache's
    return wrapper
