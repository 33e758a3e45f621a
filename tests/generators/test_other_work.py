"""Talk about other work (generators/other_work/): composed, varied, value-rich, asks for nothing."""

from __future__ import annotations

import random
import re
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from generators.other_work import story as other_work
from generators.other_work import ACK_WORDS, WORK_DIR, BankError, OtherWork, load, load_work_banks, parse_work_banks
from generators.spoken_time import names_any, read_times

pytestmark = pytest.mark.slow

NAMES = ("Rosa Bilal Chen Dana Emeka Farah Goran Hiro Ines Jonas Kavya Luis Mia Nadia Oscar Petra Quinn Ravi "
         "Sofia Tariq Uma Viktor Wen Yara Zoe Abel Bea Cyrus Dina Eli").split()
PROJECTS = ("Apollo Orion Falcon Cobalt Juniper Sequoia Quartz Pegasus Nimbus Saturn Vega Helix Mosaic Titan "
            "Zephyr Phoenix Aurora Delta Summit Prism").split()
COMPANIES = ("Northwind Traders", "Acme Logistics", "Globex", "Initech", "Umbrella Foods", "Stark Textiles",
             "Bluebird Media", "Contoso")
OFFICE_FILES = ("data/sales_march.xlsx", "data/budget_2024.xlsx", "data/team_notes.docx", "data/vendor_list.pdf",
                "data/q1_report.pdf")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def make(seed: int, **kw) -> OtherWork:
    r = random.Random(f"setup-{seed}")
    colleagues = r.sample(NAMES, r.randint(3, 7))
    args = dict(rng=random.Random(seed), user_first=r.choice([n for n in NAMES if n not in colleagues]),
                colleagues=colleagues, company=r.choice(COMPANIES), projects=r.sample(PROJECTS, r.randint(2, 4)),
                files=r.sample(OFFICE_FILES, 3))
    args.update(kw)
    return OtherWork(**args)


def simulate(seed: int, days: int = 5, per_day: int = 8, start: date = date(2024, 3, 11), **kw):
    """One history's other-work talk: [(when, [(user, assistant), ...]), ...] and the composer."""
    ow = make(seed, **kw)
    r = random.Random(f"plan-{seed}")
    out = []
    day = start
    for _ in range(days):
        while day.weekday() >= 5:
            day += timedelta(days=1)
        left, hour = per_day, 9
        while left:
            pairs = min(left, r.choice((1, 2, 2, 3)))
            when = datetime.combine(day, datetime.min.time()) + timedelta(hours=hour, minutes=r.randint(0, 50))
            out.append((when, ow.exchange(when, pairs)))
            left -= pairs
            hour += 1
        day += timedelta(days=1)
    return out, ow


@pytest.fixture(scope="module")
def histories():
    # different start days too (month ends, a year end) so dates and far-off months wrap
    starts = [date(2024, 3, 11), date(2024, 1, 29), date(2024, 12, 16), date(2025, 6, 23), date(2024, 9, 30)]
    return [simulate(seed, start=starts[seed % len(starts)])[0] for seed in range(20)]


def utterances(history):
    return [u for _, exchange in history for pair in exchange for u in pair]


def user_lines(histories):
    return [(when, u) for h in histories for when, ex in h for u, _ in ex]


def assistant_lines(histories):
    return [(when, a) for h in histories for when, ex in h for _, a in ex]


# --------------------------------------------------------------------------------------------
# Shape, determinism, purity
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pairs", [1, 2, 3, 5, 8, 12])
def test_exchange_returns_exactly_the_pairs_asked_for(pairs):
    ow = make(1)
    for d in range(4):
        ex = ow.exchange(datetime(2024, 5, 6 + d, 10, 30), pairs)
        assert len(ex) == pairs
        for user, assistant in ex:
            assert isinstance(user, str) and isinstance(assistant, str) and user and assistant
            assert user != assistant


def test_pairs_must_be_positive():
    with pytest.raises(ValueError):
        make(1).exchange(datetime(2024, 5, 6, 10), 0)


def test_same_seed_same_talk_other_seed_other_talk():
    a, _ = simulate(7)
    b, _ = simulate(7)
    c, _ = simulate(8)
    assert a == b
    assert utterances(a) != utterances(c)


def test_uses_no_global_random_state():
    random.seed(1234)
    expected = [random.random() for _ in range(3)]
    random.seed(1234)
    simulate(3)
    assert [random.random() for _ in range(3)] == expected


def test_no_utterance_repeats_inside_a_history(histories):
    for h in histories:
        us = utterances(h)
        dup = [u for u, n in Counter(us).items() if n > 1]
        assert not dup, dup[:3]


