"""The composer: :class:`SmallTalk`, the small talk of one history (see the package docstring)."""

from __future__ import annotations

import random
import re
from datetime import date, datetime, timedelta
from typing import Any, Callable, Sequence

from backends.tokens import count_tokens
from generators.chances import SMALL_TALK
from generators.dialogue_bank import BankError
from generators.english import near_key, repeats_itself
from generators.small_talk.bank import (
    BEATS_NOW,
    FITTING,
    FLAGS,
    GROUP_TOPICS,
    KNOWN_FLAGS,
    MAX_TOKENS,
    MIN_WORDS,
    SURELY_SHORT,
    TOPIC_INFO,
    Entry,
    WordingsExhausted,
)
from generators.small_talk.bank import bounded as _bounded
from generators.small_talk.calendar_facts import (
    CITY_CLIMATE,
    CLIMATES,
    DAY_FLAGS,
    DEFAULT_CLIMATE,
    HEAT,
    MONTHS,
    NORTH_SEASONS,
    SNOWY,
    SOUTH_SEASONS,
    WEATHER_FLAGS,
    WEEKDAYS,
    holiday_on,
)
from generators.small_talk.tables import (
    A_SPACE,
    ADDRESS_POOL,
    ANSWER_REFS,
    ANSWERS,
    BEAT_POOLS,
    BEFORE_A,
    FAMILIES,
    GROUP_RELEVANT,
    KEPT,
    POOLS,
    SPACE_PUNCT,
    TOPIC_BEATS,
    TOPIC_POOLS,
    TOPIC_RELEVANT,
    VOWELS,
    Day,
    Lazy,
    NoFit,
    drawable,
    eligible,
    entry_slots,
    fitting_answers,
    kid_flags,
    slot_bits,
    time_flags,
    too_long,
    weighted,
)
from office_env.seeding import rng as seeded

_WEEKDAY_WORDS = tuple(re.compile(rf"\b{name}\b") for name in WEEKDAYS)  # a weekday as a word of its own


def _pool_named(part: tuple, aliases: dict[str, str]) -> str:
    """The pool a reference part of an entry names under the exchange's ``aliases`` (its own name
    when it names none): what the follow-up checks look up; ``_expand`` also refuses a missing alias."""
    return aliases.get(part[1], "") + part[2] if part[1] else part[3]


