"""Bytes a builder makes from its arguments alone, kept for the next call with the same arguments.

The gates replay a dozen plans per task that differ in one call; the other calls write the same
document, PDF, mail or event again (the same text, title and office time). Those builders are pure
(every stamp is an argument), so ``remembered`` keeps each one's latest ``MAX_ENTRIES`` results.
Results must be immutable (bytes, tuples of frozen records). An error is never kept: the next
call raises it again. Calls whose text and bytes arguments are over ``MAX_CHARS`` long together,
or whose arguments cannot be hashed (a list), are made every time, so a stranger's huge text is
not held. A builder whose arguments are no key (an openpyxl workbook) keeps its results in a
:class:`Kept` of its own, by a key it makes of what decides its bytes with :func:`key_part`.
``remembered_text`` is the same for a reading of one text (what a keyword is, a mail's own words,
a text's dates in an order): a string is its own key, so the latest results are kept by
``functools.lru_cache``.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import datetime
from decimal import Decimal
from functools import lru_cache, wraps
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast

T = TypeVar("T")
P = ParamSpec("P")
MAX_ENTRIES = 64
MAX_CHARS = 256 * 1024


def key_part(value: Any) -> Any:
    """A value as part of a key, apart from every value that builds apart though Python holds them
    equal: with its type (``1``, ``1.0`` and ``True``), a float by its ``repr`` (``0.0`` and
    ``-0.0``), a time with its zone and fold (two equal instants in two zones are written apart),
    and a tuple or frozenset by what it holds, each part so kept apart (``(1, 0.0)`` and
    ``(True, -0.0)``)."""
    if isinstance(value, tuple):
        return tuple, tuple(key_part(v) for v in value)
    if isinstance(value, frozenset):
        return frozenset, frozenset(key_part(v) for v in value)
    if isinstance(value, datetime):
        return datetime, value.isoformat(), repr(value.tzinfo), value.fold
    if isinstance(value, (float, complex, Decimal)):
        return type(value), repr(value)
    return type(value), value


class Kept(Generic[T]):
    """The latest ``entries`` results made, by key: the bounded cache each builder keeps (the least
    recently used result goes first). Threads may share one (a model's surfers run at once): each
    step is one operation of the ordered dict, and an entry another thread drops between two steps
    is a miss, never an error."""

    def __init__(self, entries: int = MAX_ENTRIES) -> None:
        self._entries = entries
        self._results: OrderedDict[Hashable, T] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """The result kept for ``key``, or ``make()``'s, then kept (an error is raised, not kept)."""
        try:
            self._results.move_to_end(key)
            return self._results[key]
        except KeyError:
            pass
        value = self._results[key] = make()
        while len(self._results) > self._entries:
            try:
                self._results.popitem(last=False)
            except KeyError:  # emptied by another thread meanwhile
                break
        return value

    def find(self, key: Hashable) -> T | None:
        """The result kept for ``key`` (then the most recently used), or None."""
        try:
            self._results.move_to_end(key)
            return self._results[key]
        except KeyError:
            return None

    def __contains__(self, key: Hashable) -> bool:
        return key in self._results

    def __len__(self) -> int:
        return len(self._results)

    def clear(self) -> None:
        self._results.clear()


def _size(values: Any) -> int:
    return sum(len(v) for v in values if isinstance(v, (str, bytes)))


def remembered(build: Callable[..., T]) -> Callable[..., T]:
    """``build`` with its latest results kept (see the module's docstring); ``.cache_clear()`` empties them."""
    kept: Kept[T] = Kept()

    @wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        if _size(args) + _size(kwargs.values()) > MAX_CHARS:
            return build(*args, **kwargs)
        key = (tuple(map(key_part, args)), tuple(sorted((k, key_part(v)) for k, v in kwargs.items())))
        try:
            hash(key)
        except TypeError:  # an argument that cannot be a key
            return build(*args, **kwargs)
        return kept.get(key, lambda: build(*args, **kwargs))

    wrapper.cache_clear = kept.clear  # type: ignore[attr-defined]  # as functools.lru_cache's
    return wrapper


def remembered_text(entries: int, max_chars: int
                    ) -> Callable[[Callable[Concatenate[str, P], T]], Callable[Concatenate[str, P], T]]:
    """A pure reading of one text (and of the hashable arguments after it, such as a date order)
    with the latest ``entries`` calls' results kept (immutable results; an error is raised, not
    kept); a text over ``max_chars`` is read every time, so a stranger's long text is not held. The
    reading's ``cache_clear`` and ``cache_info`` are ``functools.lru_cache``'s, its ``__wrapped__``
    reads afresh."""
    def wrap(read: Callable[Concatenate[str, P], T]) -> Callable[Concatenate[str, P], T]:
        kept = lru_cache(maxsize=entries)(read)
        reading: Callable[Concatenate[str, P], T]
        if _takes_text_alone(read):  # most readings: the same calls without packing *args and **kwargs
            plain, plain_kept = cast(Callable[[str], T], read), cast(Callable[[str], T], kept)

            def reading_text(text: str) -> T:
                return plain(text) if len(text) > max_chars else plain_kept(text)

            reading = cast(Callable[Concatenate[str, P], T], wraps(read)(reading_text))
        else:
            def reading_with(text: str, *args: P.args, **kwargs: P.kwargs) -> T:
                if len(text) > max_chars:
                    return read(text, *args, **kwargs)
                return kept(text, *args, **kwargs)  # type: ignore[arg-type]  # lru_cache's: hashable arguments

            reading = wraps(read)(reading_with)
        reading.cache_clear = kept.cache_clear  # type: ignore[attr-defined]  # as functools.lru_cache's
        reading.cache_info = kept.cache_info  # type: ignore[attr-defined]
        return reading
    return wrap


def _takes_text_alone(read: Callable[..., Any]) -> bool:
    """Whether ``read`` takes exactly one argument, its text (none after it, none by keyword only)."""
    try:
        parameters = list(inspect.signature(read).parameters.values())
    except (TypeError, ValueError):  # no signature to read: the general wrapper
        return False
    return len(parameters) == 1 and parameters[0].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                           inspect.Parameter.POSITIONAL_OR_KEYWORD)