def test_little_verbatim_overlap_between_histories(histories):
    per = [set(utterances(h)) for h in histories]
    seen = Counter(u for us in per for u in us)
    total = sum(len(utterances(h)) for h in histories)
    shared = sum(1 for h in histories for u in utterances(h) if seen[u] > 1)
    assert shared / total <= 0.10, (shared / total, seen.most_common(5))


# --------------------------------------------------------------------------------------------
# What the lines look like
# --------------------------------------------------------------------------------------------

VALUE = re.compile(
    r"\d+\.\d+"  # decimals
    r"|\b\d{1,3}(?:,\d{3})+\b"  # thousands separators
    r"|[$]\d|\b(?:EUR|GBP) \d"  # money
    r"|\d%"  # percentages
    r"|\b\d{1,2}:\d{2}\b"  # clock times
    r"|\b(?:" + "|".join(MONTHS) + r") \d{1,2}\b|\b\d{4}-\d{2}-\d{2}\b|\bthe \d{1,2}(?:st|nd|rd|th)\b"  # dates
    r"|\b[\w./-]+\.(?:xlsx|docx|pdf|csv|pptx|zip)\b"  # file names
    r"|\b[\w.+-]+@[\w-]+\.[\w.]+"  # e-mail addresses
)


def test_most_user_lines_carry_a_value_like_token(histories):
    lines = [u for _, u in user_lines(histories)]
    share = sum(bool(VALUE.search(u)) for u in lines) / len(lines)
    assert share >= 0.60, share


def test_about_half_the_replies_acknowledge(histories):
    ack = re.compile("|".join(re.escape(w) for w in ACK_WORDS), re.I)
    lines = [a for _, a in assistant_lines(histories)]
    share = sum(bool(ack.search(a)) for a in lines) / len(lines)
    assert 0.38 <= share <= 0.65, share


def test_lengths_and_ascii(histories):
    words = []
    for h in histories:
        for u in utterances(h):
            n = len(u.split())
            assert 5 <= n <= 30, u
            assert u.isascii(), u
            assert "{" not in u and "}" not in u and "  " not in u, u
            assert not u[0].islower(), u
            words.append(n)
    assert 10 <= sum(words) / len(words) <= 15


def test_office_files_and_invented_files_are_mentioned(histories):
    text = " ".join(u for h in histories for u in utterances(h))
    assert any(f.split("/")[-1] in text for f in OFFICE_FILES)  # by name, as the user sees them
    assert "data/" not in text
    invented = {m for m in re.findall(r"\b[\w-]+\.(?:xlsx|docx|pdf|csv|pptx|zip)\b", text)} - {
        f.split("/")[-1] for f in OFFICE_FILES}
    assert len(invented) >= 30


# --------------------------------------------------------------------------------------------
# No action item for today
# --------------------------------------------------------------------------------------------

REQUEST = re.compile(r"\b(please|can you|could you|would you|will you|remind me|don't forget|do not forget|"
                     r"make sure|let's|you should|you need to|you could)\b", re.I)
IMPERATIVES = set("send book schedule add update email e-mail forward call remind note remember check prepare draft "
                  "write put set move create save file tell ask reply invite arrange fill keep find make".split())
# An imperative: a sentence (or the clause after a lead such as "By the way,") starting with a
# verb followed by its object ("Send the ...", "Update it ..."); "Update on the ..." is a noun.
SENTENCE_START = re.compile(r"(?:^|[.:;!?]\s+|^[A-Z][\w ,']*?,\s)([A-Za-z']+) (the|a|an|it|this|that|these|those|"
                            r"my|our|your|me|him|her|them|everyone|up|out|in|off)\b")


def test_user_lines_ask_the_assistant_for_nothing(histories):
    for _, u in user_lines(histories):
        assert not REQUEST.search(u), u
        assert "?" not in u, u
        for first, _obj in SENTENCE_START.findall(u):
            assert first.lower() not in IMPERATIVES, u


CLAIM = re.compile(r"\b(I've|I have|I had|I did|I just|I already|I sent|I updated|I saved|I booked|I scheduled|"
                   r"I added|I created|I moved|I forwarded|I emailed|I wrote|I filed|I noted|done|all set|"
                   r"taken care of|let me|I'm on it|on it now)\b", re.I)
PROMISE = re.compile(r"\b(I'll|I will|will do|I'm going to|I am going to|I shall)\b", re.I)
NEAR = re.compile(r"\b(today|tomorrow|tonight|this (morning|afternoon|evening|week)|right away|now|soon|"
                  r"later today|shortly|in a bit)\b", re.I)