class SmallTalk:
    """Composes the small talk of one history (one object per history)."""

    def __init__(self, *, rng: random.Random, user_first: str, assistant: str,
                 colleagues: Sequence[str], company: str, city: str, projects: Sequence[str],
                 avoid: Callable[[str], bool] = lambda text: True,
                 absences: Sequence[tuple[str, date, date]] = ()) -> None:
        """``absences``: ``(first name, first day, last day)`` of each span the office shows a
        colleague away; the small talk of those days does not name them."""
        self._avoid = avoid
        self._absent: dict[str, list[tuple[date, date]]] = {}
        self._present_on: dict[date, list[str]] = {}  # day -> the colleagues in (see _present)
        for name, first, last in absences:
            self._absent.setdefault(name, []).append((first, last))
        self._aliases_base: dict[str, str] = {}
        self._address = ""  # ", <user>" as the assistant addresses the user
        seed = rng.getrandbits(64)
        self._seed = seed
        self._rng = seeded(seed, "small_talk")
        self.city = city
        climate = CITY_CLIMATE.get(city, DEFAULT_CLIMATE)
        self._climate, self._hemisphere, self._country, self._dark = climate
        self._said: set[str] = set()
        self._cores: set[str] = set()  # near_key of every line said: no line comes back with another name
        self._facts: dict[str, tuple[Entry, dict, dict[str, str]]] = {}  # fact pool -> what it says
        self._told: set[str] = set()  # fact pools told in this history
        self._stories: set[int] = set()  # id() of story entries told in this history
        self._drawn: list[tuple[str, object]] = []  # facts and stories drawn in the current exchange
        self._asked: dict[str, str] = {}  # a follow-up question (names aside) -> the beat it asked
        self._asking: list[tuple[str, str]] = []  # the questions of the current exchange
        self._beats_today: set[str] = set()  # the follow-up beats asked on self._today
        self._kinds = KEPT
        self._want: frozenset[str] = frozenset()  # the kinds of answer the question just asked expects
        self._picked: Entry | None = None  # the entry of the last line drawn by _line
        self._retell = False  # a story told already may be told again (nothing else fits)
        # strict: the caller has other talk to fill in with (``WordingsExhausted`` is not the end),
        # so no story is told again and no line comes back with only its names changed
        self.strict = False
        self._rare_used: set[str] = set()
        self._topic_uses: dict[str, int] = {}
        self._today: date | None = None
        self._today_uses: dict[str, int] = {}  # topic -> uses on self._today
        self._recent: list[str] = []
        self._days: dict[date, Day] = {}
        self._weekends: dict[date, tuple[str, str]] = {}
        self._snow_days: set[date] = set()
        self.log: list[tuple[datetime, str, list[tuple[str, str]]]] = []
        """Everything produced, in order: ``(when, topic, [(role, text), ...])``."""
        self._colleagues = [c for c in dict.fromkeys(colleagues) if c and c.strip() and avoid(c)]
        self._projects = [p for p in dict.fromkeys(projects) if p and p.strip() and avoid(p)]
        self._make_persona(seeded(seed, "persona"), user_first, assistant, company)

    # -- persona -----------------------------------------------------------------------------

    def _draw(self, rng: random.Random, pool: str, ctx: dict[str, str], flags: int,
              taken: set[str] | None = None) -> str:
        """A fragment of ``pool`` that ``avoid`` accepts (and not in ``taken``)."""
        entries = eligible(pool, flags)
        if not entries:
            raise ValueError(f"small talk: pool {pool!r} has no entry for this persona")
        for _ in range(40):
            text = self._expand(entries[int(rng.random() * len(entries))].parts, ctx, flags,
                                self._aliases_base, rng)
            if (taken is None or text.lower() not in taken) and self._avoid(text):
                if taken is not None:
                    taken.add(text.lower())
                return text
        raise ValueError(f"small talk: every {pool!r} value is rejected by avoid(); cannot compose a persona")

    def _number(self, rng: random.Random, draw: Callable[[], int]) -> str:
        """A persona's number (a bus route, minutes of commute) that ``avoid`` accepts: drawn
        again while it is one of the task's values, since every fragment would hold it."""
        for _ in range(40):
            text = str(draw())
            if self._avoid(text):
                return text
        raise ValueError("small talk: every number drawn is rejected by avoid(); cannot compose a persona")

    def _make_persona(self, rng: random.Random, user_first: str, assistant: str, company: str) -> None:
        names: set[str] = {n.lower() for n in (user_first, assistant, *self._colleagues) if n}
        ctx: dict[str, str] = {"city": self.city} if self.city else {}  # no city: its lines are not said
        flags: set[str] = set()
        aliases: dict[str, str] = {}
        base = FLAGS.mask([self._country]) if self._country in KNOWN_FLAGS else 0
        if user_first and self._avoid(user_first):
            ctx["user"] = user_first
            self._address = ", " + user_first
        if assistant and self._avoid(assistant):
            ctx["assistant"] = assistant
        if company and self._avoid(company):
            ctx["company"] = company
        for slot in ("mum", "dad", "vacation", "football", "apartment", "partner_rel"):
            ctx[slot] = self._draw(rng, f"word.{slot}", ctx, base)
        if self._country in ("us", "ca", "uk", "ie", "au", "nz", "za", "sg"):
            flags.add("english")

        hobby = FAMILIES["hobbies"][int(rng.random() * len(FAMILIES["hobbies"]))]
        aliases["hob"] = f"hobbies.{hobby}"
        flags.add("outdoor_hobby" if f"hobbies.{hobby}.outdoor" in POOLS else "indoor_hobby")
        pet = self._household(rng, ctx, flags, aliases, base, names)
        mode = self._commute(rng, ctx, flags, aliases)
        pflags = FLAGS.mask(flags) | base
        self._places(rng, ctx, pflags, hobby, mode)

        # The address pool's texts for this person (", Dana" or nothing), drawn from directly.
        you = []
        for entry in POOLS[ADDRESS_POOL].entries:
            try:
                you.append(self._expand(entry.parts, ctx, pflags, aliases, rng))
            except NoFit:  # no usable name: that entry is left out
                continue
        self._you = tuple(you) or ("",)
        self._persona_flags = pflags | self._slot_bits(ctx)
        self._exchange_bits = -1  # slot bits of a whole exchange context: the same for every exchange
        self._persona = ctx
        self.persona: dict[str, str] = dict(ctx, hobby_id=hobby, pet_kind=pet, commute=mode,
                                            kids=", ".join(f"{n} ({a})" for n, _, a in self._kids))
        """The persona, for reports and tests (slot -> value)."""

    def _household(self, rng: random.Random, ctx: dict[str, str], flags: set[str], aliases: dict[str, str],
                   base: int, names: set[str]) -> str:
        """The person's pet, partner, children, sibling, friend, neighbour and home; returns the
        kind of pet ("" for none)."""
        def person(gender: str | None = None) -> tuple[str, str]:
            g = gender or ("f" if rng.random() < SMALL_TALK.woman else "m")
            return self._draw(rng, f"names.{g}", ctx, base, names), g

        r = rng.random()
        dog, cat = SMALL_TALK.pet
        pet = "dog" if r < dog else "cat" if r < cat else ""
        if pet:
            flags |= {"pet", pet}
            aliases["pet"] = f"pets.{pet}"
            ctx["pet"] = self._draw(rng, f"names.pet.{pet}", ctx, base, names)
            ctx["pet_kind"] = pet
        if rng.random() < SMALL_TALK.partner:
            flags.add("partner")
            ctx["partner"], g = person()
        self._kids: list[tuple[str, str, int]] = []
        if rng.random() < SMALL_TALK.kids:
            flags.add("kids")
            for _ in range(1 + (rng.random() < SMALL_TALK.second_kid)):
                name, g = person()
                self._kids.append((name, self._draw(rng, f"word.kid_rel.{g}", ctx, base), 2 + int(rng.random() * 15)))
            if len(self._kids) == 2:
                flags.add("two_kids")
        if rng.random() < SMALL_TALK.sibling:
            flags.add("sib")
            ctx["sib"], g = person()
            ctx["sib_rel"] = self._draw(rng, f"word.sib_rel.{g}", ctx, base)
        ctx["friend"], _ = person()
        ctx["neighbour"], _ = person()
        home = rng.random()
        house, balcony = SMALL_TALK.home
        if home < house:
            flags |= {"house", "garden"}
        else:
            flags.add("flat")
            if home < balcony:
                flags.add("balcony")
        return pet

    def _commute(self, rng: random.Random, ctx: dict[str, str], flags: set[str], aliases: dict[str, str]) -> str:
        """How the person gets to work (its mode, bus number and minutes) and their city's aliases."""
        modes = {"bike": 2, "bus": 2.5, "train": 2.5, "drive": 2, "walk": 1.2}
        if self._climate in ("south_us",):
            modes["drive"] = 5
        mode = weighted(rng, modes)
        flags.add(mode)
        if mode in ("bus", "train"):
            flags.add("transit")
        aliases["com"] = f"commute.{mode}"
        city_key = re.sub(r"[^a-z]", "", self.city.lower())
        aliases["city"] = f"city.{city_key}" if city_key in FAMILIES["city"] else "city.default"
        self._aliases_base = aliases
        ctx["bus_no"] = self._number(rng, lambda: 2 + int(rng.random() * 90))
        ctx["commute_min"] = self._number(rng, lambda: 15 + 5 * int(rng.random() * 8))
        return mode

    def _places(self, rng: random.Random, ctx: dict[str, str], pflags: int, hobby: str, mode: str) -> None:
        """The person's street, home, line, local places, favourites and where their hobby happens."""
        def draw(slot: str, pool: str, taken: set[str] | None = None) -> None:
            ctx[slot] = self._draw(rng, pool, ctx, pflags | self._slot_bits(ctx), taken)

        for _ in range(40):
            street = self._draw(rng, "street.a", ctx, pflags) + " " + self._draw(rng, "street.b", ctx, pflags)
            if self._avoid(street):
                ctx["street"] = street
                break
        else:
            raise ValueError("small talk: every street name is rejected by avoid(); cannot compose a persona")
        draw("home", "word.home")
        draw("line", f"commute.{mode}.line")
        taken: set[str] = set()
        for slot, pool in (("cafe", "cafe.name"), ("park", "park.name"), ("bakery", "bakery.name"),
                           ("lunch_spot", "lunch_spot.name"), ("fav_food", "food.fav"), ("show", "media.show"),
                           ("book", "media.book"), ("podcast", "media.podcast"), ("trip_place", "trip.place")):
            draw(slot, pool, taken)
        draw("hobby", f"hobbies.{hobby}.name")
        draw("hob_spot", f"hobbies.{hobby}.spot")
        # "my Thursday lessons": the hobby happens that weekday only (flags hobby_day, hobby_eve)
        spot = ctx["hob_spot"]
        days = [i for i, name in enumerate(WEEKDAYS) if name in spot and _WEEKDAY_WORDS[i].search(spot)]
        self._hob_day: int | None = days[0] if days else None

    # -- calendar ----------------------------------------------------------------------------

    def _season(self, day: date) -> str:
        if self._hemisphere == "tropical":
            return ""
        table = SOUTH_SEASONS if self._hemisphere == "south" else NORTH_SEASONS
        return table[day.month - 1]

    def _day(self, day: date) -> Day:
        found = self._days.get(day)
        if found is not None:
            return found
        rng = seeded(self._seed, "small_talk_day", day.isoformat())
        season = self._season(day)
        weights = CLIMATES[self._climate]["all" if not season else season]
        kind = weighted(rng, weights)
        names = set(WEATHER_FLAGS[kind]) | {f"wx_{kind}", DAY_FLAGS[day.weekday()]}
        if season:
            names.add(season)
        names.add(self._hemisphere)
        if self._climate in SNOWY:
            names.add("snowy")
        if self._dark and season == "winter":
            names.add("dark_am")
        wd = day.weekday()
        names.add("weekend" if wd >= 5 else "workday")
        if wd in (3, 4):
            names.add("late_week")
        if self._hob_day is None or self._hob_day == wd:
            names.add("hobby_day")  # the hobby can happen this evening
        if self._hob_day is None or self._hob_day == (wd - 1) % 7:
            names.add("hobby_eve")  # ... and could have happened last night
        # Rare events: the first snow (early winter, no snow talked about before), a heat wave.
        if kind == "snow":
            early_winter = day.month in (10, 11, 12) and self._hemisphere == "north"
            if early_winter and self._climate in SNOWY and not any(d < day for d in self._snow_days):
                names.add("first_snow")
            self._snow_days.add(day)
        if kind == "hot" and season == "summer" and self._climate in HEAT:
            names.add("heat_wave")
        holiday = holiday_on(day, self._country)
        aliases = dict(self._aliases_base, wx=f"weather.{kind}")
        if holiday and f"hols.{holiday}.open" in POOLS:
            names.add("holiday")
            aliases["hol"] = f"hols.{holiday}"
        slots = {
            "weekday": WEEKDAYS[wd],
            "month": MONTHS[day.month - 1],
            "next_month": MONTHS[day.month % 12],
            "tomorrow": "tomorrow" if wd < 4 else WEEKDAYS[(wd + 1) % 7],
            "yesterday": "yesterday" if wd != 0 else "on Sunday",
        }
        if season:
            slots["season"] = season
        slots.update(self._weekend_slots(day))
        flags = FLAGS.mask(names) | self._slot_bits(slots)
        found = self._days[day] = Day(flags, slots, aliases, kind, {**self._persona, **slots})
        return found

    def _weekend_slots(self, day: date) -> dict[str, str]:
        """The weekend talked about on ``day``: the coming one (Thu/Fri), the last one (Monday)."""
        wd = day.weekday()
        if wd in (3, 4):
            saturday = day + timedelta(days=5 - wd)
        elif wd == 0:
            saturday = day - timedelta(days=2)
        else:
            return {}
        plan = self._weekends.get(saturday)
        if plan is None:
            rng = seeded(self._seed, "weekend", saturday.isoformat())
            ctx = dict(self._persona)
            flags = self._persona_flags | self._slot_bits(ctx)
            self._kid_slots(rng, ctx)
            flags |= self._kid_flags(ctx) | self._slot_bits(ctx)
            for _ in range(40):
                entries = eligible("weekend.plan", flags)
                entry = entries[int(rng.random() * len(entries))]
                if len(entry.fields) != 1:
                    raise BankError(f"{entry.where}: weekend.plan entries need two fields: plan | past")
                texts = [self._expand(p, ctx, flags, self._aliases_base, rng) for p in (entry.parts, *entry.fields)]
                if all(self._avoid(t) for t in texts):
                    plan = self._weekends[saturday] = (texts[0], texts[1])
                    break
            else:
                raise ValueError("small talk: every weekend plan is rejected by avoid()")
        return {"wk_plan": plan[0], "wk_past": plan[1]}

    _slot_bits = staticmethod(slot_bits)
    _kid_flags = staticmethod(kid_flags)
    _time_flags = staticmethod(time_flags)

    def _kid_slots(self, rng: random.Random, ctx: dict[str, str]) -> None:
        if not self._kids:
            return
        i = int(rng.random() * len(self._kids))
        name, rel, age = self._kids[i]
        ctx["kid"], ctx["kid_rel"], ctx["kid_age"] = name, rel, str(age)
        if len(self._kids) > 1:
            ctx["kid2"] = self._kids[1 - i][0]


    # -- expansion ---------------------------------------------------------------------------

    def _expand(self, parts: tuple, ctx: dict[str, Any], flags: int, aliases: dict[str, str],
                rng: random.Random, links: dict | None = None) -> str:
        """The text of ``parts``. With ``links`` (the fields of a captured entry), [a|b] groups
        with the same alternatives make the same choice."""
        out: list[str] = []
        add = out.append
        rand = rng.random
        for part in parts:
            kind = part[0]
            if kind == 0:
                add(part[1])
            elif kind == 3:
                options = part[1]
                if links is None:
                    add(options[int(rand() * len(options))])
                else:
                    i = links.get(options)
                    if i is None:
                        i = links[options] = int(rand() * len(options))
                    add(options[i])
            elif kind == 4:
                you = self._you
                add(you[int(rand() * len(you))])
            elif kind == 1:
                value = ctx.get(part[1])
                if value is None:
                    raise NoFit(part[1])
                if value.__class__ is Lazy:  # a capture's further field: expanded where it is used
                    sub = ctx if value.overlay is None else {**ctx, **value.overlay}
                    value = self._expand(value.parts, sub, value.flags, value.aliases, rng, value.links)
                if part[2] and value:
                    value = value[0].upper() + value[1:]
                elif value[:1] in VOWELS and out and out[-1][-2:] in A_SPACE and out[-1][-3:-2] in BEFORE_A:
                    out[-1] = out[-1][:-1] + "n "  # "a {park} mural" with Elm Park: "an Elm Park mural"
                add(value)
            else:
                if part[1]:
                    target = aliases.get(part[1])
                    if target is None:
                        raise NoFit(part[3])
                    name = target + part[2]
                    if part[1] == "city" and name not in POOLS:
                        name = "city.default" + part[2]
                else:
                    name = part[3]
                entries = eligible(name, flags)
                keeps = name in self._kinds  # a persona-fact or story pool
                if self._want and name in ANSWERS:  # only an answer of a kind the question expects
                    kept = self._facts.get(name) if keeps else None
                    entries = fitting_answers(entries, self._want, kept[0] if kept else None)
                if not entries:
                    raise NoFit(name)
                if keeps:
                    value = self._expand_kept(name, entries, part, ctx, flags, aliases, rng)
                    if part[4] and value:
                        value = value[0].upper() + value[1:]
                    add(value)
                    continue
                entry = entries[int(rand() * len(entries))]
                if part[5]:  # a capture: its fields share their [a|b] choices
                    chosen: dict = {}
                    value = self._expand(entry.parts, ctx, flags, aliases, rng, chosen)
                    ctx[part[5]] = value
                    for field_name, fparts in zip(part[6], entry.fields):
                        ctx[field_name] = Lazy(fparts, flags, aliases, chosen)
                else:
                    value = self._expand(entry.parts, ctx, flags, aliases, rng)
                if part[4] and value:
                    value = value[0].upper() + value[1:]
                add(value)
        return "".join(out)

    def _expand_kept(self, name: str, entries: tuple[Entry, ...], part: tuple, ctx: dict, flags: int,
                     aliases: dict[str, str], rng: random.Random) -> str:
        """A draw from a persona-fact or story pool (``self._kinds[name]``): a fact keeps the entry,
        choices and names it was first drawn with; a story skips the entries told already."""
        if self._kinds[name] == "fact":
            kept = self._facts.get(name)
            if kept is not None and any(e is kept[0] for e in entries):
                entry, chosen, overlay = kept
                value = self._expand(entry.parts, {**ctx, **overlay}, flags, aliases, rng, chosen)
            else:
                entry = entries[int(rng.random() * len(entries))]
                chosen = {}
                overlay = {s: ctx[s] for s in entry_slots(entry) if isinstance(ctx.get(s), str)}
                value = self._expand(entry.parts, ctx, flags, aliases, rng, chosen)
                self._facts[name] = (entry, chosen, overlay)  # kept once it could be told
            self._drawn.append(("fact", name))
        else:
            told = self._stories
            fresh = [e for e in entries if id(e) not in told]
            if not fresh:
                if not self._retell:
                    raise NoFit(name)  # every story of the pool was told: the topic rests
                fresh = list(entries)
            entry = fresh[int(rng.random() * len(fresh))]
            self._drawn.append(("story", id(entry)))
            chosen, overlay = {}, None
            value = self._expand(entry.parts, ctx, flags, aliases, rng, chosen)
        if part[5]:
            ctx[part[5]] = value
            for field_name, fparts in zip(part[6], entry.fields):
                ctx[field_name] = Lazy(fparts, flags, aliases, chosen, overlay)
        return value

    def _told_beat(self, topic: str, beat: str, aliases: dict[str, str]) -> bool:
        """The beat's answer is a persona fact told already (asked again, it would be told again)."""
        told = self._told
        if not told:
            return False
        for refs in ANSWER_REFS[BEAT_POOLS[topic, beat][2]]:  # each answer entry's pool references
            for p in refs:
                if _pool_named(p, aliases) in told:
                    break
            else:  # no pool of the entry was told
                return False
        return True

    def _answer_kinds(self, beat: str, flags: int, aliases: dict[str, str]) -> frozenset[str] | None:
        """The kinds the answers of ``beat`` ("topic.beat.") can give now; None when its answers
        are fields of the exchange's captured entry (they fit by construction)."""
        kinds: set[str] = set()
        captured = False
        for entry in eligible(beat + "ans", flags):
            for part in entry.parts:
                if part[0] != 2 or not part[5]:
                    continue
                captured = True
                name = _pool_named(part, aliases)
                if name not in POOLS:
                    continue
                kept = self._facts.get(name) if name in self._kinds else None
                if kept is None:
                    for answer in eligible(name, flags):
                        kinds |= answer.gives
                elif any(answer is kept[0] for answer in eligible(name, flags)):
                    kinds |= kept[0].gives
        return frozenset(kinds) if captured else None

    def _name_once(self, text: str) -> str:
        """Address the user by name once per turn at most (keep the first ", <name>")."""
        address = self._address
        if not address or text.count(address) < 2:
            return text
        head, _, tail = text.partition(address)
        return head + address + tail.replace(address, "")

    def _line(self, pool: str, ctx: dict[str, str], flags: int, aliases: dict[str, str],
              pending: set[str], minimum: int = MIN_WORDS, most: int = 99, fit: bool = False,
              kinds: frozenset[str] | None = None) -> str | None:
        """A fresh utterance from ``pool``: not said before, accepted by ``avoid``, with
        ``minimum`` (MIN_WORDS unless told) to ``most`` words and at most MAX_TOKENS tokens.
        ``fit``: draw only from the entries that can have so many words (for pools of plain text).
        ``kinds``: a question pool's entries that expect one of these kinds of answer (or none:
        paired with their answer). The entry drawn is left in ``self._picked``."""
        rng = self._rng
        rand = rng.random
        if fit or kinds is not None:
            entries = drawable(pool, flags, (minimum, most) if fit else None, kinds)
        else:
            entries = eligible(pool, flags)
        if not entries:
            return None
        said = self._said
        address = self._address
        stale = 0  # attempts that gave a text already rejected: the pool has nothing new
        rejected: set[str] | None = None
        for _ in range(10):
            entry = entries[int(rand() * len(entries))]
            try:
                text = self._expand(entry.parts, ctx, flags, aliases, rng)
            except NoFit:
                continue
            if "  " in text or text[:1] == " " or text[-1:] == " ":
                text = " ".join(text.split())
            if " ," in text or " ." in text or " ?" in text or " !" in text:
                text = SPACE_PUNCT.sub(r"\1", text)
            if not text:
                continue
            first = text[0]
            if not first.isupper():  # (bank lines mostly open with their capital)
                text = first.upper() + text[1:]
            if address and text.count(address) > 1:
                text = self._name_once(text)
            key = text.casefold()
            words = text.count(" ") + 1
            if (words < minimum or words > most or key in said or key in pending
                    or len(text) > SURELY_SHORT and count_tokens(text) > MAX_TOKENS or repeats_itself(text)
                    or self.strict and (core := near_key(text)) in self._cores or not self._avoid(text)):
                if rejected is None:
                    rejected = {key}
                elif key in rejected:
                    stale += 1
                    if stale >= 3:
                        return None
                else:
                    rejected.add(key)
                continue
            pending.add(key)
            if self.strict:
                self._cores.add(core)  # every test above ran, so the strict one set it
            self._picked = entry
            return text
        return None

    # -- topics ------------------------------------------------------------------------------

    def _context(self, when: datetime) -> tuple[dict[str, str], int, dict[str, str]]:
        day = self._day(when.date())
        # One context dict per day, reused: exchange slots are reassigned below, and a capture
        # is always set before it is read within an exchange (checked when the banks load).
        ctx = day.base
        rng = self._rng
        names = self._present(when.date()) if self._absent else self._colleagues
        if names:
            i = int(rng.random() * len(names))
            ctx["colleague"] = names[i]
            if len(names) > 1:
                j = int(rng.random() * (len(names) - 1))
                ctx["colleague2"] = names[j + (j >= i)]
        if self._projects:
            i = int(rng.random() * len(self._projects))
            ctx["project"] = self._projects[i]
            if len(self._projects) > 1:
                j = int(rng.random() * (len(self._projects) - 1))
                ctx["project2"] = self._projects[j + (j >= i)]
        self._kid_slots(rng, ctx)
        if self._exchange_bits < 0:
            self._exchange_bits = self._slot_bits(ctx)
        flags = self._persona_flags | day.flags | self._time_flags(when) | self._kid_flags(ctx) | self._exchange_bits
        return ctx, flags, day.aliases

    def _present(self, day: date) -> list[str]:
        """The colleagues the day's talk may name: nobody the office shows away that day (all of
        them when every one is away); worked out once a day, every exchange asks."""
        found = self._present_on.get(day)
        if found is None:
            found = self._present_on[day] = [c for c in self._colleagues if not any(
                a <= day <= b for a, b in self._absent.get(c, ()))] or self._colleagues
        return found

    def _fitting(self, group: str, pairs: int, flags: int) -> tuple[str, ...]:
        """The topics of ``group`` that can make ``pairs`` pairs under ``flags`` (cached)."""
        return _bounded(FITTING, (group, min(pairs, 6), flags & GROUP_RELEVANT[group]), lambda: tuple(
            t for t in GROUP_TOPICS[group]
            if eligible(TOPIC_INFO[t][2], flags) and (pairs == 1 or len(self._usable_beats(t, flags)) >= pairs - 1)))

    @staticmethod
    def _usable_beats(topic: str, flags: int) -> list[str]:
        return list(_bounded(BEATS_NOW, (topic, flags & TOPIC_RELEVANT[topic]), lambda: tuple(
            beat for beat in TOPIC_BEATS[topic]
            if all(eligible(pool, flags) for pool in BEAT_POOLS[topic, beat][1:]))))

    def _compose(self, topic: str, pairs: int, ctx: dict[str, str], flags: int,
                 aliases: dict[str, str]) -> list[tuple[str, str]] | None:
        self._drawn = []
        self._asking = []
        out = self._compose_lines(topic, pairs, ctx, flags, aliases)
        if out is not None:  # the facts and stories of this exchange are told now
            self._asked.update(self._asking)
            self._beats_today.update(beat for _, beat in self._asking)
            for kind, what in self._drawn:
                if kind == "fact":
                    self._told.add(what)  # type: ignore[arg-type]  # a fact is drawn as its pool's name
                else:
                    self._stories.add(what)  # type: ignore[arg-type]  # a story is drawn as its entry's id()
        self._drawn = []
        return out

    def _compose_lines(self, topic: str, pairs: int, ctx: dict[str, str], flags: int,
                       aliases: dict[str, str]) -> list[tuple[str, str]] | None:
        pending: set[str] = set()
        opening, reply_pool = TOPIC_POOLS[topic]
        first = self._line(opening, ctx, flags, aliases, pending)
        if first is None:
            return None
        out = [("user", first)]
        if pairs == 1:
            reply = self._line(reply_pool, ctx, flags, aliases, pending)
            if reply is None:
                return None
            out.append(("assistant", reply))
            self._said.update(pending)
            return out
        usable = [b for b in self._usable_beats(topic, flags) if not self._told_beat(topic, b, aliases)]
        # a follow-up asked today already is not asked again ("Recharged?" twice after the weekend,
        # answered two ways): not even when the small talk runs dry (the caller fills in otherwise)
        usable = [b for b in usable if BEAT_POOLS[topic, b][0] not in self._beats_today]
        if len(usable) < pairs - 1:
            return None
        if pairs == 2:
            beats = [usable[int(self._rng.random() * len(usable))]]
        else:
            chosen = set(self._rng.sample(usable, pairs - 1))
            beats = [b for b in usable if b in chosen]  # bank order: the order of a natural conversation
        # The assistant reacts to what the user just said (the reply to the opening line, or the
        # last word of the previous beat) and then asks the next follow-up, in one turn.
        react = reply_pool
        for beat in beats[:pairs - 1]:
            pre, ask_pool, ans_pool, end_pool = BEAT_POOLS[topic, beat]
            # The user's opening line always gets a reaction, later answers now and then: a short
            # question after a reaction, a longer one on its own (either, if the pool has no other).
            joined = react == reply_pool or self._rng.random() < SMALL_TALK.react
            # only a question some answer of the beat can answer now (by the kinds they are tagged with)
            kinds = self._answer_kinds(pre, flags, aliases)
            ask = self._line(ask_pool, ctx, flags, aliases, pending, minimum=1, most=MIN_WORDS - 1, fit=True,
                             kinds=kinds) \
                if joined else self._line(ask_pool, ctx, flags, aliases, pending, fit=True, kinds=kinds)
            if ask is None:
                ask = self._line(ask_pool, ctx, flags, aliases, pending, minimum=1, kinds=kinds)
            if ask is None or not self._may_ask(ask, pre):
                return None
            want = self._picked.expects if self._picked is not None else frozenset()
            ask_words = ask.count(" ") + 1
            if ask_words < MIN_WORDS or joined:
                # the reaction and the question together make the utterance: MIN_WORDS between them
                reaction = self._line(react, ctx, flags, aliases, pending, minimum=max(1, MIN_WORDS - ask_words))
                together = self._name_once(f"{reaction} {ask}") if reaction is not None else ""
                if (together and together.casefold() not in self._said and together.casefold() not in pending
                        and not too_long(together) and not repeats_itself(together)):
                    pending.discard(ask.casefold())
                    ask = together
                    pending.add(ask.casefold())
                elif ask_words < MIN_WORDS:
                    return None
            self._want = want
            try:
                ans = self._line(ans_pool, ctx, flags, aliases, pending)
            finally:
                self._want = frozenset()
            if ans is None:
                return None
            out += [("assistant", ask), ("user", ans)]
            react = end_pool
        end = self._line(react, ctx, flags, aliases, pending)
        if end is None:
            return None
        out.append(("assistant", end))
        self._said.update(pending)  # the reactions said inside a follow-up count as said, too
        return out

    def _may_ask(self, ask: str, beat: str) -> bool:
        """A question asked in this history for another beat is not asked again ("Typical
        evening?" of last night and of tonight would get two answers); noted for this exchange."""
        key = " ".join(near_key(ask).replace("\u00b7", " ").split())
        if key and self._asked.get(key, beat) != beat:
            return False
        self._asking.append((key, beat))
        return True

    def _run(self, group: str, when: datetime, pairs: int) -> list[tuple[str, str]]:
        if pairs < 1:
            raise ValueError(f"pairs must be at least 1, got {pairs}")
        day = when.date()
        if day != self._today:
            self._today = day
            self._today_uses = {}
            self._beats_today = set()
        lines = self._draw_topic(group, when, pairs, retell=False)
        if lines is not None:
            return lines
        if group == "talk" and pairs > 1:
            # No single topic has room for so many pairs now: talk about two things in a row.
            first = pairs // 2
            return self._run(group, when, first) + self._run(group, when, pairs - first)
        # Only now may a story be told again (a history of weeks has told every one), and only
        # when the caller has nothing else to say (not ``strict``): a history that can fill the
        # time with other talk never tells the same story twice.
        if not self.strict:
            lines = self._draw_topic(group, when, pairs, retell=True)
            if lines is not None:
                return lines
        raise WordingsExhausted(f"small talk: cannot compose a {group} of {pairs} pair(s) for {when.isoformat()}: "
                                "every fitting wording was used already or rejected by avoid()")

    def _draw_topic(self, group: str, when: datetime, pairs: int, retell: bool) -> list[tuple[str, str]] | None:
        """An exchange on a topic that fits now, or None; ``retell``: stories told already may be
        told again."""
        self._retell = retell
        try:
            return self._draw_topic_now(group, when, pairs)
        finally:
            self._retell = False

    def _draw_topic_now(self, group: str, when: datetime, pairs: int) -> list[tuple[str, str]] | None:
        ctx, flags, aliases = self._context(when)
        # The topics that fit now (cached checks), weighted: less weight for topics used often,
        # used today already, or among the last few.
        recent = self._recent[-3:]
        uses, today_uses, rare_used = self._topic_uses, self._today_uses, self._rare_used
        fitting = self._fitting(group, pairs, flags)
        rand = self._rng.random
        tried: set[str] = set()
        for capped in (True, False):  # past a topic's daily cap only when nothing else fits
            topics: list[str] = []
            weights: list[float] = []
            for topic in fitting:
                base, rare, _, per_day = TOPIC_INFO[topic]
                today = today_uses.get(topic, 0)
                if capped and today >= per_day or rare and topic in rare_used or topic in tried:
                    continue
                w = base / ((1.0 + 0.35 * uses.get(topic, 0)) * (1.0 + 4.0 * today))
                topics.append(topic)
                weights.append(w * 0.05 if topic in recent else w)
            while topics:
                x = rand() * sum(weights)
                k = 0
                for k, w in enumerate(weights):  # noqa: B007 - k is the drawn index
                    x -= w
                    if x < 0:
                        break
                topic = topics.pop(k)
                del weights[k]
                tried.add(topic)
                lines = None
                for _attempt in range(1 if group == "talk" else 8):  # openers and closers: one topic each
                    lines = self._compose(topic, pairs, ctx, flags, aliases)
                    if lines is not None:
                        break
                    ctx, flags, aliases = self._context(when)  # fresh colleague, project ... for the next try
                if lines is None:
                    continue
                uses[topic] = uses.get(topic, 0) + 1
                today_uses[topic] = today_uses.get(topic, 0) + 1
                if TOPIC_INFO[topic][1]:
                    rare_used.add(topic)
                self._recent.append(topic)
                del self._recent[:-6]
                self.log.append((when, topic, lines))
                return lines
        return None

    # -- public ------------------------------------------------------------------------------

    def opener(self, when: datetime) -> list[tuple[str, str]]:
        """The first exchange of a session: [("user", ...), ("assistant", ...)], fitting the time of day and weekday."""
        return self._run("opener", when, 1)

    def closer(self, when: datetime) -> list[tuple[str, str]]:
        """The last exchange of a session (user says they are stopping / heading off), one pair."""
        return self._run("closer", when, 1)

    def exchange(self, when: datetime, pairs: int) -> list[tuple[str, str]]:
        """Exactly `pairs` (>= 1) user/assistant pairs of small talk, user first, alternating, fitting `when`."""
        return self._run("talk", when, pairs)
