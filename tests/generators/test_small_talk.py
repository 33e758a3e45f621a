"""The composed small-talk generator (generators/small_talk/) and its fragment banks."""

from __future__ import annotations

import random
import re
import shutil
from collections import defaultdict
from datetime import date, datetime, time, timedelta
from itertools import pairwise

import pytest

from backends.tokens import count_tokens
from generators.small_talk import BANK_DIR, BankError, SmallTalk, WordingsExhausted, parse_banks
from generators.small_talk.kinds import fits
from tests.support.records import dialogue_record
from verifier.dialogue_rules import completion_claim
from verifier.gameability import acknowledges, normalize
from verifier.history_form import echoed, reaction_of

pytestmark = pytest.mark.slow

CITIES = ("Portland", "Denver", "Austin", "Leeds", "Bristol", "Toronto", "Dublin", "Melbourne", "Rotterdam",
          "Lyon", "Porto", "Seattle", "Chicago", "Edinburgh", "Vancouver", "Auckland", "Cape Town", "Singapore",
          "Boston", "Manchester", "Minneapolis", "Atlanta")
FIRSTS = ("Dana", "Marcus", "Priya", "Owen", "Lena", "Tobias", "Aisha", "Felix", "Nora", "Rafael", "Ingrid",
          "Caleb", "Mira", "Desmond", "Yara", "Elliot", "Hana", "Julian", "Sofia", "Malik", "Greta", "Declan")
COMPANIES = ("Bramblecrest Logistics", "Copperleaf Foods", "Harborview Partners", "Lumen Ridge Software",
             "Tallgrass Health", "Bluefin Outfitters", "Stonebridge Insurance", "Quillmark Publishing")
PROJECTS = ("Atlas Migration", "Beacon Portal", "Cedar Rebrand", "Delta Onboarding", "Ember Pricing",
            "Falcon Reporting", "Garnet Audit", "Harbor Expansion", "Indigo Launch", "Juniper Intranet")

# Small talk adds no action items: the user asks for nothing, the assistant promises nothing.
USER_REQUEST = re.compile(
    r"\b(please|pls|can you|could you|would you|will you|remind me|send|sends|sending|schedule|scheduled|"
    r"update|book (?:a|an|the|me|us)|set up|make sure|don't forget|need you|want you|help me|let me know)\b", re.I)
ASSISTANT_PROMISE = re.compile(
    r"\b(i'll|i will|i'm going to|let me|i've|i have|i can|i could|i'd|i shall|leave it with me)\b", re.I)


def make(seed: int, city: str | None = None, **overrides) -> SmallTalk:
    """One history's composer, its persona inputs drawn from ``seed``."""
    pick = random.Random(seed * 7919 + 1)
    args = dict(rng=random.Random(seed), user_first=pick.choice(FIRSTS), assistant="Assistant",
                colleagues=pick.sample([n for n in FIRSTS], 5), company=pick.choice(COMPANIES),
                city=pick.choice(CITIES) if city is None else city, projects=pick.sample(PROJECTS, 3))
    args["colleagues"] = [c for c in args["colleagues"] if c != args["user_first"]]
    args.update(overrides)
    return SmallTalk(**args)


def working_days(start: date, n: int) -> list[date]:
    out, day = [], start
    while len(out) < n:
        if day.weekday() < 5:
            out.append(day)
        day += timedelta(days=1)
    return out


def history(st: SmallTalk, start: date, *, sessions: int = 5, pairs_per_session: int = 35, seed: int = 0,
            first_hour: int = 8) -> list[tuple[datetime, str, list[tuple[str, str]]]]:
    """A simulated history: per working day an opener, exchanges of 1-4 pairs, a closer.
    Returns ``(when, kind, lines)`` for every call."""
    rng = random.Random(seed)
    out = []
    for day in working_days(start, sessions):
        when = datetime.combine(day, time(first_hour, 30)) + timedelta(minutes=rng.randint(0, 90))
        out.append((when, "opener", st.opener(when)))
        left = pairs_per_session - 2
        while left > 0:
            pairs = min(left, rng.choice((1, 1, 2, 2, 3, 4)))
            when += timedelta(seconds=rng.randint(60, 300) * pairs)
            out.append((when, "exchange", st.exchange(when, pairs)))
            left -= pairs
        when += timedelta(minutes=3)
        out.append((when, "closer", st.closer(when)))
    return out


def texts(hist) -> list[tuple[str, str]]:
    return [line for _, _, lines in hist for line in lines]


def spread_start(i: int) -> date:
    """Start dates spread over 2024-2025."""
    return date(2024, 1, 8) + timedelta(days=(i * 37) % 700)


# --------------------------------------------------------------------------------------------
# Interface
# --------------------------------------------------------------------------------------------


def test_shapes_of_opener_closer_and_exchanges():
    st = make(1)
    when = datetime(2024, 5, 14, 9, 5)
    for lines in (st.opener(when), st.closer(when + timedelta(hours=1))):
        assert [role for role, _ in lines] == ["user", "assistant"]
        assert all(isinstance(text, str) and text.strip() for _, text in lines)
    for pairs in (1, 2, 3, 4, 5, 7):
        lines = st.exchange(when + timedelta(minutes=pairs), pairs)
        assert len(lines) == 2 * pairs
        assert [role for role, _ in lines] == ["user", "assistant"] * pairs