def _later_months(when: datetime) -> set[str]:
    return {MONTHS[(when.month - 1 + k) % 12] for k in (1, 2, 3)}


def _later_quarters(when: datetime) -> set[str]:
    q, y = (when.month - 1) // 3 + 1, when.year
    out = set()
    for k in (1, 2):
        qq, yy = (q - 1 + k) % 4 + 1, y + (q - 1 + k) // 4
        out.add(f"Q{qq} {yy}" if yy != y else f"Q{qq}")
    return out


def test_assistant_claims_nothing_and_promises_only_for_much_later(histories):
    promises = 0
    for when, a in assistant_lines(histories):
        assert not CLAIM.search(a), a
        for sentence in re.split(r"(?<=[.!?])\s+", a):
            if not PROMISE.search(sentence):
                continue
            promises += 1
            assert not NEAR.search(sentence), (when, sentence)
            months = set(re.findall(r"\b(" + "|".join(MONTHS) + r")\b", sentence))
            quarters = set(re.findall(r"\bQ[1-4](?: \d{4})?", sentence))
            assert months or quarters, (when, sentence)
            assert months <= _later_months(when), (when, sentence)
            assert quarters <= _later_quarters(when), (when, sentence)
    assert promises > 50


# --------------------------------------------------------------------------------------------
# Dates and storylines
# --------------------------------------------------------------------------------------------

_WD = "|".join(WEEKDAYS)
_MO = "|".join(MONTHS)


def _resolve(day: int, month: str | None, when: datetime) -> list[date]:
    """Dates within 100 days of ``when`` with that day (and month)."""
    out = []
    for delta in range(-100, 101):
        d = when.date() + timedelta(days=delta)
        if d.day == day and (month is None or MONTHS[d.month - 1] == month):
            out.append(d)
    return out


def test_weekday_and_date_pairs_are_real_dates(histories):
    checked = 0
    for h in histories:
        for when, ex in h:
            for u in (x for pair in ex for x in pair):
                for wd, day in re.findall(rf"\b({_WD}) the (\d+)(?:st|nd|rd|th)\b", u):
                    assert any(WEEKDAYS[d.weekday()] == wd for d in _resolve(int(day), None, when)), (when, u)
                    checked += 1
                for wd, mo, day in re.findall(rf"\b({_WD}),? ({_MO}) (\d+)\b", u):
                    assert any(WEEKDAYS[d.weekday()] == wd for d in _resolve(int(day), mo, when)), (when, u)
                    checked += 1
    assert checked > 20


def _day_after(phrase_at: str, when: datetime, lead: str = "on ") -> date | None:
    """The day a phrase at the start of ``phrase_at`` names, read from ``when``: "yesterday",
    "today", "(on) March 12", "(on) Tuesday March 12", "(on) Tuesday the 12th"; None otherwise."""
    m = re.match(rf"(?:{lead})?(?:(yesterday|today|earlier today|tomorrow)\b|"
                 rf"(?:({_WD}),? )?(?:({_MO}) (\d+)\b|the (\d+)(?:st|nd|rd|th)\b))", phrase_at)
    if not m:
        return None
    word, wd, mo, day, nth = m.groups()
    if word:
        return when.date() + timedelta(days={"yesterday": -1, "tomorrow": 1}.get(word, 0))
    options = [d for d in _resolve(int(day or nth), mo, when) if wd is None or WEEKDAYS[d.weekday()] == wd]
    return min(options, key=lambda d: abs((d - when.date()).days)) if options else None


FINISHED = re.compile(r"(?<!be )(?<!to )\b(?:wrapped up|finished|was completed|closed out|signed off|came back|"
                      r"returned|got back|went out|finished the [^.;]*?) ")
MOVED = re.compile(r"\b(?:slipped to|new target is|delayed until|deadline from [^.;]*? to|now says|new date is|"
                   r"now aiming for|end date to|so) ")


def test_past_and_future_dates_point_the_right_way(histories):
    """Things finished lie on or before the day they are told; new deadlines after it."""
    past = future = 0
    for h in histories:
        for when, ex in h:
            for u, _ in ex:
                for m in FINISHED.finditer(u):
                    d = _day_after(u[m.end():], when)
                    if d is not None:
                        assert d <= when.date(), (when, u)
                        past += 1
                if re.search(r"slipped|delayed|pushed|moved the|missed its|new target|now aiming|won't make|late", u):
                    for m in MOVED.finditer(u):
                        d = _day_after(u[m.end():], when, "on |until |to |is |for ")
                        if d is not None:
                            assert d > when.date(), (when, u)
                            future += 1
    assert past >= 5 and future >= 5, (past, future)


