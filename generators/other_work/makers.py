"""The values a fragment's slots are filled with (people who are in that day, projects, money,
clock times, dates said the way the banks say them, files): :class:`SlotValues`, a part of the
composer (:class:`generators.other_work.composer.OtherWork`)."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Callable

from generators.chances import OTHER_WORK
from generators.other_work.bank import MONTHS, OUTSIDER_KEYS, PEOPLE_KEYS, WEEKDAYS
from generators.other_work.office import Clock, Office, Whereabouts
from generators.other_work.story import Ctx, NoValue, add_workdays, fill, month_add, slug
from generators.other_work.tables import BANK, DATA, FRAGS, SOURCE
from generators.spoken_time import ordinal


class SlotValues:
    """The slot values of one history's other work: :meth:`make` fills a slot of an exchange
    (``Ctx.maker``); :meth:`on`, :meth:`day` and :meth:`absolute` say a day as the banks do.
    Values are drawn from ``rng`` (the composer's stream), of ``office``'s people, projects and
    files, on ``clock``'s day, with nobody ``where`` has away."""

    def __init__(self, *, rng: random.Random, office: Office, clock: Clock, where: Whereabouts) -> None:
        self.rng = rng
        self.office = office
        self.clock = clock
        self.where = where

    def make(self, ctx: Ctx, key: str) -> str:
        """A value for slot ``key`` of an exchange (``ctx``): made by Python, or a bank's data row
        that agrees with the values ``ctx`` holds (setting that row's other slots as well)."""
        maker = _MAKERS.get(key)
        if maker is not None:
            return maker(self, ctx)
        section = SOURCE.get(key)
        if section is None:
            raise NoValue(key)
        fields = BANK[section].fields or ()
        rows = DATA[section]
        # a row that agrees with the fields already set (a supplier's address with its own name)
        fixed = [(i, ctx[f]) for i, f in enumerate(fields) if f != key and f in ctx]
        if fixed:
            rows = tuple(r for r in rows if all(not r[i].slots and r[i].text == v for i, v in fixed)) or rows
        row = self.rng.choice(rows)
        value = ""
        for fname, frag in zip(fields, row):
            if fname in ctx and fname != key:
                continue
            text, used = fill(frag, ctx)
            if fname == key:
                value = text
            else:
                ctx.put(fname, text)
            if used:
                ctx.deps[fname] = used
        if not value:
            raise NoValue(key)
        return value

    def _person(self, ctx: Ctx) -> str:
        taken = {ctx.get(k) for k in PEOPLE_KEYS}
        today = self.clock.today
        free = [p for p in self.office.people if p not in taken and not self.where.is_away(p, today)]
        if self.where.absent:  # in the office today and on every day this exchange names
            days = self._known_days(ctx)
            free = [p for p in free if self.where.clear(p, days)]
        if not free:
            raise NoValue("colleague")
        return self.rng.choice(free)

    def _known_days(self, ctx: Ctx) -> list[date]:
        """Today and every day this exchange's slots name so far."""
        return [self.clock.today, *(d for k, d in ctx.days.items() if k in ctx)]

    def _outsider(self, ctx: Ctx) -> str:
        taken = {ctx.get(k) for k in OUTSIDER_KEYS}
        where, today = self.where, self.clock.today
        free = [p for p in self.office.outsiders
                if p not in taken and p not in where.busy and not where.is_away(p, today)]
        if not free:
            raise NoValue("outsider")
        return self.rng.choice(free)

    def _project(self, ctx: Ctx) -> str:
        taken = {ctx.get("project"), ctx.get("project2")}
        free = [p for p in self.office.projects if p not in taken]
        if not free:
            raise NoValue("project")
        return self.rng.choice(free)

    def _money(self, lo: int, hi: int, cents: float = OTHER_WORK.cents) -> str:
        rng = self.rng
        v = rng.randint(lo, hi)
        if v >= 1000:
            v = v // 50 * 50 if rng.random() < OTHER_WORK.round_money else v
        if rng.random() < cents:
            return f"{self.office.currency}{v:,}.{rng.randint(1, 99):02d}"
        return f"{self.office.currency}{v:,}"

    def _pct(self) -> str:
        rng = self.rng
        if rng.random() < OTHER_WORK.decimal_pct:
            return f"{rng.randint(2, 40)}.{rng.randint(1, 9)}%"
        return f"{rng.randint(2, 48)}%"

    def _count(self, lo: int = 12, hi: int = 9_800) -> str:
        return f"{self.rng.randint(lo, hi):,}"

    def _clock_time(self, lo: int = 8 * 60, hi: int = 17 * 60 + 30) -> str:
        m = self.rng.randrange(lo, hi, 15)
        return f"{m // 60}:{m % 60:02d}"

    def _past_clock(self) -> str:
        """A time earlier today, at least half an hour before now ("sent at 9:15" said at 10:02)."""
        latest = self.clock.now.hour * 60 + self.clock.now.minute - 30
        if latest < 8 * 60:
            raise NoValue("past_clock")
        return self._clock_time(8 * 60, latest + 1)

    @staticmethod
    def _dated(ctx: Ctx, key: str, day: date) -> date:
        """``day``, noted as the day slot ``key`` names."""
        ctx.days[key] = day
        return day

    def _past_day(self, min_hour_today: int = 11) -> date:
        now = self.clock.now
        if now.hour >= min_hour_today and now.weekday() < 5 and self.rng.random() < OTHER_WORK.past_today:
            return self.clock.today
        return add_workdays(self.clock.today, -self.rng.choice((1, 1, 2, 3, 4)))

    def _met_on(self, ctx: Ctx) -> str:
        rng = self.rng
        day = self._past_day(12)
        if day == self.clock.today:
            latest = self.clock.now.hour * 60 + self.clock.now.minute - 20
            start = rng.randrange(8 * 60, max(8 * 60 + 15, latest - 45), 15)
            end = min(start + rng.choice((30, 45, 60, 75, 90)), latest // 15 * 15)
            if end <= start:
                day = add_workdays(self.clock.today, -1)
        if day != self.clock.today:
            start = rng.randrange(8 * 60 + 30, 16 * 60, 15)
            end = start + rng.choice((30, 45, 60, 75, 90, 120))
        ctx.put("start", f"{start // 60}:{start % 60:02d}")
        ctx.put("end", f"{end // 60}:{end % 60:02d}")
        return self.on(self._dated(ctx, "met_on", day))

    def _meeting_time(self, ctx: Ctx, key: str) -> str:
        if "met_on" not in ctx:
            ctx["met_on"]  # sets start and end as well
        if key not in ctx:
            raise NoValue(key)
        return ctx[key]

    def _file(self, ctx: Ctx, key: str) -> str:
        rng = self.rng
        other = ctx.get("file2" if key == "file" else "file")
        for _ in range(6):
            row = rng.choice(DATA["data.filename"])
            name = row[0].text.format_map(ctx) if row[0].slots else row[0].text
            if name != other and not self.office.like_office_file(name):
                return name
        raise NoValue(key)

    def _office_file(self, pool: tuple[str, ...], key: str) -> str:
        if not pool:
            raise NoValue(key)
        return self.rng.choice(pool)

    def _later_month(self) -> tuple[int, int]:
        return month_add(self.clock.today, 1 if self.clock.today.day <= 12 else 2)

    def _next_q(self) -> str:
        t = self.clock.today
        q = (t.month - 1) // 3 + 1
        y = t.year
        q, y = (q + 1, y) if q < 4 else (1, y + 1)
        first = date(y, 3 * q - 2, 1)
        if (first - t).days < 30:
            q, y = (q + 1, y) if q < 4 else (1, y + 1)
        return f"Q{q}" if y == t.year else f"Q{q} {y}"

    # ---- date phrases -------------------------------------------------------------------

    def _phrase(self, section: str, d: date) -> str:
        frag = self.rng.choice(FRAGS[section])
        if not frag.slots:
            return frag.text
        return frag.text.format(wday=WEEKDAYS[d.weekday()], month=MONTHS[d.month - 1], day=d.day,
                                ord=ordinal(d.day))

    def _rel(self, d: date) -> str:
        t = self.clock.today
        diff = (d - t).days
        if diff == 0:
            return "today"
        if diff == -1:
            return "yesterday"
        if diff == 1:
            return "tomorrow"
        wk = (d - timedelta(days=d.weekday())) - (t - timedelta(days=t.weekday()))
        weeks = wk.days // 7
        if diff < 0:
            return "past_week" if weeks == 0 else "last_week" if weeks == -1 else "past_far"
        return "this_week" if weeks == 0 else "next_week" if weeks == 1 else "far"

    def on(self, d: date) -> str:
        """An adverbial phrase for day ``d`` seen from today: "yesterday", "on Tuesday", "next Friday"."""
        return self._phrase(f"date.on.{self._rel(d)}", d)

    def day(self, d: date) -> str:
        """A noun phrase for a future day ``d``: "tomorrow", "Friday", "next Tuesday", "March 14"."""
        rel = self._rel(d)
        if rel == "today":
            rel = "this_week"
        return self._phrase(f"date.day.{rel}", d)

    def absolute(self, d: date) -> str:
        return self._phrase("date.abs", d)


# A slot made by Python: its value for a history's slot values and an exchange's context. Taking the
# slot values as an argument (rather than closing over them) keeps one table for every history and
# no reference cycle in a history's own objects (they are freed by reference counting).
Maker = Callable[[SlotValues, Ctx], str]


def _month_name(n: int) -> Maker:
    return lambda s, c: MONTHS[month_add(s.clock.today, n)[1] - 1]


def _later_date(key: str) -> Maker:
    def make(s: SlotValues, c: Ctx) -> str:
        y, m = s._later_month()
        return s.absolute(s._dated(c, key, date(y, m, s.rng.randint(3, 26))))
    return make


def _start_date(s: SlotValues, c: Ctx) -> str:
    return s.absolute(s._dated(c, "start_date", add_workdays(s.clock.today, s.rng.randint(10, 25))))


def _next_day(s: SlotValues) -> date:
    return add_workdays(s.clock.today, s.rng.randint(1, 7))


_MAKERS: dict[str, Maker] = {
    "user": lambda s, c: s.office.user,
    "company": lambda s, c: s.office.company,
    "domain": lambda s, c: s.office.domain,
    "colleague": SlotValues._person, "colleague2": SlotValues._person, "colleague3": SlotValues._person,
    "helper": SlotValues._person, "cover": SlotValues._person, "owner": SlotValues._person,
    "colleague_lc": lambda s, c: slug(c["colleague"]).replace("_", "."),
    "colleague2_lc": lambda s, c: slug(c["colleague2"]).replace("_", "."),
    "away_lc": lambda s, c: slug(c["away"]).replace("_", "."),
    "cover_lc": lambda s, c: slug(c["cover"]).replace("_", "."),
    "ext": lambda s, c: str(s.rng.randint(2000, 7999)),
    "prev_mon": lambda s, c: MONTHS[month_add(s.clock.today, -1)[1] - 1][:3].lower(),
    "project": SlotValues._project, "project2": SlotValues._project,
    "slug": lambda s, c: slug(c["project"]),
    "money": lambda s, c: s._money(300, 95_000),
    "money2": lambda s, c: s._money(300, 95_000),
    "money_small": lambda s, c: s._money(12, 480, OTHER_WORK.small_cents),
    "budget": lambda s, c: s._money(8_000, 240_000, 0.0),
    "salary": lambda s, c: s._money(34_000, 92_000, 0.0),
    "pct": lambda s, c: s._pct(), "pct2": lambda s, c: s._pct(),
    "count": lambda s, c: s._count(), "count2": lambda s, c: s._count(),
    "few": lambda s, c: str(s.rng.randint(3, 60)),
    "some": lambda s, c: str(s.rng.randint(40, 900)),
    "office_file": lambda s, c: s._office_file(s.office.files, "office_file"),
    "office_sheet": lambda s, c: s._office_file(s.office.sheets, "office_sheet"),
    "office_doc": lambda s, c: s._office_file(s.office.docs, "office_doc"),
    "outsider": SlotValues._outsider,
    "outsider_lc": lambda s, c: slug(c["outsider"]).replace("_", "."),
    "past_clock": lambda s, c: s._past_clock(),
    "attendees": lambda s, c: str(s.rng.randint(5, 46)),
    "pages": lambda s, c: str(s.rng.randint(3, 64)),
    "years": lambda s, c: str(s.rng.randint(3, 22)),
    "week": lambda s, c: str(max(1, s.clock.today.isocalendar()[1] - s.rng.randint(0, 1))),
    "floor": lambda s, c: str(s.rng.randint(2, 9)),
    "decimal": lambda s, c: f"{s.rng.randint(1, 9)}.{s.rng.choice((2, 25, 4, 5, 6, 75, 8))}",
    "hours": lambda s, c: (f"{s.rng.randint(4, 38)}.5" if s.rng.random() < OTHER_WORK.half_hours
                           else str(s.rng.randint(4, 40))),
    "score": lambda s, c: f"{s.rng.randint(6, 9)}.{s.rng.randint(0, 9)}",
    "score_pct": lambda s, c: f"{s.rng.randint(71, 98)}%",
    "desk": lambda s, c: f"{s.rng.randint(2, 6)}.{s.rng.randint(10, 48)}",
    "clock": lambda s, c: s._clock_time(), "start": lambda s, c: s._meeting_time(c, "start"),
    "end": lambda s, c: s._meeting_time(c, "end"),
    "file": lambda s, c: s._file(c, "file"), "file2": lambda s, c: s._file(c, "file2"),
    "v": lambda s, c: str(s.rng.randint(2, 6)),
    "mon": lambda s, c: MONTHS[s.clock.today.month - 1][:3].lower(),
    "mmdd": lambda s, c: f"{s.clock.today.month:02d}{add_workdays(s.clock.today, -s.rng.randint(0, 3)).day:02d}",
    "iso": lambda s, c: s._dated(c, "iso", add_workdays(s.clock.today, -s.rng.randint(0, 4))).isoformat(),
    "qn": lambda s, c: str((s.clock.today.month - 1) // 3 + 1),
    "code": lambda s, c: (f"{''.join(s.rng.choice('ABCDEFGHJKLMNPRSTUVW') for _ in range(2))}-"
                          f"{s.rng.randint(10_000, 99_999)}"),
    "q": lambda s, c: f"Q{(s.clock.today.month - 1) // 3 + 1}",
    "prev_q": lambda s, c: f"Q{(s.clock.today.month - 1) // 3 or 4}",
    "next_q": lambda s, c: s._next_q(),
    "this_month": _month_name(0), "prev_month": _month_name(-1), "prev_month2": _month_name(-2),
    "later_month": lambda s, c: MONTHS[s._later_month()[1] - 1],
    "later_date": _later_date("later_date"), "later_date2": _later_date("later_date2"),
    "start_date": _start_date,
    "past_on": lambda s, c: s.on(s._dated(c, "past_on", s._past_day())),
    "met_on": SlotValues._met_on,
    "next_on": lambda s, c: s.on(s._dated(c, "next_on", _next_day(s))),
    "next_date": lambda s, c: s.absolute(s._dated(c, "next_date", _next_day(s))),
}