def test_pairs_below_one_is_refused():
    with pytest.raises(ValueError, match="pairs"):
        make(2).exchange(datetime(2024, 5, 14, 9, 0), 0)


def test_same_seed_same_talk_other_seed_other_talk():
    def run(seed):
        return texts(history(make(seed), date(2024, 3, 4), sessions=2, seed=seed))

    first = run(11)
    random.seed(12345)  # the global generator plays no part
    assert run(11) == first
    random.seed(999)
    assert run(11) == first
    assert run(12) != first
    # the persona is drawn from the rng: stable for a seed, different across seeds
    assert make(11).persona == make(11).persona
    assert make(11).persona != make(12).persona


def test_no_global_random_and_no_clock(monkeypatch):
    import importlib
    import inspect

    def forbidden(*args, **kwargs):
        raise AssertionError("the global random generator was used")

    for name in ("random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform",
                 "getrandbits", "seed"):
        monkeypatch.setattr(random, name, forbidden)
    st = make(21)  # make() itself uses private Random objects only
    assert len(texts(history(st, date(2024, 8, 5), sessions=2, seed=4))) > 100
    for part in ("", ".bank", ".calendar_facts", ".tables", ".composer"):  # every module of the package
        source = inspect.getsource(importlib.import_module("generators.small_talk" + part))
        for clock in ("datetime.now", "date.today", "time.time", "perf_counter", "utcnow"):
            assert clock not in source