FINISH_WORDS = re.compile(r"(?<!be )(?<!to )\b(wrapped up|finished|was completed|closed out|signed off)\b")
OPEN_WORDS = re.compile(r"\b(slipped|delayed|pushed|still on track|still set to|is under way|is planned|kicks off|"
                        r"holding steady|got the green light|to go\b|left,|left out of|won't make)")


def test_storylines_continue_over_days_and_never_reopen():
    long_runs = 0
    for seed in range(12):
        history, ow = simulate(seed, days=6)
        for arc in ow.arcs:
            if arc.kind != "milestone":
                continue
            project, milestone = arc.vals["project"], arc.vals["milestone"]
            names = (f"{project} {milestone}", f"{milestone} for {project}", f"{milestone} on {project}")
            said = [(when, u) for when, ex in history for u, _ in ex if any(n in u for n in names)]
            days = sorted({when.date() for when, _ in said})
            if len(days) >= 3:
                long_runs += 1
            closed = None
            for when, u in said:
                if closed is not None:  # finished: later lines look back, never reopen it
                    assert not OPEN_WORDS.search(u), (seed, u)
                if FINISH_WORDS.search(u) and closed is None:
                    closed = when.date()
    assert long_runs >= 6


def test_one_storyline_mention_a_day_and_dates_follow_from_when():
    for seed in range(6):
        ow = make(seed)
        monday = datetime(2024, 4, 8, 9, 30)
        for d in range(10):
            when = monday + timedelta(days=d)
            before = {id(a): a.mentions for a in ow.arcs}
            for k in range(5):
                ow.exchange(when + timedelta(minutes=50 * k), 2)
            for a in ow.arcs:
                assert a.mentions - before.get(id(a), 0) <= 1  # at most once a day
                assert a.last is not None and a.last <= when.date()
                if a.kind == "milestone" and "done" in a.dates:
                    assert a.dates["done"] <= a.last
                if a.kind == "milestone" and not a.closed and a.stage not in ("done", "done_late"):
                    assert a.dates["due"] > a.last or a.stage in ("running", "progress", "started", "ontrack")
        assert sum(a.closed for a in ow.arcs) >= 1


# --------------------------------------------------------------------------------------------
# avoid(), thin inputs, speed
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code, sign", [("GBP", "GBP "), ("ZAR", "ZAR "), ("CAD", "$"), ("USD", "$")])
def test_amounts_are_in_the_office_currency(code, sign):
    """An office's chat quotes money as its documents do: a Leeds office's other work in GBP."""
    others = {"$", "EUR ", "GBP ", "ZAR "} - {sign}
    amounts = 0
    for seed in range(12):
        talk, _ = simulate(seed, days=5, per_day=10, currency=code)
        for text in utterances(talk):
            assert not any(o in text for o in others), (code, text)
            amounts += sign in text
    assert amounts >= 10  # the talk does quote money


def test_an_unknown_currency_is_refused():
    with pytest.raises(ValueError, match="currency"):
        make(0, currency="XYZ")


def test_avoid_is_respected():
    banned = ("Rosa", "%", "$", "March")

    def avoid(text: str) -> bool:
        return not any(b in text for b in banned)

    history, _ = simulate(2, colleagues=["Rosa", "Ben", "Ida", "Omar"], avoid=avoid)
    for u in utterances(history):
        assert avoid(u), u


def test_no_line_names_a_day_the_task_names():
    """Given the days a task's values name, the other work names none of them in words, in any
    wording ("interviews on Wednesday the 13th" would read as the task's day), and still talks
    about days: a hiring round or a supplier's return lands on another day."""
    start = date(2024, 3, 11)
    task_days = [start + timedelta(days=n) for n in (1, 2, 3, 4, 7, 8, 9)]  # the next two weeks' days
    values = [d.isoformat() for d in task_days]
    dated = 0
    for seed in range(8):
        history, _ = simulate(seed, days=6, per_day=10, start=start,
                              names_day=lambda text, day: names_any(text, values, day))
        for when, ex in history:
            for text in (t for pair in ex for t in pair):
                named = {t.when for t in read_times(text, when.date())}
                dated += bool(named)
                assert not named & set(task_days), (seed, when, text)
    assert dated > 5, dated  # (without the check, 16 of 34 dated lines name a task day)


def test_thin_inputs_still_work():
    ow = OtherWork(rng=random.Random(0), user_first="Sam", colleagues=[], company="", projects=[], files=[])
    for d in range(5):
        assert len(ow.exchange(datetime(2024, 2, 26 + d % 3, 11), 3)) == 3




# --------------------------------------------------------------------------------------------
# Consistency with the office and within the history
# --------------------------------------------------------------------------------------------

