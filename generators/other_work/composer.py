"""The composer: :class:`OtherWork`, the talk about other work of one history (see the package
docstring)."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from itertools import islice
from typing import AbstractSet, Callable, Iterable, Sequence, cast

from generators.chances import OTHER_WORK
from generators.english import repeats_itself
from generators.other_work.bank import (
    ARC_KINDS,
    KEEP,
    MOOD,
    OFFICE_FILE_BLOCKED,
    OFFICE_FILE_SLOTS,
    ONE_OFF,
    ONE_OFF_WEIGHTS,
    PEOPLE_KEYS,
    PERSON_SLOTS,
    REACT_TOPIC,
    TAGS,
    TOPIC_SLOTS,
    TRIES,
    Frag,
)
from generators.other_work.makers import SlotValues
from generators.other_work.office import Clock, Office, Whereabouts
from generators.other_work.story import (
    AN,
    FILE_ENDING,
    FILE_NAME,
    Arc,
    Ctx,
    NoValue,
    Plan,
    add_workdays,
    fill,
    slug,
    workdays_between,
    working_days,
)
from generators.other_work.tables import (
    ACK,
    ANSWER,
    ASK,
    BANK,
    CHAT,
    CHAT_ANY,
    DATA,
    INTRO,
    LEAD_ASIDE,
    LEAD_MORE,
    PROMISE,
    REACT,
    REACT_ANY,
    TAG_KEYS,
    TAG_REACT,
    TAIL,
    VOLUNTEER,
)
from office_env.money import spoken_prefix


class OtherWork:
    """Composes talk about work that is not the task, for one history."""

    def __init__(self, *, rng: random.Random, user_first: str, colleagues: Sequence[str], company: str,
                 projects: Sequence[str], files: Sequence[str], avoid: Callable[[str], bool] = lambda t: True,
                 currency: str = "", absences: Iterable[tuple[str, date, date]] = (),
                 names_day: Callable[[str, date], bool] = lambda text, day: False) -> None:
        """``currency``: the office's currency code (its documents' money); without one, a
        history's amounts take a currency of their own. ``absences``: ``(first name, first day,
        last day)`` for each span the office shows a colleague away. ``names_day(text, today)``:
        whether a line said today names a day the task's values name ("the 13th" when a value is
        the 13th); such a line would read as the task's, so it is never said."""
        self.rng = rng
        self.avoid = avoid
        self.names_day = names_day
        self.banned: set[str] = set()
        user = user_first.strip()
        if not user or not avoid(user):
            self.banned.add("user")
        company = company.strip() or "the company"
        if not avoid(company):
            self.banned.add("company")
        given = [c.strip() for c in dict.fromkeys(colleagues) if c and c.strip()]
        people = [c for c in given if c != user and avoid(c)]
        extra = [row[0].text for row in DATA["data.name"]]
        rng.shuffle(extra)
        extra = [n for n in extra if n not in given and n != user and avoid(n)]
        if len(people) < 4:  # too few to keep storylines apart: add names from the bank
            people += extra[: 4 - len(people)]
        # the days the office shows each colleague away, by name (spans in order, first day first)
        spans_away: dict[str, list[tuple[date, date]]] = {}
        for name, first, last in absences:
            name = name.strip()
            if name and first <= last:
                spans_away.setdefault(name, []).append((first, last))
        absent = {name: sorted(spans) for name, spans in spans_away.items()}
        # people outside the office (a supplier's staff): never one of the office's colleagues
        outsiders = [n for n in extra if n not in people and n not in absent]
        projs = [p.strip() for p in dict.fromkeys(projects) if p and p.strip() and avoid(p.strip())]
        if len(projs) < 3:
            extra = [row[0].text for row in DATA["data.project"]]
            rng.shuffle(extra)
            fitting = (p for p in extra if p not in projs and avoid(p))  # (only the first few are asked)
            projs += list(islice(fitting, 3 - len(projs)))
        # the office's documents, by name as the user sees them (no folder), and by kind: a line
        # about rows or figures names a sheet, never a PDF
        names = [f.replace("\\", "/").rsplit("/", 1)[-1] for f in dict.fromkeys(files) if f]
        own = [f for f in dict.fromkeys(names) if f and f.isascii() and " " not in f and "." in f and avoid(f)]
        drawn = rng.choice(("$", "$", "EUR ", "GBP "))
        self.office = Office(
            user=user, company=company, domain=slug(company).replace("_", "") + ".com",
            currency=spoken_prefix(currency) if currency else drawn,
            people=tuple(people), outsiders=tuple(outsiders), projects=tuple(projs), files=tuple(own),
            sheets=tuple(f for f in own if f.lower().endswith((".xlsx", ".xls", ".csv"))),
            docs=tuple(f for f in own if f.lower().endswith((".docx", ".doc", ".pdf"))),
            stems=frozenset(f.rsplit(".", 1)[0].lower() for f in own))
        self.where = Whereabouts(absent)
        self.clock = Clock(datetime(2000, 1, 3, 9))
        self.values = SlotValues(rng=rng, office=self.office, clock=self.clock, where=self.where)
        self.arcs: list[Arc] = []
        self.used: set[str] = set()
        self.frags_used: set[Frag] = set()  # every fragment of this history's finished exchanges

    # ---- public -------------------------------------------------------------------------

    def exchange(self, when: datetime, pairs: int) -> list[tuple[str, str]]:
        """Exactly `pairs` (>= 1) user/assistant pairs about one piece of other work, user first, alternating."""
        if pairs < 1:
            raise ValueError("pairs must be at least 1")
        self.clock.move_to(when)
        for attempt in range(12):
            plan = self._pick(attempt)
            out = self._compose(plan, pairs)
            if out is not None:
                self._commit(plan)
                self.frags_used.update(cast(Ctx, plan.ctx).seen)  # a composed plan holds its Ctx
                return out
        raise RuntimeError(f"could not compose {pairs} pairs of other-work talk: avoid() rejects almost "
                           "everything, or the exchange is longer than the banks can vary (about 25 pairs)")

    # ---- topic choice -------------------------------------------------------------------

    def _pick(self, attempt: int) -> Plan:
        rng = self.rng
        if attempt < 6:
            live = [a for a in self.arcs if not a.closed and (a.last is None or a.last < self.clock.today)]
            rng.shuffle(live)
            if live and rng.random() < OTHER_WORK.arc_mention:
                for arc in live:
                    plan = self._arc_plan(arc)
                    if plan is not None:
                        return plan
            if sum(not a.closed for a in self.arcs) < 3 and rng.random() < OTHER_WORK.new_arc:
                plan = self._new_arc()
                if plan is not None:
                    return plan
        kind = rng.choices(ONE_OFF, ONE_OFF_WEIGHTS)[0]
        return Plan(kind, "", {})

    def _free_people(self, n: int) -> list[str] | None:
        """``n`` colleagues for a new storyline: none tied to another one, and none the office shows
        away in the days its first mentions may name (a week back, two weeks ahead)."""
        where, today = self.where, self.clock.today
        free = [p for p in self.office.people if p not in where.busy and not where.is_away(p, today)]
        if where.absent:
            first, last = today - timedelta(days=9), today + timedelta(days=14)
            free = [p for p in free if where.clear_through(p, first, last)]
        if len(free) < n:
            return None
        return self.rng.sample(free, n)

    def _free_outsiders(self, n: int) -> list[str] | None:
        where, today = self.where, self.clock.today
        free = [p for p in self.office.outsiders if p not in where.busy and not where.is_away(p, today)]
        if len(free) < n:
            return None
        return self.rng.sample(free, n)

    # ---- the office's absences ------------------------------------------------------------

    def _fits_absences(self, ctx: Ctx, slots: Iterable[str]) -> bool:
        """No colleague of this exchange is away today, on a day its lines have named, or on a day
        ``slots`` (the next line's) name."""
        absent = self.where.absent
        people = [v for k in PERSON_SLOTS if (v := dict.get(ctx, k)) in absent] if absent else None
        if not people:  # (most exchanges name no one the office ever shows away: no day to look at)
            return True
        days = [self.clock.today, *ctx.told, *(ctx.days[s] for s in slots if s in ctx.days and s in ctx)]
        return all(self.where.clear(v, days) for v in people)

    def _told(self, ctx: Ctx, slots: Iterable[str]) -> None:
        if self.where.absent:
            ctx.told.extend(ctx.days[s] for s in slots if s in ctx.days and s in ctx)

    def _arc_clear(self, arc: Arc, days: Iterable[date]) -> bool:
        """The colleagues of storyline ``arc`` are in the office today and on ``days``."""
        days = [self.clock.today, *days]
        return all(self.where.clear(v, days) for k, v in arc.vals.items() if k in PEOPLE_KEYS)

    def _new_arc(self) -> Plan | None:
        rng, today = self.rng, self.clock.today
        kind = rng.choice(ARC_KINDS)
        if kind == "milestone":
            projects = [p for p in self.office.projects if p not in self.where.busy]
            who = self._free_people(1)
            if not projects or not who:
                return None
            arc = Arc(kind, {"project": rng.choice(projects), "owner": who[0]})
            done_before = {a.vals.get("milestone") for a in self.arcs}  # never the same piece of work twice
            rows = [row for row in DATA["data.milestone"] if row[0].text not in done_before] or DATA["data.milestone"]
            arc.vals.update(zip(BANK["data.milestone"].fields or (), (f.text for f in rng.choice(rows))))
            total = rng.choice((rng.randint(40, 400), rng.randint(1_000, 9_800)))
            arc.nums.update(total=total, done=0, budget=rng.randint(160, 4_800) * 50)
            if rng.random() < OTHER_WORK.milestone_planned:
                arc.dates["due"] = arc.dates["first_due"] = add_workdays(today, rng.randint(4, 9))
                return self._milestone_plan(arc, "planned", {})
            arc.dates["due"] = arc.dates["first_due"] = add_workdays(today, rng.randint(3, 8))
            arc.dates["start"] = add_workdays(today, -rng.randint(2, 6))
            arc.nums["done"] = int(total * rng.uniform(0.15, 0.5))
            return self._milestone_plan(arc, "running", {})
        if kind == "away":  # a supplier's contact is away: never a colleague of the office
            who = self._free_outsiders(2)
            if not who or any(a.kind == "away" and not a.closed for a in self.arcs):
                return None  # one supplier's absence at a time is news; three would be a pattern
            vendors = [r for r in DATA["data.vendor"] if r[0].text not in self.where.busy]
            row = rng.choice(vendors or DATA["data.vendor"])
            arc = Arc(kind, {"away": who[0], "cover": who[1],
                              **dict(zip(BANK["data.vendor"].fields or (), (f.text for f in row)))})
            arc.dates["back"] = add_workdays(today, rng.randint(2, 5))
            return self._away_plan(arc, "out")
        who = self._free_people(1)
        if not who:
            return None
        arc = Arc("hiring", {"owner": who[0]})
        arc.dates["interview"] = add_workdays(today, rng.randint(1, 3))
        arc.nums.update(applicants=rng.randint(12, 140), shortlist=rng.randint(3, 6))
        return self._hiring_plan(arc, "open")

    def _arc_plan(self, arc: Arc) -> Plan | None:
        """The storyline's next mention; none while one of its colleagues is away (today or on a
        day the mention names): it rests until they are back."""
        if self.where.absent and not self._arc_clear(arc, ()):
            return None
        if arc.kind == "milestone":
            plan = self._milestone_next(arc)
        elif arc.kind == "away":
            plan = self._away_plan(arc, "back" if self.clock.today >= arc.dates["back"] else "still")
        else:
            plan = self._hiring_next(arc)
        if plan is not None and self.where.absent and not self._arc_clear(arc, plan.days.values()):
            return None
        return plan

    # milestone ------------------------------------------------------------------------------

    def _milestone_next(self, arc: Arc) -> Plan | None:
        rng, today = self.rng, self.clock.today
        d = arc.dates
        if arc.stage in ("done", "done_late"):
            return self._milestone_plan(arc, "after", {})
        last = arc.last or today
        due = d["due"]
        options: list[tuple[str, float]] = []
        if today > due:
            options = [("overdue", 1.0), ("finish", 1.4)]
        elif arc.stage == "planned":
            options = [("progress", 1.0), ("slipped", 0.2)]  # "progress" from "planned" is "started"
        else:
            near = workdays_between(today, due) <= 2
            finish = 0.0 if arc.mentions < 2 else 0.5 * (arc.mentions - 1) + (1.5 if near else 0.0)
            options = [("progress", 1.0), ("ontrack", 0.5), ("slipped", 0.7 if arc.stage != "slipped" else 0.2),
                       ("finish", finish)]
        choice = rng.choices([o for o, _ in options], [w for _, w in options])[0]
        if choice == "finish":
            days = [last + timedelta(days=i) for i in range(1, (today - last).days + 1)]
            days = [x for x in days if x.weekday() < 5] or [today]
            if self.where.absent:  # finished on a day its people were in
                days = [x for x in days if self._arc_clear(arc, (x,))]
                if not days:
                    return None
            done = rng.choice(days[-3:])
            stage = "done" if done <= d["first_due"] else "done_late"
            return self._milestone_plan(arc, stage, {"done": done})
        if choice == "overdue" or choice == "slipped":
            new_due = add_workdays(max(due, today), rng.randint(2, 5))
            return self._milestone_plan(arc, choice, {"due": new_due, "old_due": due})
        if arc.stage == "planned":
            starts = [x for x in (last + timedelta(days=i) for i in range(1, (today - last).days + 1))
                      if x.weekday() < 5] or [today]
            if self.where.absent:  # started on a day its people were in
                starts = [x for x in starts if self._arc_clear(arc, (x,))]
                if not starts:
                    return None
            start = rng.choice(starts)
            return self._milestone_plan(arc, "started", {"start": start})
        return self._milestone_plan(arc, choice, {})

    def _milestone_plan(self, arc: Arc, stage: str, change: dict[str, date]) -> Plan:
        rng, today = self.rng, self.clock.today
        d = dict(arc.dates)
        d.update(change)
        total, done_n = arc.nums["total"], arc.nums["done"]
        old_pct = round(100 * done_n / total)
        if stage in ("started", "progress", "ontrack", "slipped", "overdue"):
            lo = done_n + max(1, total // 12) if stage != "started" else max(1, total // 20)
            hi = int(total * (0.95 if stage != "started" else 0.3))
            if lo <= hi and not (stage in ("ontrack", "slipped", "overdue") and rng.random() < OTHER_WORK.no_progress):
                done_n = rng.randint(lo, hi)  # otherwise no new progress to tell
            elif stage == "progress":
                stage = "ontrack"  # nearly there and nothing new: it is simply on track
        base = dict(arc.vals)
        if stage in ("done", "done_late"):
            done_n = total
            share = rng.uniform(0.82, 0.99) if stage == "done" else rng.uniform(1.03, 1.25)
            base["final_cost"] = f"{self.office.currency}{int(arc.nums['budget'] * share):,}"
        base["budget"] = f"{self.office.currency}{arc.nums['budget']:,}"
        pct = round(100 * done_n / total)
        base.update(total=f"{total:,}", done_count=f"{done_n:,}", left=f"{total - done_n:,}", pct=f"{pct}%",
                    old_pct=f"{old_pct}%", due_on=self.values.on(d["due"]), due_day=self.values.day(d["due"]),
                    due_date=self.values.absolute(d["due"]), first_due_date=self.values.absolute(d["first_due"]))
        if arc.last is not None:
            base["last_on"] = self.values.on(arc.last)
        if d.get("start") is not None and d["start"] <= today:
            base["started_on"] = self.values.on(d["start"])
        if "old_due" in change:
            base["old_due_day"] = self.values.day(change["old_due"])
            base["old_due_date"] = self.values.absolute(change["old_due"])
            base["slip_days"] = working_days(workdays_between(change["old_due"], d["due"]))
        if "done" in d:
            base["done_on"] = self.values.on(d["done"])
            base["late_days"] = working_days(max(1, workdays_between(d["first_due"], d["done"])))

        def update() -> None:
            arc.dates.update(change)
            arc.nums["done"] = done_n
            arc.stage = stage
            if stage == "after":
                arc.closed = True

        plan = Plan("milestone", stage, base, arc, set(arc.said), set(arc.asked), update)
        plan.days.update(due_on=d["due"], due_day=d["due"], due_date=d["due"], first_due_date=d["first_due"])
        if arc.last is not None:
            plan.days["last_on"] = arc.last
        if "started_on" in base:
            plan.days["started_on"] = d["start"]
        if "old_due" in change:
            plan.days.update(old_due_day=change["old_due"], old_due_date=change["old_due"])
        if "done" in d:
            plan.days["done_on"] = d["done"]
        return plan

    # away ------------------------------------------------------------------------------------

    def _away_plan(self, arc: Arc, stage: str) -> Plan:
        base = dict(arc.vals)
        back = arc.dates["back"]
        if stage == "back":
            base["back_on"] = self.values.on(back) if back <= self.clock.today else self.values.on(self.clock.today)
            days = {"back_on": min(back, self.clock.today)}
        else:
            say = self.values
            base.update(back_on=say.on(back), back_day=say.day(back), back_date=say.absolute(back))
            days = {"back_on": back, "back_day": back, "back_date": back}

        def update() -> None:
            arc.stage = stage
            self.where.away_until[arc.vals["away"]] = back
            if stage == "back":
                arc.closed = True

        return Plan("away", stage, base, arc, set(arc.said), set(arc.asked), update, days=days)

    # hiring ----------------------------------------------------------------------------------

    def _hiring_next(self, arc: Arc) -> Plan | None:
        if arc.stage == "open":
            if self.clock.today < arc.dates["interview"]:
                return None
            return self._hiring_plan(arc, "interviews")
        if arc.stage == "interviews":
            return self._hiring_plan(arc, "offer")
        if arc.stage == "offer":
            return self._hiring_plan(arc, "accepted")
        return None

    def _hiring_plan(self, arc: Arc, stage: str) -> Plan:
        base = dict(arc.vals)
        iv = arc.dates["interview"]
        base.update(applicants=str(arc.nums["applicants"]), shortlist=str(arc.nums["shortlist"]))
        if stage == "open":
            base.update(interview_on=self.values.on(iv), interview_day=self.values.day(iv))
            days = {"interview_on": iv, "interview_day": iv}
        else:
            base["interviewed_on"] = self.values.on(iv)
            days = {"interviewed_on": iv}
        start = arc.dates.get("start")
        if stage == "accepted":
            start = self.clock.today + timedelta(days=self.rng.randint(16, 40))
            while start.weekday() != 0:
                start += timedelta(days=1)
            base["start_date"] = self.values.absolute(start)
        if arc.last is not None:
            base["last_on"] = self.values.on(arc.last)
            days["last_on"] = arc.last  # (the new hire's start_date is theirs, not the panel's)

        def update() -> None:
            arc.stage = stage
            if start is not None:
                arc.dates["start"] = start
            if stage == "accepted":
                arc.closed = True

        return Plan("hiring", stage, base, arc, set(arc.said), set(arc.asked), update, days=days)

    def _commit(self, plan: Plan) -> None:
        arc = plan.arc
        if arc is None:
            return
        if plan.update is not None:
            plan.update()
        if arc not in self.arcs:
            self.arcs.append(arc)
        arc.last = self.clock.today
        arc.mentions += 1
        arc.said = plan.said
        arc.asked = plan.asked
        for key in KEEP:
            if key in plan.ctx:
                arc.vals[key] = plan.ctx[key]
        # People and projects tied to open arcs stay out of new arcs.
        busy: set[str] = set()
        for a in self.arcs:
            if not a.closed:
                busy.update(v for k, v in a.vals.items()
                            if k in ("project", "owner", "away", "cover", "helper", "vendor"))
        self.where.busy = busy

    # ---- composing ----------------------------------------------------------------------

    def _ok(self, frags: Sequence[Frag], seen: set[Frag], said: set[str] | None = None) -> list[Frag]:
        """Fragments not yet used in this exchange whose slots can be filled (and, for the
        assistant, whose values the user has said)."""
        banned = self.banned
        if said is None:
            if not banned:
                return [f for f in frags if f not in seen]
            return [f for f in frags if f not in seen and not (f.slots & banned)]
        if banned:
            return [f for f in frags if f.need <= said and f not in seen and not (f.slots & banned)]
        return [f for f in frags if f.need <= said and f not in seen]

    def _compose(self, plan: Plan, pairs: int) -> list[tuple[str, str]] | None:
        produced: list[str] = []
        out = self._compose_into(plan, pairs, produced)
        if out is None:
            self.used.difference_update(produced)
        return out

    def _compose_into(self, plan: Plan, pairs: int, produced: list[str]) -> list[tuple[str, str]] | None:
        rng = self.rng
        kind, stage = plan.kind, plan.stage
        ctx = Ctx(plan.base)
        ctx.maker = self.values.make
        ctx.new = []
        ctx.deps = {}
        ctx.seen = set()  # fragments already used in this exchange
        ctx.days = dict(plan.days)
        ctx.told = []
        plan.ctx = ctx
        said = plan.said
        asked = plan.asked
        fresh: set[str] = set()  # slots the user said in this exchange
        # follow-ups not asked in this storyline, with an answer not told yet in this history
        tags = [t for t in TAGS[(kind, stage)] if ANSWER[(kind, stage, t)][0] not in asked
                and any(f not in self.frags_used for f in ANSWER[(kind, stage, t)][1])]
        out: list[tuple[str, str]] = []
        pending: str | None = None
        for i in range(pairs):
            # ---- the user's line: the news, then answers or further details
            if i == 0:
                tag = None
                user = self._user_first(plan, ctx, said)
            else:
                tag = pending
                if tag is None:
                    open_tags = [t for t in tags if not (TAG_KEYS[(kind, t)] & fresh)
                                 and any(f not in self.frags_used for f in VOLUNTEER[(kind, stage, t)])]
                    tag = rng.choice(open_tags) if open_tags else None
                if tag is not None:
                    if pending is None:  # volunteered: only lines that make sense without the question
                        user = self._user_line(VOLUNTEER[(kind, stage, tag)], ctx, said, LEAD_MORE)
                    else:
                        user = self._user_line(ANSWER[(kind, stage, tag)][1], ctx, said, None)
                    tags.remove(tag)
                    asked.add(ANSWER[(kind, stage, tag)][0])
                else:
                    user = (self._user_line(CHAT[(kind, stage)], ctx, said, None)
                            or self._user_line(CHAT_ANY, ctx, said, None)
                            or self._user_line(CHAT_ANY, ctx, said, None, fresh_frags=True))
            if user is None:
                return None
            text, used = user
            fresh |= used
            if i == 0 and used & OFFICE_FILE_SLOTS:  # an office file: nothing invented about it
                tags = [t for t in tags if (kind, t) not in OFFICE_FILE_BLOCKED]
            produced.append(text)
            self.used.add(text)
            # ---- the assistant's reply: maybe a question the next user line answers
            final = i == pairs - 1
            pending = None
            if not final and rng.random() < OTHER_WORK.ask:
                open_tags = [t for t in tags if not (TAG_KEYS[(kind, t)] & fresh)
                             and self._ok(ASK[(kind, t)], ctx.seen, said)]
                if open_tags:
                    pending = rng.choice(open_tags)
            reply = self._reply(plan, ctx, said, pending, tag, final, used)
            if reply is None:
                return None
            produced.append(reply)
            self.used.add(reply)
            out.append((text, reply))
        return out

    def _accept(self, text: str) -> bool:
        """The line is usable: 5-30 words, new in this history, free of task values (written out or
        a day named in words), no word or phrase said twice over ("The Prism Dashboard dashboard"),
        and no invented file name that could be taken for one of the office's documents."""
        if not (5 <= text.count(" ") + 1 <= 30) or text in self.used or repeats_itself(text):
            return False
        if self.office.stems and FILE_ENDING.search(text):  # (a line without a file's ending names none)
            for name in FILE_NAME.findall(text):
                if name not in self.office.files and self.office.like_office_file(name):
                    return False
        return self.avoid(text) and not self.names_day(text, self.clock.today)

    def _user_first(self, plan: Plan, ctx: Ctx, said: set[str]) -> tuple[str, set[str]] | None:
        ks = (plan.kind, plan.stage)
        rng = self.rng
        lead = None
        if rng.random() < OTHER_WORK.lead_first:
            lead = LEAD_ASIDE
        tail = TAIL[MOOD.get(plan.stage or plan.kind, "neutral")] if rng.random() < OTHER_WORK.tail else None
        return self._user_line(INTRO[ks], ctx, said, lead, tail)

    def _user_line(self, frags: tuple[Frag, ...], ctx: Ctx, said: set[str], leads: tuple[Frag, ...] | None,
                   tails: tuple[Frag, ...] | None = None, fresh_frags: bool = False
                   ) -> tuple[str, set[str]] | None:
        """One user line from ``frags`` (plus an optional lead and tail); with ``fresh_frags``,
        fragments already used in this exchange may come back (with new values)."""
        rng = self.rng
        seen = ctx.seen
        cands = self._ok(frags, set() if fresh_frags else seen)
        if not cands:
            return None
        if not fresh_frags:
            # a fragment states its fact once a history: told again later with other values, it
            # would contradict itself ("at least 493 CVs", then "at least 390"); a history long
            # enough to have used them all tells them again
            untold = [f for f in cands if f not in self.frags_used]
            cands = untold or cands
        lead_c = self._ok(leads, seen) if leads else None
        tail_c = self._ok(tails, seen) if tails else None
        for attempt in range(TRIES):
            frag = rng.choice(cands)
            lead = tail = None
            if fresh_frags:  # the same wording again: with new values, not the ones said before
                for slot in frag.slots - TOPIC_SLOTS:
                    if slot not in PEOPLE_KEYS:
                        ctx.pop(slot, None)
            if not frag.specific and attempt < TRIES - 4 and any(f.specific for f in cands):
                continue  # a line with nothing particular in it would read the same in every history
            try:
                body, used = fill(frag, ctx)
                text = body
                if lead_c and not frag.alone and attempt < TRIES - 4:
                    lead = rng.choice(lead_c)
                    lt, lu = fill(lead, ctx)
                    if lt.endswith((":", ".")):
                        text = f"{lt} {body[0].upper()}{body[1:]}"
                    else:
                        text = f"{lt} {body[0].lower()}{body[1:]}" if frag.lower else f"{lt} {body}"
                    used |= lu
                else:
                    text = body[0].upper() + body[1:]
                if tail_c and attempt < TRIES - 4:
                    tail = rng.choice(tail_c)
                    tt, tu = fill(tail, ctx)
                    text = f"{text} {tt[0].upper()}{tt[1:]}"
                    used |= tu
            except NoValue:
                ctx.rollback()
                continue
            if self._accept(text) and self._fits_absences(ctx, used):
                self._told(ctx, used)
                ctx.new.clear()
                said |= used
                seen.update(f for f in (frag, lead, tail) if f is not None)
                return text, used
            ctx.rollback()
        return None

    def _reply(self, plan: Plan, ctx: Ctx, said: set[str], ask: str | None, last_tag: str | None,
               final: bool, answered: AbstractSet[str] = frozenset()) -> str | None:
        """The assistant's turn after a user line that used the slots ``answered``: a reaction
        names no figure, date or place but that line's (it answers that line, not another)."""
        rng = self.rng
        kind = plan.kind
        seen = ctx.seen
        free = REACT_TOPIC | answered

        def fits(frags: Sequence[Frag], seen: set[Frag]) -> list[Frag]:
            return [f for f in self._ok(frags, seen, said) if f.slots <= free]

        ok = self._ok
        react = fits(TAG_REACT[(kind, last_tag)], seen) if last_tag else []
        if len(react) < 3:
            react += fits(REACT[(kind, plan.stage)], seen)
        if len(react) < 2:
            react += fits(REACT_ANY, seen)
        if not react and not ask:  # a very long exchange: reactions may come back
            react = fits(REACT_ANY, set()) + fits(REACT[(kind, plan.stage)], set())
        special = [f for f in react if f.specific]
        if special and len(special) < len(react) and rng.random() < OTHER_WORK.specific_reaction:
            react = special  # most replies name something particular to this history
        acks: list[Frag] | None = None
        promises = ok(PROMISE[(kind, plan.stage)], seen, said) if final else None
        asks = ok(ASK[(kind, ask)], seen, said) if ask else None
        ack_ask, react_ask = OTHER_WORK.asking_reply
        ack_react, react_only, ack_promise = OTHER_WORK.last_reply
        for attempt in range(TRIES):
            r = rng.random()
            if asks:
                shape = "ack+ask" if r < ack_ask else "react+ask" if r < react_ask and react else "ask"
            elif not final or not promises:
                shape = "ack+react" if r < OTHER_WORK.reply_ack else "react"
            else:
                shape = ("ack+react" if r < ack_react else "react" if r < react_only
                         else "ack+promise" if r < ack_promise else "react+promise")
            parts: list[Frag] = []
            pieces = shape.split("+")
            pool: list[Frag] | None
            for piece in pieces:
                if piece == "react":
                    pool = react
                elif piece == "ask":
                    pool = asks
                elif piece == "ack":
                    pool = acks = ok(ACK, seen, said) if acks is None else acks
                else:
                    pool = promises
                if not pool:
                    break
                if len(parts) == len(pieces) - 1 and not any(p.specific for p in parts):
                    special = [f for f in pool if f.specific]  # the last piece has to name something
                    pool = special or pool
                parts.append(rng.choice(pool))
            else:
                if attempt < TRIES - 3:
                    if not any(p.specific for p in parts):
                        continue  # a line with nothing particular in it would read the same in every history
                    if len(parts) > 1 and (parts[0].head == parts[1].head
                                           or sum("user" in p.slots for p in parts) > 1):
                        continue  # "Noted, Sam. Thanks, Sam, ..." or "Good to know. Good ..."
                try:
                    texts = []
                    for p in parts:
                        t = p.text.format_map(ctx) if p.slots else p.text
                        if p.an:
                            t = AN.sub(r"\1n ", t)
                        texts.append(t[0].upper() + t[1:])
                except NoValue:
                    ctx.rollback()
                    continue
                text = " ".join(texts)
                slots = [s for p in parts for s in p.slots]
                if self._accept(text) and self._fits_absences(ctx, slots):
                    self._told(ctx, slots)
                    ctx.new.clear()
                    seen.update(parts)
                    return text
                ctx.rollback()
        return None