def test_same_output_under_another_hash_seed(tmp_path):
    import os
    import subprocess
    import sys

    script = (
        "import random, sys\n"
        "from datetime import datetime, timedelta\n"
        "from generators.small_talk import SmallTalk\n"
        "st = SmallTalk(rng=random.Random(5), user_first='Nora', assistant='Ash', colleagues=['Ada', 'Eli'],\n"
        "               company='Acme', city='Dublin', projects=['Atlas'])\n"
        "t = datetime(2024, 3, 4, 9, 0)\n"
        "out = st.opener(t) + [l for k in range(30) for l in st.exchange(t + timedelta(minutes=k), 1 + k % 3)]\n"
        "print(repr(out))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outputs = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=root)
        done = subprocess.run([sys.executable, "-c", script], env=env, cwd=root, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1


# --------------------------------------------------------------------------------------------
# The dataset-level targets
# --------------------------------------------------------------------------------------------


def test_twenty_histories_little_cross_history_overlap_and_no_repeats_inside_one():
    n = 20
    histories = [texts(history(make(1000 + i), spread_start(i), seed=i)) for i in range(n)]
    owners: dict[str, set[int]] = defaultdict(set)
    for i, lines in enumerate(histories):
        keys = [normalize(text) for _, text in lines]
        assert len(keys) == len(set(keys)), f"history {i} repeats an utterance"
        for key in keys:
            owners[key].add(i)
    total = sum(len(lines) for lines in histories)
    assert total >= n * 5 * 35 * 2
    shared = sum(1 for lines in histories for _, text in lines if len(owners[normalize(text)]) > 1)
    assert shared / total <= 0.15, f"{shared / total:.1%} of utterances occur verbatim in another history"


def test_reactions_say_a_word_of_praise_once():
    """A reaction's short word and its comment are drawn apart: none says its word twice ("Aw,
    lovely, that's lovely to hear"; "Sounds like a treat, by the sound of it")."""
    twice = re.compile(r"\b(nice|lovely|good|great|brilliant|wonderful|fantastic|sound)\b.*\b\1\b", re.I)
    said = 0
    for seed in range(4):
        for role, text in texts(history(make(seed), spread_start(seed), seed=seed)):
            said += role == "assistant"
            assert not twice.search(text.replace("sounds", "sound").replace("Sounds", "sound")), text
    assert said > 300


def test_no_repeats_even_in_a_long_history():
    st = make(77)
    hist = history(st, date(2025, 2, 3), sessions=12, seed=5)
    keys = [normalize(text) for _, text in texts(hist)]
    assert len(keys) == len(set(keys))


def test_without_a_city_no_line_that_names_one_is_said():
    """A history with no city (a regenerated seed's short chats) never says a bank line with its
    city left out ("Decent for, touch wood.", "Meant to last all week in?")."""
    gaps = set()
    for bank in BANK_DIR.rglob("*.bank"):
        for line in bank.read_text(encoding="utf-8").splitlines():
            options = re.search(r"\[([^\]]+)\]", line)
            for said in ([line.replace(options.group(0), o) for o in options.group(1).split("|")] if options
                         else [line]):
                for m in re.finditer(r"([A-Za-z']+,? [A-Za-z']+) \{city\}([,.?!][^{<|\[]{0,6})", said):
                    gaps.add((m.group(1) + m.group(2)).rstrip().lower())
    assert {"decent for, touch", "weekend, typical.", "weekend, classic."} <= gaps
    said = [text.lower() for i in range(12)
            for _, text in texts(history(make(i, city=""), spread_start(i), sessions=20, seed=i))]
    assert not [(gap, text) for gap in gaps for text in said if gap in text]


def test_small_talk_asks_for_nothing_and_promises_nothing():
    checked = 0
    for i in range(8):
        for role, text in texts(history(make(200 + i), spread_start(3 * i), sessions=4, seed=i)):
            checked += 1
            if role == "user":
                assert not USER_REQUEST.search(text), text
            else:
                assert not ASSISTANT_PROMISE.search(text), text
                assert completion_claim(text) is None, text
                assert not acknowledges(text), text
    assert checked > 2000


def test_length_and_plain_ascii():
    """Short lines like real chat: about a dozen tokens (the benchmark's 14 +- 20 %), none over 28."""
    tokens: dict[str, list[int]] = {"user": [], "assistant": []}
    for i in range(6):
        for role, text in texts(history(make(300 + i), spread_start(5 * i), sessions=4, seed=i)):
            n = count_tokens(text)
            assert len(text.split()) >= 4 and n <= 28, text
            assert text.isascii() and text == " ".join(text.split()), text
            assert text[0].isupper(), text
            assert text[-1] in ".!?", text
            tokens[role].append(n)
    for role, counts in tokens.items():
        average = sum(counts) / len(counts)
        assert 10 <= average <= 15, f"{role} lines average {average:.1f} tokens"


# --------------------------------------------------------------------------------------------
# Persona and composition
# --------------------------------------------------------------------------------------------


def test_the_talk_belongs_to_this_person():
    st = make(5, colleagues=["Quentin", "Roswitha"], company="Zebulon Widgets", projects=["Project Kestrel"])
    said = " ".join(text for _, text in texts(history(st, date(2024, 10, 7), sessions=5, seed=3)))
    persona = st.persona
    for slot in ("friend", "street", "cafe", "hobby", "fav_food"):
        assert persona[slot] and persona[slot] in said, slot
    if persona.get("pet"):
        assert persona["pet"] in said
    if persona.get("partner"):
        assert persona["partner"] in said
    assert "Quentin" in said and "Roswitha" in said
    assert "Zebulon Widgets" in said
    assert persona["user"] == st.persona["user"] and persona["user"] in said


def test_replies_react_without_echoing_the_user_line():
    """A reaction comments on the user's line without repeating a name or content word of it
    ("Slept like a log, Elm Street was silent." / not "A silent Elm Street, nice.")."""
    st = make(8)
    echoes = total = 0
    day = datetime(2024, 4, 9, 9, 0)
    for k in range(60):
        when = day + timedelta(minutes=6 * k)
        for (_, said), (_, reply) in zip(*[iter(st.exchange(when, 1 + k % 3))] * 2):
            total += 1
            echoes += echoed(said, reaction_of(reply)) is not None
    assert total >= 100 and echoes / total <= 0.02


def test_follow_up_answers_give_a_kind_the_question_expects():
    """Every follow-up question is answered by a line of a kind it expects (read back from the
    banks' tags): "Coffee helping?" is not answered "Better after Elm Park"."""
    judged = 0
    for seed in range(3):
        st = make(30 + seed)
        day = datetime(2024, 10, 7, 8, 40)
        for k in range(40):
            lines = st.exchange(day + timedelta(days=k // 8, minutes=40 * (k % 8)), 3)
            for (role, question), (_, answer) in pairwise(lines[1:]):
                if role == "assistant" and question.endswith("?"):
                    verdict = fits(question, answer)
                    assert verdict is not False, (question, answer)
                    judged += verdict is True
    assert judged >= 40


def test_multi_pair_exchanges_stay_on_one_topic():
    st = make(9)
    day = datetime(2024, 9, 10, 9, 0)
    for k in range(30):  # six a day (a follow-up asked once a day: thirty in one day would run out)
        pairs = 2 + k % 3
        lines = st.exchange(day + timedelta(days=k // 6, minutes=4 * k), pairs)
        when, topic, logged = st.log[-1]
        assert logged == lines  # one exchange, one topic
        asks = [text for role, text in lines[1:-1] if role == "assistant"]
        assert all(text.endswith("?") for text in asks), asks  # the assistant follows up ...
        assert not lines[-1][1].endswith("?")  # ... and closes the topic with a reaction
        assert all(not text.endswith("?") for role, text in lines if role == "user")


# --------------------------------------------------------------------------------------------
# Calendar fit
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("hour, word, never", [
    (8, "morning", ("afternoon", "evening")),
    (11, "morning", ("afternoon", "evening")),
    (14, "afternoon", ("morning", "evening")),
    (19, "evening", ("morning", "afternoon")),
])
def test_openers_greet_for_the_hour(hour, word, never):
    for seed in range(12):
        st = make(400 + seed)
        (_, user), (_, reply) = st.opener(datetime(2024, 6, 4, hour, 10))
        greeting = f"{user} {reply}".lower()
        assert word in greeting, greeting
        greetings = " ".join(re.split(r"[.!?]", text)[0] for text in (user, reply)).lower()
        assert word in greetings and not any(w in greetings for w in never), greeting


LUNCH_STORY = re.compile(r"\b(lunch was|ate lunch|took lunch|back from lunch|after a \w+ lunch|"
                         r"for lunch and I regret|for lunch and now)\b", re.I)


def test_time_of_day_topics_and_lunch_stories():
    seen = defaultdict(set)
    for seed in range(10):
        st = make(500 + seed)
        for day in working_days(date(2024, 2, 5), 4):
            for hour in (8, 9, 10, 11, 12, 13, 15, 17):
                when = datetime.combine(day, time(hour, 20))
                for pairs in (1, 2):
                    for role, text in st.exchange(when, pairs):
                        if hour < 12:
                            assert not LUNCH_STORY.search(text), (when, text)
                    seen[st.log[-1][1]].add(hour)
    assert seen["breakfast"] and max(seen["breakfast"]) < 11
    assert seen["sleep"] and max(seen["sleep"]) < 11
    assert seen["trip_in"] and max(seen["trip_in"]) < 11
    assert seen["tonight"] and min(seen["tonight"]) >= 12
    assert seen["lunch"]


WEEKEND_TALK = re.compile(r"\b(this weekend I'm|weekend plan is|counting down to the weekend|the weekend flew by|"
                          r"Saturday was|Sunday was|best part of the weekend)\b", re.I)


def test_weekday_fit_weekend_stories_and_plans():
    topics_by_day = defaultdict(set)
    for seed in range(10):
        st = make(600 + seed)
        for day in working_days(date(2024, 10, 7), 5):  # Monday 7 October 2024 ... Friday
            for k in range(14):
                when = datetime.combine(day, time(9, 0)) + timedelta(minutes=9 * k)
                lines = st.exchange(when, 1 + k % 2)
                topics_by_day[day.weekday()].add(st.log[-1][1])
                if day.weekday() in (1, 2):
                    assert not any(WEEKEND_TALK.search(text) for _, text in lines), lines
    assert "weekend_past" in topics_by_day[0]
    assert "weekend_next" in topics_by_day[3] | topics_by_day[4]
    assert not {"weekend_past", "weekend_next"} & (topics_by_day[1] | topics_by_day[2])
    assert "weekend_next" not in topics_by_day[0]
    assert "weekend_past" not in topics_by_day[3] | topics_by_day[4]
    assert "last_night" not in topics_by_day[0]


def test_weekend_plan_on_friday_is_the_story_on_monday():
    for seed in range(30):
        st = make(650 + seed)
        friday, monday = datetime(2024, 10, 11, 9, 0), datetime(2024, 10, 14, 9, 0)
        plan = next((lines for k in range(40) for lines in [st.exchange(friday + timedelta(minutes=k), 1)]
                     if st.log[-1][1] == "weekend_next"), None)
        story = next((lines for k in range(40) for lines in [st.exchange(monday + timedelta(minutes=k), 1)]
                      if st.log[-1][1] == "weekend_past"), None)
        if plan and story:
            shared = set(plan[0][1].lower().split()) & set(story[0][1].lower().split())
            assert {w for w in shared if len(w) > 4} - {"weekend", "planning", "really"}, (plan, story)
            return
    pytest.fail("no history talked about both the weekend plan and the weekend")


COLD_WORDS = re.compile(r"\b(snow(?!donia)\w*|frost\w*|freezing|winter|scarf|gloves|sledg\w*|defrost\w*)\b", re.I)  # Snowdonia is a place
HOT_WORDS = re.compile(r"\b(summer|heat wave|sweltering|boiling|humid\w*|paddling pool|sandals)\b", re.I)


def test_season_and_climate_fit_the_city():
    def talk(city, start, seed, days=3):
        st = make(seed, city=city)
        lines = []
        for day in working_days(start, days):
            for k in range(12):
                lines += st.exchange(datetime.combine(day, time(9, 0)) + timedelta(minutes=7 * k), 1 + k % 3)
        return [text for _, text in lines]

    for seed in range(6):
        for month in (1, 4, 7, 10, 12):  # tropical: never snow, frost or winter
            assert not [t for t in talk("Singapore", date(2024, month, 2), 700 + seed) if COLD_WORDS.search(t)]
        # southern hemisphere: July is winter, January is summer
        assert not [t for t in talk("Melbourne", date(2025, 7, 1), 710 + seed) if HOT_WORDS.search(t)]
        assert not [t for t in talk("Cape Town", date(2024, 7, 1), 720 + seed) if HOT_WORDS.search(t)]
        assert not [t for t in talk("Auckland", date(2025, 1, 13), 730 + seed) if COLD_WORDS.search(t)]
        # northern continental winter: no heat
        assert not [t for t in talk("Minneapolis", date(2024, 1, 15), 740 + seed) if HOT_WORDS.search(t)]


def test_weather_of_the_season_comes_up():
    said = []
    for seed in range(8):
        st = make(760 + seed, city="Chicago")
        for day in working_days(date(2024, 1, 15), 5):
            for k in range(12):
                said += [t for _, t in st.exchange(datetime.combine(day, time(9, 0)) + timedelta(minutes=8 * k), 1)]
    assert any(COLD_WORDS.search(t) or re.search(r"\bcold\b", t, re.I) for t in said)
    assert not any(HOT_WORDS.search(t) for t in said)


def test_rare_events_at_most_once_per_history():
    patterns = {"first snow": re.compile(r"first snow", re.I), "heat wave": re.compile(r"heat wave", re.I),
                "birthday": re.compile(r"birthday", re.I), "holiday": re.compile(r"Christmas|Thanksgiving", re.I)}
    happened = defaultdict(int)
    for seed in range(12):
        for city, start in (("Chicago", date(2024, 11, 4)), ("Austin", date(2024, 7, 8)), ("Denver", date(2024, 11, 25))):
            st = make(800 + seed, city=city)
            hist = history(st, start, sessions=15, seed=seed)
            for name, pattern in patterns.items():
                exchanges = {i for i, (_, _, lines) in enumerate(hist) if any(pattern.search(t) for _, t in lines)}
                assert len(exchanges) <= 1, (name, city, [hist[i][2] for i in sorted(exchanges)])
                happened[name] += len(exchanges)
            rare = [topic for _, topic, _ in st.log if topic in ("first_snow", "heat_wave", "holiday", "birthday")]
            assert len(rare) == len(set(rare))
    assert happened["birthday"] and happened["holiday"]  # rare, not impossible
    assert happened["first snow"] or happened["heat wave"]


# --------------------------------------------------------------------------------------------
# avoid()
# --------------------------------------------------------------------------------------------


def test_avoid_keeps_task_values_out():
    banned = ("Quentin", "coffee", "Garnet Audit", "7")

    def avoid(text: str) -> bool:
        low = text.lower()
        return not any(b.lower() in low for b in banned)

    st = make(900, colleagues=["Quentin", "Roswitha"], projects=["Garnet Audit", "Project Kestrel"], avoid=avoid)
    lines = texts(history(st, date(2024, 5, 6), sessions=5, seed=1))
    assert len(lines) > 300
    for _, text in lines:
        assert avoid(text), text
    assert any("Roswitha" in t for _, t in lines)


def test_persona_numbers_are_drawn_again_when_avoid_rejects_them():
    """A bus route or commute length that is one of the task's values is drawn again: every
    fragment naming it would be rejected, so the persona could not be composed."""
    def avoid(text: str) -> bool:
        return not any(int(n) % 2 == 0 for n in re.findall(r"\b\d+\b", text))

    for seed in range(40):
        st = make(seed, avoid=avoid)
        lines = texts(history(st, date(2024, 5, 6), sessions=2, seed=1))
        assert lines and all(avoid(text) for _, text in lines)


def test_a_colleague_the_office_shows_away_is_not_in_that_day_s_talk():
    """"Naomi brought cake at lunch" on a day her out-of-office notice says she is away."""
    start = date(2024, 5, 6)
    away = (start + timedelta(days=1), start + timedelta(days=3))
    named_away = named_in = 0
    for seed in range(8):
        st = make(seed, colleagues=["Quentin", "Roswitha"], absences=[("Quentin", *away)])
        for when, _, lines in history(st, start, sessions=5, seed=seed):
            hits = sum(bool(re.search(r"\bQuentin\b", text)) for _, text in lines)
            if away[0] <= when.date() <= away[1]:
                named_away += hits
            else:
                named_in += hits
    assert named_away == 0 and named_in > 0


def test_works_without_name_company_colleagues_or_projects():
    """avoid() may take the user's name, the company and every colleague away: talk goes on."""
    for seed in range(12):
        st = SmallTalk(rng=random.Random(seed), user_first="", assistant="", colleagues=[], company="",
                       city=CITIES[seed % len(CITIES)], projects=[])
        for day in working_days(date(2024, 1, 8) + timedelta(days=29 * seed), 4):
            for hour in (7, 9, 11, 12, 14, 17, 20):
                when = datetime.combine(day, time(hour, 5))
                lines = st.opener(when) + st.exchange(when, 1 + hour % 4) + st.closer(when)
                assert all("{" not in text and "<" not in text for _, text in lines)


def test_impossible_composition_raises_a_clear_error():
    with pytest.raises(ValueError, match="avoid"):
        st = make(901, avoid=lambda text: False)
        st.exchange(datetime(2024, 5, 6, 9, 0), 1)


# --------------------------------------------------------------------------------------------
# The banks
# --------------------------------------------------------------------------------------------


def test_bank_files_exist_and_parse():
    files = sorted(BANK_DIR.glob("*.bank"))
    assert len(files) >= 5
    bank = parse_banks([(str(p), p.read_text(encoding="utf-8")) for p in files])
    assert len(bank.pools) > 300


GOOD = "== greet.open\n- Hello {user}, nice [day|morning].\n"


@pytest.mark.parametrize("text, message", [
    ("- an entry before any pool\n", "x.bank:1: expected '== section.name'"),
    ("== a.b\nwhen sunny_tuesday\n- hi\n", "x.bank:2: unknown flag 'sunny_tuesday'"),
    ("== a.b\n- hi {nonexistent_slot}\n", "x.bank:2: unknown slot {nonexistent_slot}"),
    ("== a.b\n- hi <no.such.pool>\n", "x.bank:2: <no.such.pool>: no such pool"),
    ("== a.b\n- hi <hob.no_such_part>\n", "x.bank:2: <hob.no_such_part>: no pools 'hobbies.<id>.*' to alias"),
    ("== hobbies.chess.news\n- won\n== a.b\n- hi <hob.other>\n", "x.bank:4: <hob.other>: pool 'hobbies.chess.other' is missing"),
    ("== a.b\n- hi {user\n", "x.bank:2: stray bracket"),
    ("== a.b\n- hi [one|two\n", "x.bank:2: '[' without ']'"),
    ("== a.b\n- hi [one]\n", "x.bank:2: [one] needs at least two alternatives"),
    ("== a.b\n- hi [<greet.open=x>|two]\n", "x.bank:2: no captures inside [ ] alternatives"),
    ("== a.b\n- hi <greet.open=user>\n", "captures may not reuse slot names: ['user']"),
    ("== a.b\n- caf\u00e9\n", "x.bank:2: non-ASCII"),
    ("== a.b\n- x\n== a.b\n- y\n", "x.bank:3: section 'a.b' is already defined at x.bank:1"),
    ("== a.b\n\n== c.d\n- y\n", "x.bank:1: section 'a.b' has no entries"),
    ("== a.b\n-\n", "x.bank:2: empty entry"),
    ("== a.b\nhello there\n", "x.bank:2: expected '- text'"),
    ("== a.b\n- one <a.b>\n", "refers to itself"),
    ("== Bad Name\n- x\n", "x.bank:1: bad section name"),
    ("== a.b: x | y\n- one | two\n", "x.bank:1: small-talk pools declare no fields"),
])
def test_malformed_banks_name_file_and_line(text, message):
    parse_banks([("ok.bank", GOOD)])
    with pytest.raises(BankError) as info:
        parse_banks([("ok.bank", GOOD), ("x.bank", text)])
    assert message in str(info.value)


@pytest.mark.parametrize("file, old, new, message", [
    ("persona.bank", "== cafe.name\n", "== cafe.names\n", "required pool 'cafe.name' is missing"),
    ("day.bank", "== sky.plans.end\n", "== sky.plans_end\n", "beat sky.plans lacks end"),
    ("day.bank", "== sky.reply\n", "== sky.replies\n", "topic 'sky' has no pool 'sky.reply'"),
    ("day.bank", "- <bye.why=why>\n- <bye.why=why>\n", "- <bye.why=why>\n- <bye.why>\n",
     "{why.1} is not captured by every earlier line of the exchange (pool 'bye.reply')"),
    # every follow-up question and answer line says its kinds, and only they do
    ("day.bank", "- All week? | expects: yes-no\n", "- All week?\n",
     "a follow-up question needs '| expects: <kinds>'"),
    ("day.bank", "- All week? | expects: yes-no\n", "- All week? | expects: yes-no fortnight\n",
     "unknown kind 'fortnight' in 'expects:'"),
    ("day.bank", "- All week? | expects: yes-no\n", "- All week? | expects: age\n",
     "no answer of sleep.cause gives age"),
    ("day.bank", "- <m.lead> sometimes, {friend} says stress. | <r.ok>. | gives: frequency yes-no\n",
     "- <m.lead> sometimes, {friend} says stress. | <r.ok>.\n", "an answer line needs '| gives: <kinds>'"),
    ("day.bank", "- <m.lead> sometimes, {friend} says stress. | <r.ok>. | gives: frequency yes-no\n",
     "- <m.lead> sometimes, {friend} says stress. | <r.ok>. | kind: frequency\n", "unknown tag 'kind'"),
    ("day.bank", "- Got a {cafe} coffee[.|!] | <r.good>.\n", "- Got a {cafe} coffee[.|!] | <r.good>. | gives: food\n",
     "'gives:' belongs to answer lines"),
])
def test_the_banks_must_have_every_topic_pool_and_capture_they_use(tmp_path, file, old, new, message):
    from generators.small_talk.bank import load_bank_dir

    shutil.copytree(BANK_DIR, tmp_path / "banks")
    path = tmp_path / "banks" / file
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    with pytest.raises(BankError) as info:
        load_bank_dir(tmp_path / "banks")
    assert message in str(info.value), info.value


# --------------------------------------------------------------------------------------------
# One person, one story: facts told the same way, stories told once, weekdays kept
# --------------------------------------------------------------------------------------------

MARKERS = re.compile(r"^(?:(?:honestly|ha|well|oh|mm|hmm|so|yeah|eh|ooh|anyway|okay),\s*)+", re.I)
HOW_LONG_HERE = re.compile(r"^(?:Long on|Been there long|How long have you (?:been on|lived near)|Local long)")
HOW_OLD_PET = re.compile(r"^(?:How old is|Had \w+ long|How long have you had)")


def _answers(hist, question: re.Pattern) -> list[str]:
    """The user's answers to the assistant's questions matching ``question`` (markers dropped)."""
    out = []
    for _, _, lines in hist:
        for (role, text), (_, answer) in zip(lines, lines[1:]):
            last = re.split(r"(?<=[.!?])\s+", text)[-1]
            if role == "assistant" and question.match(last):
                out.append(MARKERS.sub("", answer).lower())
    return out


def test_a_persona_fact_is_told_once_and_the_same_way():
    """'Four years, Hawthorn Hill feels like ours' and later 'Six years': how long the person has
    lived there, had their pet, got into their hobby, is one fact of the persona."""
    told = 0
    for seed in range(16):
        st = make(seed)
        hist = history(st, spread_start(seed), sessions=10, pairs_per_session=40, seed=seed)
        for question in (HOW_LONG_HERE, HOW_OLD_PET):
            answers = _answers(hist, question)
            told += len(answers)
            assert len(answers) <= 1, (seed, answers)
        facts = [MARKERS.sub("", u).lower() for _, _, lines in hist for r, u in lines if r == "user"
                 and re.search(r"\b(years|in goal)\b", u)]
        numbers = {re.sub(r"\W.*", "", f) for f in facts if re.match(r"(three|four|five|six|seven|ten|twelve) years", f)}
        assert len(numbers) <= 1, (seed, facts)
    assert told >= 5


def test_the_same_question_gets_one_answer_in_a_history():
    """'Typical evening?' of last night and of tonight, 'Usual breakfast?' on two days: a habit
    is a fact of the persona, and a question asked for one beat is not asked for another."""
    from generators.english import near_key

    habits = 0
    for seed in range(12):
        st = make(seed)
        hist = history(st, spread_start(seed), sessions=10, pairs_per_session=40, seed=seed)
        answers: dict[str, set[str]] = defaultdict(set)
        assert hist
        for _, topic, lines in st.log:
            for (role, text), (_, answer) in zip(lines, lines[1:]):
                if role == "assistant" and text.endswith("?") and topic in ("tonight", "last_night", "breakfast", "lunch"):
                    answers[_question(text)].add(near_key(MARKERS.sub("", answer)))
        for question in ("typical evening", "usual breakfast", "every morning"):
            habits += len(answers.get(question, ()))
            assert len(answers.get(question, ())) <= 1, (seed, question, answers[question])
    assert habits >= 3  # the habit questions are asked


def _question(text: str) -> str:
    from generators.english import near_key

    return " ".join(near_key(re.split(r"(?<=[.!?])\s+", text)[-1]).replace("\u00b7", " ").split())


def test_a_follow_up_is_asked_once_a_day_when_other_talk_can_fill_in():
    """'Recharged?' after the weekend, answered, then asked again that afternoon: in a history
    (strict: other work fills in when small talk runs dry) a follow-up is asked once a day."""
    from generators.english import near_key

    asked = 0
    for seed in range(8):
        st = make(seed)
        st.strict = True
        rng = random.Random(seed)
        for day in working_days(spread_start(seed), 6):
            when = datetime.combine(day, time(9, 0))
            for _ in range(25):
                when += timedelta(minutes=rng.randint(5, 20))
                try:
                    st.exchange(when, rng.choice((2, 3, 4)))
                except WordingsExhausted:
                    continue
        on_a_day: dict[tuple, set[str]] = defaultdict(set)
        for when, _, lines in st.log:
            for (role, text), (_, answer) in zip(lines, lines[1:]):
                if role == "assistant" and text.endswith("?"):
                    on_a_day[when.date(), _question(text)].add(near_key(MARKERS.sub("", answer)))
                    asked += 1
        assert all(len(said) == 1 for said in on_a_day.values()), (seed, [k for k, v in on_a_day.items() if len(v) > 1])
    assert asked >= 200


def test_a_story_is_told_once():
    """No partner learning the drums on Monday and the trumpet on Thursday: the user's news
    openings in one history are different stories, not one story with other details."""
    for seed in range(16):
        st = make(seed)
        history(st, spread_start(seed), sessions=8, pairs_per_session=40, seed=seed)
        opens: dict[str, list[set[str]]] = defaultdict(list)
        for _, topic, lines in st.log:
            if topic not in ("hobby", "pet", "family", "home", "local", "media", "office", "travel"):
                continue  # lunch plans, the weather, the trip in: told anew every day
            words = set(re.findall(r"[a-z']+", MARKERS.sub("", lines[0][1]).lower())) - {"the", "a", "my", "is", "and"}
            for other in opens[topic]:
                assert len(words & other) / len(words | other) < 0.75, (seed, topic, lines[0][1])
            opens[topic].append(words)


def test_a_weekly_hobby_happens_on_its_weekday():
    """'Guitar at my Thursday lessons tonight' is not said on a Tuesday."""
    weekdays = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
    checked = 0
    for seed in range(400):
        st = make(seed)
        spot = st.persona["hob_spot"]
        day = next((i for i, d in enumerate(weekdays) if d in spot), None)
        if day is None:
            continue
        hist = history(st, spread_start(seed), sessions=10, pairs_per_session=30, seed=seed, first_hour=13)
        for when, _, lines in hist:
            for role, text in lines:
                if spot.lower() in text.lower() and role == "user":
                    if "tonight" in text:
                        checked += 1
                        assert when.weekday() == day, (when, text)
                    if "last night" in text:
                        checked += 1
                        assert (when.weekday() - 1) % 7 == day, (when, text)
        if checked >= 6:
            break
    assert checked >= 1


def test_no_word_or_phrase_said_twice_in_one_line():
    """'Enjoy Bramley Fields, see you soon. See you soon.'"""
    for seed in range(20):
        st = make(seed)
        for role, text in texts(history(st, spread_start(seed), seed=seed)):
            words = re.findall(r"[a-z0-9']+(?:[_.@/-][a-z0-9']+)*", text.lower())
            assert not any(a == b for a, b in zip(words, words[1:])), text
            grams = [tuple(words[i:i + 3]) for i in range(len(words) - 2)]
            assert len(grams) == len(set(grams)), text


def test_reaction_pools_hold_no_acknowledgement_or_promise():
    """Every fragment of the reaction pools (r.*) reads as a reaction, not as the assistant
    taking note or promising ("will do", "noted", "I'll ..."), whichever fragments are drawn."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(BANK_DIR.glob("*.bank")))
    pools = re.findall(r"^== (r\.[a-z.]+)\n((?:- .*\n?)+)", text, re.M)
    assert {name for name, _ in pools} >= {"r.good.b", "r.ugh.b", "r.ha.b", "r.ok.b", "r.enjoy.b", "r.luck.b"}
    for name, body in pools:
        for line in body.splitlines():
            fragment = line[2:]
            assert not acknowledges(fragment) and not ASSISTANT_PROMISE.search(fragment), (name, fragment)


def test_a_follow_up_is_asked_once_a_day_even_when_the_talk_runs_dry():
    from verifier.history_form import same_question_answers

    st = make(9)
    st.strict = False  # the last resort of a long day: stories may be told again, follow-ups not asked again
    day = datetime(2024, 9, 10, 8, 0)
    turns = []
    for k in range(90):  # far more talk than a day holds
        try:
            lines = st.exchange(day + timedelta(minutes=4 * k), 3)
        except WordingsExhausted:
            continue
        turns += [{"role": role, "text": text} for role, text in lines]
    found = same_question_answers([dialogue_record(turns)])
    assert found["asked"] >= 20 and found["same_day"] == 0, found


def test_the_colleagues_in_on_a_day_are_those_no_span_shows_away():
    """The day's talk names the colleagues the office does not show away that day, everyone when
    all are away; kept per day, the answer is the same asked again and differs from day to day."""
    start = date(2024, 5, 6)
    pick = random.Random(5)
    for seed in range(40):
        names = ["Quentin", "Roswitha", "Ines", "Bao"][:1 + seed % 4]
        spans = [(pick.choice(names), start + timedelta(days=a), start + timedelta(days=a + pick.randrange(4)))
                 for a in (pick.randrange(-2, 9) for _ in range(pick.randrange(1, 5)))]
        st = make(seed, colleagues=names, absences=spans)
        for _ in range(2):
            for day in (start + timedelta(days=i) for i in range(-3, 14)):
                want = [c for c in names if not any(n == c and a <= day <= b for n, a, b in spans)] or names
                assert st._present(day) == want, (spans, day)


def test_eligible_entries_are_those_whose_conditions_hold():
    """The entries a pool gives under some flags, cached by the bits the pool looks at, are the
    entries of the pool whose needed flags are all set and forbidden ones all clear, over random
    flags asked of every conditional pool twice in turn (a cached answer for other bits would show)."""
    from generators.small_talk.bank import FLAGS
    from generators.small_talk.tables import POOLS, RELEVANT, eligible

    bits = [FLAGS.bit(name) for name in sorted(FLAGS.bits)]
    pools = sorted(name for name in POOLS if RELEVANT[name])
    rng = random.Random(29)
    for _ in range(3000):
        name = rng.choice(pools)
        flags = sum(b for b in bits if rng.random() < 0.3)
        want = {id(e) for e in POOLS[name].entries if e.need & flags == e.need and not e.forbid & flags}
        assert {id(e) for e in eligible(name, flags)} == want, name


def test_beat_checks_match_their_plain_reading():
    """The follow-up checks (which kinds a beat's answers can give now, whether its answer is a
    fact told already) give what a plain reading of every answer entry gives, through histories
    long enough to keep and tell persona facts."""
    from generators.small_talk.composer import POOLS, eligible

    def plain_kinds(st, beat, flags, aliases):
        kinds, captured = set(), False
        for entry in eligible(beat + "ans", flags):
            for part in entry.parts:
                if part[0] != 2 or not part[5]:
                    continue
                captured = True
                name = aliases.get(part[1], "") + part[2] if part[1] else part[3]
                for answer in eligible(name, flags) if name in POOLS else ():
                    kept = st._facts.get(name) if name in st._kinds else None
                    if kept is None or answer is kept[0]:
                        kinds |= answer.gives
        return frozenset(kinds) if captured else None

    def plain_told(st, topic, beat, aliases):
        for entry in POOLS[f"{topic}.{beat}.ans"].entries:
            names = [(aliases.get(p[1], "") + p[2]) if p[1] else p[3] for p in entry.parts if p[0] == 2]
            if not any(n in st._told for n in names):
                return False
        return True

    checked = {"kinds": 0, "told": 0, "told_true": 0}
    for seed in range(6):
        st = make(seed)
        answer_kinds, told_beat = st._answer_kinds, st._told_beat

        def kinds_checked(beat, flags, aliases, st=st, answer_kinds=answer_kinds):
            got = answer_kinds(beat, flags, aliases)
            assert got == plain_kinds(st, beat, flags, aliases)
            checked["kinds"] += 1
            return got

        def told_checked(topic, beat, aliases, st=st, told_beat=told_beat):
            got = told_beat(topic, beat, aliases)
            assert got == plain_told(st, topic, beat, aliases)
            checked["told"] += 1
            checked["told_true"] += got
            return got

        st._answer_kinds, st._told_beat = kinds_checked, told_checked
        day = datetime(2024, 3, 4, 9, 0)
        for k in range(60):
            try:
                st.exchange(day + timedelta(days=k // 6, minutes=50 * (k % 6)), 2 + k % 3)
            except WordingsExhausted:
                pass
    assert checked["kinds"] > 100 and checked["told"] > 100 and checked["told_true"] > 0