AWAY = re.compile(r"\b(on holiday|training course|trade fair|at a conference|client workshop|visiting the|"
                  r"out-of-office|won't be around|still no|back from|came back|returned|got back|is away|"
                  r"out sick|dialled in from|checked in from|standing in for|is covering|four days a week|"
                  r"moving to the)\b", re.I)


def test_no_absence_or_whereabouts_is_invented_for_an_office_colleague():
    """The office records its colleagues' absences (out-of-office mails, calendars): the chat
    never sends one of them on leave, to a course or back, so it cannot contradict those."""
    lines = 0
    for seed in range(24):
        history, ow = simulate(seed, days=6)
        colleagues = set(ow.office.people)
        for arc in ow.arcs:
            if arc.kind == "away":
                assert arc.vals["away"] not in colleagues and arc.vals["cover"] not in colleagues
        for _, ex in history:
            for u, a in ex:
                for text in (u, a):
                    for clause in re.split(r"[.;:,]\s", text):  # "According to Abel, the vendor's ..."
                        if AWAY.search(clause):
                            lines += 1
                            named = [c for c in colleagues if re.search(rf"\b{c}\b", clause)]
                            assert not named, (seed, text)
    assert lines > 30  # suppliers' people still go away and come back


def test_no_invented_address_for_an_office_colleague():
    """Colleagues have the office's addresses; the chat invents none for them (no
    'naomi@riverstonelegal.com'), and none at a domain made up from the company's name."""
    addresses = 0
    for seed in range(24):
        history, ow = simulate(seed)
        names = {p.lower() for p in ow.office.people}
        for text in utterances(history):
            for local, domain in re.findall(r"([\w.+-]+)@([\w-]+\.[\w.]+)", text):
                addresses += 1
                assert local.split(".")[0] not in names, text
                assert domain != ow.office.domain, text
    assert addresses > 10


PAST_CLOCK = re.compile(r"\b(?:sent|took up|checked in|heard|mention|before the official)\b[^.;]*?\b(\d{1,2}):(\d\d)\b")


def test_times_of_things_that_happened_today_lie_before_now():
    """'X sent a long e-mail about it at 16:30' is not said at 9:21."""
    checked = 0
    for seed in range(60):
        history, _ = simulate(seed, per_day=10, start=date(2024, 3, 11 + seed % 5))
        for when, ex in history:
            for u, _ in ex:
                for h, m in PAST_CLOCK.findall(u):
                    checked += 1
                    assert int(h) * 60 + int(m) <= when.hour * 60 + when.minute, (when, u)
    assert checked >= 10


def test_no_doubled_words_or_preposition_before_an_on_phrase():
    """'The Prism Dashboard dashboard', 'interviews for on May 14' read wrong."""
    for seed in range(24):
        history, _ = simulate(seed, projects=["Prism Dashboard", "Echo Feedback Survey", "Atlas"])
        for text in utterances(history):
            assert not re.search(r"\b(\w+) \1\b", text, re.I), text
            assert not re.search(r"\b(?:for|until|by|from|since|to) on\b", text), text
            words = re.findall(r"[a-z0-9']+(?:[_.@/-][a-z0-9']+)*", text.lower())
            grams = [tuple(words[i:i + 3]) for i in range(len(words) - 2)]
            assert len(grams) == len(set(grams)), text  # no phrase said twice over


def test_office_files_are_named_as_what_they_are():
    """An office PDF is not 'rows and a chart'; nothing is invented about a named office file
    (its size, its source, a version it replaced), and invented file names live elsewhere and
    cannot be taken for the office's own (an office 'apollo_plan.docx', no 'apollo_plan_v2.docx')."""
    files = ["data/invoice_8032.pdf", "data/apollo_plan.docx", "data/budget_2024.xlsx", "data/stock_list.xlsx"]
    named = 0
    for seed in range(80):  # about one history in four names an office file
        history, _ = simulate(seed, files=files, projects=["Apollo", "Orion"])
        for _, ex in history:
            said = " ".join(u for pair in ex for u in pair)
            office = [f.split("/")[-1] for f in files if f.split("/")[-1] in ex[0][0]]
            for name in re.findall(r"\b[\w-]+\.(?:xlsx|docx|pdf|csv|pptx|zip)\b", said):
                if name not in office and "data/" + name not in files:
                    assert not name.startswith(("apollo_plan", "budget_2024", "stock_list", "invoice_8032")), said
            if not office:
                continue
            named += 1
            if office[0].endswith((".pdf", ".docx")):
                assert not re.search(r"\b(rows|numbers|figures)\b", ex[0][0]), ex[0][0]
            assert not re.search(r"\b(MB|rows|replaces|version|draft|exported|pulled it together)\b",
                                 " ".join(u for u, _ in ex[1:])), said
    assert named >= 10


def _skeleton(text: str) -> str:
    return re.sub(r"\d[\d,.]*", "#", text)


def test_a_fact_is_told_once_not_again_with_other_figures():
    """'Hana has read ... CVs, at least 493' and later 'at least 390' contradict each other."""
    for seed in range(24):
        history, _ = simulate(seed)
        seen: dict[str, str] = {}
        for _, ex in history:
            for u, _ in ex:
                key = _skeleton(u)
                assert key not in seen or seen[key] == u, (seen.get(key), u)
                seen[key] = u


FIGURE = re.compile(r"(?:\$|EUR |GBP )?\d[\d,]*(?:\.\d+)?%?|\b(?:" + "|".join(MONTHS) + r")\b")


def reaction_sentences(seeds):
    """(user line, reply, sentence) for each sentence of a reply that reacts to the line before it
    (not a question, not a promise), over the histories of ``seeds``."""
    for seed in seeds:
        history, _ = simulate(seed)
        for _, ex in history:
            for u, a in ex:
                for sentence in re.split(r"(?<=[.!?])\s+", a):
                    if not (sentence.endswith("?") or sentence.startswith("I'll")):
                        yield u, a, sentence


def test_a_reaction_answers_the_line_before_it():
    """A reply's figures, dates and months come from the user line it answers: no 'October will
    come around quickly' after news of a colleague's leave, no '29.1% is a respectable change'
    after 'March was about 22.3% lower'."""
    checked = 0
    for u, a, sentence in reaction_sentences(range(24)):
        for figure in FIGURE.findall(sentence):
            checked += 1
            assert figure in u, (u, a)
    assert checked > 100


# --------------------------------------------------------------------------------------------
# The office's absences
# --------------------------------------------------------------------------------------------


def _colleagues_of(seed: int) -> list[str]:
    """The colleagues ``make(seed)`` gives its composer."""
    r = random.Random(f"setup-{seed}")
    return r.sample(NAMES, r.randint(3, 7))


_NAMED_DAY = re.compile(r"\b(?=yesterday\b|today\b|earlier today\b|tomorrow\b|on )")


def test_a_colleague_the_office_shows_away_does_nothing_on_those_days():
    """The office's mail shows two colleagues away over some days: no line told on one of those
    days names them (someone else chairs the meeting or sends the figures, their storylines rest),
    and no line that names them names one of those days; on the other days they are talked about."""
    start = date(2024, 3, 11)
    inside = outside = dated = 0
    for seed in range(16):
        first, second = _colleagues_of(seed)[:2]
        spans = [(first, start + timedelta(days=1), start + timedelta(days=3)),  # Tuesday to Thursday
                 (second, start + timedelta(days=4), start + timedelta(days=9))]  # Friday to the next Wednesday
        history, ow = simulate(seed, days=8, per_day=10, start=start, absences=spans)
        for when, ex in history:
            for name, lo, hi in spans:
                word = re.compile(rf"\b{name}\b")
                for text in (t for pair in ex for t in pair):
                    if not word.search(text):
                        continue
                    assert not lo <= when.date() <= hi, (seed, name, when, text)
                    outside += 1
                    for m in _NAMED_DAY.finditer(text):
                        day = _day_after(text[m.start():], when)
                        if day is not None:
                            dated += 1
                            assert not lo <= day <= hi, (seed, name, when, day, text)
                if lo <= when.date() <= hi:
                    inside += 1
    assert inside > 100 and outside > 100 and dated > 10, (inside, outside, dated)


def test_absences_off_the_history_leave_the_talk_as_it_was():
    """Spans that touch none of the days a history speaks of change nothing (the same random
    draws), and the talk with absences is as deterministic as without."""
    for seed in range(6):
        name = _colleagues_of(seed)[0]
        plain, _ = simulate(seed)
        far = [(name, date(2021, 1, 4), date(2021, 1, 8)), ("Nobody", date(2024, 3, 12), date(2024, 3, 14))]
        assert simulate(seed, absences=far)[0] == plain
        near = [(name, date(2024, 3, 12), date(2024, 3, 14))]
        assert simulate(seed, absences=near)[0] == simulate(seed, absences=near)[0]


def test_a_build_never_has_an_away_colleague_doing_other_work_on_their_days_away(tmp_path):
    """Across a build, a session dated on a day the user's mailbox shows a colleague away (a
    holiday mail, an out-of-office notice, read as the world check reads them) has no other-work
    turn that names that colleague."""
    import json

    from office_env import Workspace, mail_store
    from office_env.synthesis.check import away_span
    from orchestrator.build import build
    from orchestrator.roles import BuildConfig

    build(tmp_path / "ds", 6, BuildConfig(seed=41, days=5, utterances_per_day=40), workers=1)
    away_days = 0
    for folder in sorted((tmp_path / "ds" / "tasks").iterdir()):
        task = json.loads((folder / "task.json").read_text())
        user = task["user"]["username"]
        spans = []
        for _, mail in mail_store.messages(Workspace(folder / "testbed"), user):
            sent = mail.when()
            if sent is None or mail.subject.startswith(("Re:", "Fwd:")):
                continue
            span = away_span(mail.body, sent.date())
            if span is not None:  # the sender's user name is their first name, lower-cased
                spans.append((mail.sender.split("@")[0], span[0], span[1]))
        for session in task["dialogue"]:
            day = date.fromisoformat(session["date"])
            for name, lo, hi in spans:
                if not lo <= day <= hi:
                    continue
                away_days += 1
                for turn in session["turns"]:
                    if turn.get("thread", "").startswith("w"):
                        assert not re.search(rf"\b{name}\b", turn["text"], re.I), (folder.name, day, turn["text"])
    assert away_days > 5


_NUMBER_WORD = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b", re.I)


def test_a_reaction_counts_only_what_the_line_before_it_counts():
    """'Two good options is a nice problem to have' came after 'one strong person from Leeds',
    '6 people' and 'the chair has been empty': a reaction's count words come from the line it answers."""
    checked = 0
    for u, a, sentence in reaction_sentences(range(40)):
        checked += 1
        for word in _NUMBER_WORD.findall(sentence):
            assert word.lower() in u.lower(), (u, a)
    assert checked > 1000


def test_a_count_of_one_takes_a_singular_noun_and_a_takes_an_before_a_vowel():
    """'1 working days after the original date', 'a Umbra Security Hardening design review'."""
    from generators.english import article

    months = "|".join(MONTHS)
    for seed in range(40):
        history, _ = simulate(seed, projects=["Umbra Security Hardening", "Orion", "Atlas"])
        for text in utterances(history):
            for hit in re.finditer(r"(?<![\w.,$])1 (?:working )?([a-z]+s)\b", text):
                assert re.search(rf"(?:{months}) $", text[:hit.start()]) or hit.group(1).endswith(("ss", "us", "is")), text
            for hit in re.finditer(r"\b[Aa] ([A-Za-z][\w-]*)", text):
                assert hit.group(1).isupper() or article(hit.group(1)) == "a", text
    assert other_work.working_days(1) == "1 working day" and other_work.working_days(3) == "3 working days"
    said = {phrase: other_work.AN.sub(r"\1n ", phrase) for phrase in (
        "a Umbra review", "a Urban move", "a Upper floor", "a Unity rollout", "a UX review", "a UK office",
        "a Utah office", "a Uber account", "a Orion update", "a EUR 50 fee")}
    assert said == {"a Umbra review": "an Umbra review", "a Urban move": "an Urban move",
                    "a Upper floor": "an Upper floor", "a Unity rollout": "a Unity rollout",
                    "a UX review": "a UX review", "a UK office": "a UK office", "a Utah office": "a Utah office",
                    "a Uber account": "a Uber account", "a Orion update": "an Orion update",
                    "a EUR 50 fee": "a EUR 50 fee"}


# --------------------------------------------------------------------------------------------
# The banks
# --------------------------------------------------------------------------------------------

WORK_GOOD = "== data.thing: thing | things\n- desk | desks\n== intro.x\n- The {thing} for {project} came.\n"


def test_the_work_banks_are_read_once_with_their_sections_and_data():
    sections = load()
    assert load() is sections
    assert sections["data.vendor"].fields == ("vendor", "vendor_slug")
    frag, = parse_work_banks([("w.bank", WORK_GOOD)])["intro.x"].rows[0]
    assert frag.text == "The {thing} for {project} came." and frag.slots == {"thing", "project"} and frag.lower
    alone, = parse_work_banks([("w.bank", "== ack\n- ^ Good news: {project} again.\n")])["ack"].rows[0]
    assert alone.alone and alone.text == "Good news: {project} again."


@pytest.mark.parametrize("text, message", [
    ("== intro.y\n- The {projcet} came.\n", "x.bank:2: unknown slot {projcet}"),
    ("== intro.y\n- The {Project} came.\n", "x.bank:2: bad slot {Project}"),
    ("== intro.y\n- The {money:>8} came.\n", "x.bank:2: slot {money} must not have a format spec"),
    ("== intro.y\n- The {money came.\n", "x.bank:2: malformed braces"),
    ("== intro.y\n- ~\n", "x.bank:2: empty fragment"),
    ("== intro.y\n- one | two\n", "x.bank:2: a fragment is one text"),
    ("== date.on.far\n- on {project}\n", "x.bank:2: unknown slot {project}"),
    ("== data.z\n- one\n", "x.bank:1: data section 'data.z' must declare its fields"),
    ("== intro.y: a\n- one\n", "x.bank:1: only data.* sections declare fields"),
    ("== data.z: money\n- one\n", "x.bank:1: field 'money' is a built-in slot"),
    ("== data.z: things\n- one\n", "x.bank:1: field 'things' is also given by 'data.thing'"),
    ("== data.z: a | b\n- one {a} | two\n", "x.bank:2: field 'a' refers to itself"),
    ("== data.z: a | b\n- one\n", "x.bank:2: expected 2 fields (a | b), got 1"),
    ("== intro.y\nwhen morning\n- hi\n", "x.bank:2: this bank's entries take no 'when' conditions"),
    ("== intro.x\n- again\n", "x.bank:1: section 'intro.x' is already defined at ok.bank:3"),
])
def test_a_malformed_work_bank_line_names_the_file_and_line(text, message):
    parse_work_banks([("ok.bank", WORK_GOOD)])
    with pytest.raises(BankError) as info:
        parse_work_banks([("ok.bank", WORK_GOOD), ("x.bank", text)])
    assert message in str(info.value), info.value


def test_a_work_bank_missing_a_section_or_with_a_computed_milestone_is_refused(tmp_path: Path):
    for path in WORK_DIR.glob("*.bank"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    common = tmp_path / "common.bank"
    text = common.read_text(encoding="utf-8")
    common.write_text(text.replace("== lead.more\n", "== lead.other\n"), encoding="utf-8")
    with pytest.raises(BankError, match=r"missing section\(s\) lead\.more"):
        load_work_banks(tmp_path)
    common.write_text(text, encoding="utf-8")
    arcs = tmp_path / "arcs.bank"
    arcs.write_text(arcs.read_text(encoding="utf-8").replace("== data.milestone: milestone | unit | verb\n",
                                                               "== data.milestone: milestone | unit | verb\n"
                                                               "- {project} move | desks | moved\n"), encoding="utf-8")
    with pytest.raises(BankError, match=r"arcs\.bank:\d+: data\.milestone fields must be plain text"):
        load_work_banks(tmp_path)



def test_a_line_without_a_file_ending_names_no_file():
    """Other work looks for invented file names only in a line with a file's ending (FILE_ENDING):
    every line in which FILE_NAME finds a name has one, over lines of names, endings in any case,
    dots, hyphens and words that merely start like an ending ("docs", ".xlsxx")."""
    from generators.other_work.story import FILE_ENDING, FILE_NAME

    pieces = ["report", "q3-plan", "notes_v2", ".", ".xlsx", ".XLS", ".csvx", ".docs", ".pdf", ".Txt", ".zip2", " ",
              ", ", "-", "_", "x", "sheet.", ".pptx!", "docs", "the", ".doc."]
    rng = random.Random(17)
    lines = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 8))) for _ in range(5000)]
    named = [line for line in lines if FILE_NAME.findall(line)]
    assert len(named) > 500 and all(FILE_ENDING.search(line) for line in named)


def test_a_colleague_is_clear_of_a_stretch_of_days_as_of_each_day_in_it():
    """``Whereabouts.clear_through`` (a new storyline's colleagues, over the weeks its mentions may
    name) answers from the spans alone as ``clear`` does over every day of the stretch: spans before,
    after, inside, around and touching either end, several per person, and people never away."""
    from generators.other_work.office import Whereabouts

    draw = random.Random(4)
    start = date(2024, 5, 1)
    for _ in range(400):
        absent: dict[str, list[tuple[date, date]]] = {}
        for name in ("Sam", "Priya"):
            for _ in range(draw.randrange(0, 3)):
                first = start + timedelta(days=draw.randrange(0, 60))
                absent.setdefault(name, []).append((first, first + timedelta(days=draw.randrange(0, 10))))
        where = Whereabouts({name: sorted(spans) for name, spans in absent.items()})
        first = start + timedelta(days=draw.randrange(0, 60))
        last = first + timedelta(days=draw.randrange(0, 24))
        days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
        for name in ("Sam", "Priya", "Jordan"):
            assert where.clear_through(name, first, last) == where.clear(name, days), (absent, first, last)
