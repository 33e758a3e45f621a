"""The history context of the evaluation harness: long-context and retrieval (BM25 or embeddings)
over raw turns, sessions or summaries, evidence recall, and the summary cache.

Real records come from a small offline build made once for the module; recall is checked
exactly on a record written by hand, where we know which turns carry evidence.
"""

from __future__ import annotations

import copy
import json
import math
import re

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from backends import tokens
from backends.dataset_reader import iter_tasks
from backends.fake_llm import FakeLLMServer, embedding_for
from backends.llm import LLMClient, LLMSettings
from backends.task_record import RecordError
from backends.tokens import approx_tokens, count_tokens, counter_description, counter_name
from generators.model import Session, transcript
from harness.context import ContextConfig, HistoryContext, build_context
from harness.retrieval import BM25Retriever, EmbeddingRetriever, tokenize
from harness.summaries import EXTRACTIVE_KIND, cache_file, extractive_summary, has_detail, summary_key
from orchestrator.build import build
from orchestrator.fake_llm.offline_responder import default_responder
from orchestrator.fake_llm.prompt_roles import role_of
from orchestrator.roles import BuildConfig
from tests.support.records import record_with

LONG = ContextConfig()
RAG_CONFIGS = [
    ContextConfig("rag", "raw", "session", top_k=2),
    ContextConfig("rag", "raw", "utterance"),
    ContextConfig("rag", "summary", "session", top_k=2),
    ContextConfig("rag", "summary", "chunk", top_k=1),
]
EVIDENCE_MARK = re.compile(r"\{m\d+")


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("context") / "ds"
    build(out, 4, BuildConfig(seed=3, days=5, utterances_per_day=20), workers=1)
    loaded = [task.record for task in iter_tasks(out)]
    assert len(loaded) == 4 and all(loaded)
    return loaded


@pytest.fixture(scope="module")
def server():
    with FakeLLMServer(default_responder()) as fake:
        yield fake


def llm_client(server: FakeLLMServer) -> LLMClient:
    return LLMClient(LLMSettings(base_url=server.url, api_key=None, model="fake-model", timeout=10, max_retries=1))


class CountingClient:
    """Counts the structured calls (the summarizer's) on the way to a real client."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def structured(self, role, messages, schema, **kwargs):
        self.calls.append(role)
        return self.inner.structured(role, messages, schema, **kwargs)

    def __getattr__(self, name):
        return getattr(self.inner, name)


# -- a record written by hand -------------------------------------------------------------------

DAYS = [
    ("2024-03-04", [("Morning! The weather is lovely today.", ()), ("Glad to hear it.", ()),
                    ("I might go running after work.", ()), ("Sounds fun.", ())]),
    ("2024-03-05", [("Lunch was a sandwich again.", ()), ("A classic choice.", ()),
                    ("The weather turned grey though.", ()), ("That is a shame.", ())]),
    ("2024-03-06", [("Please book the Aurora room for the budget review.", ("m1",)),
                    ("Noted, I will remember that.", ()),
                    ("Traffic was awful this morning.", ()), ("Sorry to hear that.", ())]),
    ("2024-03-07", [("My cat knocked over a plant.", ()), ("Cats will be cats.", ()),
                    ("Running club meets tonight.", ()), ("Enjoy it.", ())]),
    ("2024-03-08", [("Also, the figures go in q3_report.xlsx by 17:00.", ("m2",)), ("Got it.", ()),
                    ("Heading out now.", ()), ("Have a good evening.", ())]),
]
QUERY_DAY3 = "Book the Aurora room for the budget review."
QUERY_ELSEWHERE = "How was the weather for running?"


def hand_record(query: str, evidence: bool = True) -> dict:
    dialogue = []
    for day, (date, turns) in enumerate(DAYS, start=1):
        items = []
        for i, (text, marks) in enumerate(turns):
            turn = {"role": "user" if i % 2 == 0 else "assistant", "text": text, "ts": f"{date}T09:{i:02d}:00"}
            if marks and evidence:
                turn["evidence"] = list(marks)
            items.append(turn)
        dialogue.append({"day": day, "date": date, "turns": items})
    return record_with("hand-1", query=query, dialogue=dialogue, description="SECRET DESCRIPTION",
                       memory=[{"id": "m1", "kind": "action", "text": "book Aurora", "value": "Aurora"},
                               {"id": "m2", "kind": "fact", "text": "file", "value": "q3_report.xlsx"}])


def rag(storage: str, granularity: str, k: int, **extra) -> ContextConfig:
    return ContextConfig("rag", storage, granularity, top_k=k, **extra)


# -- every mode on real records -----------------------------------------------------------------

@pytest.mark.parametrize("config", [LONG, *RAG_CONFIGS], ids=lambda c: c.label())
def test_every_mode_runs_and_reports_tokens(records, config):
    for record in records:
        context = build_context(record, config)
        assert isinstance(context, HistoryContext)
        assert context.text and context.tokens == count_tokens(context.text) > 0
        assert context.units
        if config.mode == "long-context":
            assert context.evidence_recall is None
        else:
            assert 0.0 <= context.evidence_recall <= 1.0
            assert len(context.units) == config.top_k


def test_long_context_is_the_whole_transcript_with_nothing_hidden_in_it(records):
    for record in records:
        sessions = [Session.from_dict(s) for s in record["dialogue"]]
        context = build_context(record, LONG)
        assert context.text == transcript(sessions)
        assert context.units == [f"d{s['day']}" for s in record["dialogue"]]
        assert context.text.count("## Day ") == len(sessions) and "[" in context.text
        assert not EVIDENCE_MARK.search(context.text)
        assert record["description"] not in context.text
        for piece in record["memory"]:  # the memory texts are the generator's words, not the chat's
            assert f"{{{piece['id']}}}" not in context.text


@pytest.mark.parametrize("config", RAG_CONFIGS, ids=lambda c: c.label())
def test_rag_contexts_are_shorter_and_hide_the_same_things(records, config):
    for record in records:
        full = build_context(record, LONG)
        context = build_context(record, config)
        assert context.tokens < full.tokens
        assert not EVIDENCE_MARK.search(context.text)
        assert record["description"] not in context.text


def test_retrieved_units_are_shown_in_chronological_order_with_their_dates():
    record = hand_record("Is it lovely?")
    context = build_context(record, rag("raw", "utterance", 3))
    # only d1t1 matches; the rest score zero and come by position
    assert context.units == ["d1t1", "d1t2", "d1t3"]
    assert context.text.splitlines() == ["2024-03-04 09:00:00 user: Morning! The weather is lovely today.",
                                         "2024-03-04 09:01:00 assistant: Glad to hear it.",
                                         "2024-03-04 09:02:00 user: I might go running after work."]
    sessions = build_context(record, rag("raw", "session", 2))
    assert sessions.units == ["d1", "d2"]
    assert sessions.text == transcript([Session.from_dict(d) for d in record["dialogue"][:2]])
    chunks = build_context(hand_record(QUERY_DAY3), rag("summary", "chunk", 2))
    assert chunks.units == ["c1", "c2"]
    assert chunks.text.index("## Summary of Days 1-2 - 2024-03-04 (Monday) to 2024-03-05 (Tuesday)") < \
        chunks.text.index("## Summary of Days 3-4 - 2024-03-06 (Wednesday) to 2024-03-07 (Thursday)")
    assert "Please book the Aurora room" in chunks.text


# -- evidence recall ----------------------------------------------------------------------------

def test_recall_by_session_follows_the_query():
    # evidence in day 3 (m1) and day 5 (m2); only day 3 has the words of QUERY_DAY3, so day 3
    # comes first and day 5 last (zero scores are ordered by position)
    on_topic = [build_context(hand_record(QUERY_DAY3), rag("raw", "session", k)) for k in range(1, 6)]
    assert [c.evidence_recall for c in on_topic] == [0.5, 0.5, 0.5, 0.5, 1.0]
    assert on_topic[0].units == ["d3"]
    off_topic = [build_context(hand_record(QUERY_ELSEWHERE), rag("raw", "session", k)) for k in range(1, 6)]
    assert [c.evidence_recall for c in off_topic] == [0.0, 0.0, 0.0, 0.5, 1.0]
    assert off_topic[0].units == ["d1"] and "d3" not in off_topic[2].units


def test_recall_by_utterance_counts_evidence_turns():
    record = hand_record(QUERY_DAY3)
    units = [f"d{d}t{t}" for d in range(1, 6) for t in range(1, 5)]
    ranking = ["d3t1"] + [u for u in units if u != "d3t1"]  # one match, then by position
    for k in range(1, len(units) + 1):
        context = build_context(record, rag("raw", "utterance", k))
        assert sorted(context.units, key=units.index) == context.units
        assert set(context.units) == set(ranking[:k])
        assert context.evidence_recall == (1.0 if "d5t1" in ranking[:k] else 0.5), k
    assert build_context(record, rag("raw", "utterance", 16)).evidence_recall == 0.5
    assert build_context(record, rag("raw", "utterance", 17)).evidence_recall == 1.0


def test_recall_by_summary_session_and_by_chunk():
    record = hand_record(QUERY_DAY3)
    by_session = [build_context(record, rag("summary", "session", k)).evidence_recall for k in range(1, 6)]
    assert by_session == [0.5, 0.5, 0.5, 0.5, 1.0]
    assert build_context(record, rag("summary", "session", 1)).units == ["s3"]
    chunks = [build_context(record, rag("summary", "chunk", k)) for k in (1, 2, 3)]
    assert [c.units for c in chunks] == [["c2"], ["c1", "c2"], ["c1", "c2", "c3"]]  # c2 = days 3-4
    assert [c.evidence_recall for c in chunks] == [0.5, 0.5, 1.0]
    three = [build_context(record, rag("summary", "chunk", k, chunk_sessions=3)) for k in (1, 2)]
    assert [c.units for c in three] == [["c1"], ["c1", "c2"]]  # c1 = days 1-3, c2 = days 4-5
    assert [c.evidence_recall for c in three] == [0.5, 1.0]


def test_recall_is_none_without_evidence_and_in_long_context():
    record = hand_record(QUERY_DAY3, evidence=False)
    for config in [rag("raw", "session", 1), rag("raw", "utterance", 3), rag("summary", "chunk", 1)]:
        assert build_context(record, config).evidence_recall is None
    assert build_context(hand_record(QUERY_DAY3), LONG).evidence_recall is None


@pytest.mark.parametrize("storage,granularity", [("raw", "session"), ("raw", "utterance"),
                                                 ("summary", "session"), ("summary", "chunk")])
def test_recall_is_one_when_k_covers_every_unit(records, storage, granularity):
    for record in records:
        context = build_context(record, rag(storage, granularity, 1000))
        assert context.evidence_recall == 1.0
        expected = sum(len(s["turns"]) for s in record["dialogue"]) if granularity == "utterance" else (
            len(record["dialogue"]) if granularity == "session" else math.ceil(len(record["dialogue"]) / 2))
        assert len(context.units) == expected


def test_whole_is_said_only_when_retrieval_returns_every_unit(records):
    for record in records:
        sessions = len(record["dialogue"])
        assert build_context(record, rag("raw", "session", sessions)).whole
        assert not build_context(record, rag("raw", "session", sessions - 1)).whole
        assert not build_context(record, LONG).whole


def test_rag_defaults_take_a_fraction_of_a_standard_history(records):
    from harness.context import rag_defaults

    assert rag_defaults("raw", None, None) == ("utterance", 20)
    assert rag_defaults("summary", None, None) == ("session", 2)
    assert rag_defaults("summary", "chunk", None) == ("chunk", 1)
    assert rag_defaults("raw", "session", 5) == ("session", 5)  # given options win
    for record in records:
        granularity, k = rag_defaults("raw", None, None)
        context = build_context(record, rag("raw", granularity, k))
        assert not context.whole and len(context.units) == 20 and context.tokens < build_context(record, LONG).tokens


def test_the_report_warns_when_retrieval_returned_the_whole_history():
    from harness.report import metrics, render_report

    rows = [{"id": f"t{i}", "trial": 1, "app_count": 1, "passed": True, "steps": 1, "context_tokens": 10,
             "evidence_recall": 1.0, "error": None, **({"context_whole": True} if i < 2 else {})} for i in range(3)]
    config = {"agent": "oracle", "context": {"mode": "rag", "granularity": "session", "top_k": 5}}
    report = render_report(metrics(rows, 1), config, dataset="ds", skipped=[], errors=[])
    assert "retrieval returned the whole history for 2 of 3 task(s) (--top-k 5 with session units)" in report
    calm = render_report(metrics([{**r, "context_whole": False} for r in rows], 1), config, dataset="ds",
                         skipped=[], errors=[])
    assert "whole history" not in calm


def test_a_record_without_dialogue_or_query_is_refused_and_a_query_of_stop_words_ranks_by_position():
    for empty in (record_with("e", dialogue=[]), record_with("e", query="")):
        with pytest.raises(RecordError):
            build_context(empty, rag("raw", "utterance", 3))
    stop_words_only = build_context(hand_record("what is the"), rag("raw", "session", 2))
    assert stop_words_only.units == ["d1", "d2"]


# -- summaries ----------------------------------------------------------------------------------

def test_extractive_summary_keeps_every_evidence_turn_with_a_detail_of_real_records(records):
    """Every evidence turn that holds a concrete detail (a figure, a file, a name, a time word)
    is kept whole; one said in plain words ("the item with the highest quantity") is a summary's
    loss, as it would be for a person skimming."""
    kept = evidence = 0
    for record in records:
        sessions = [Session.from_dict(s) for s in record["dialogue"]]
        for session in sessions:
            summary = extractive_summary([session])
            for turn in session.turns:
                if turn.evidence:
                    evidence += 1
                    kept += " ".join(turn.text.split()) in summary
                    if has_detail(turn.text):
                        assert " ".join(turn.text.split()) in summary
            assert summary == extractive_summary([session])  # deterministic
        two = extractive_summary(sessions[:2])
        assert two.splitlines()[0].startswith(f"{sessions[0].date} (") and len(two.splitlines()) == 2
    assert evidence and kept >= 0.7 * evidence  # 8 of 10 here


def test_extractive_summary_details_and_budget():
    assert has_detail("Send it to Priya on Thursday") and has_detail("the total is 1,250")
    assert has_detail("see budget_v2.xlsx") and has_detail("mail ana@example.com") and has_detail('read "Q3 Plan"')
    assert has_detail("let's meet at noon tomorrow") and not has_detail("Lovely weather, isn't it? Yes.")
    assert has_detail("For later: the memo has to cover the travel budget.") and has_detail("Please keep it short.")
    chatter = [{"role": "user", "text": f"Small talk number {w} is here. And more.", "ts": f"2024-03-04T09:{i:02d}:00"}
               for i, w in enumerate(["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"])]
    chatter.append({"role": "user", "text": "The file is plan.docx.", "ts": "2024-03-04T09:30:00"})
    summary = extractive_summary([Session.from_dict({"day": 1, "date": "2024-03-04", "turns": chatter})])
    assert "Small talk number one is here." in summary and "And more." not in summary
    assert "number ten" not in summary and summary.endswith("The file is plan.docx.")  # details pass the budget


def test_summaries_are_cached_and_not_recomputed(records, server, tmp_path):
    record = records[0]
    config = rag("summary", "session", 2)
    client = CountingClient(llm_client(server))
    first = build_context(record, config, client=client, summary_cache=tmp_path)
    assert client.calls == ["summarizer"] * len(record["dialogue"])
    files = sorted((tmp_path / record["id"] / "session").glob("*.json"))
    assert [f.name for f in files] == sorted(f"s{s['day']}.json" for s in record["dialogue"])
    stored = json.loads(files[0].read_text())
    assert stored["kind"] == "llm:fake-model" and stored["summary"] and len(stored["key"]) == 64
    assert not list(tmp_path.rglob("*.tmp"))

    client.calls.clear()
    again = build_context(record, config, client=client, summary_cache=tmp_path)
    assert client.calls == [] and again == first

    changed = copy.deepcopy(record)  # one session's text changes: only its summary is redone
    changed["dialogue"][1]["turns"][0]["text"] += " Also, it rained."
    build_context(changed, config, client=client, summary_cache=tmp_path)
    assert client.calls == ["summarizer"]

    client.calls.clear()  # chunks are another unit layout: their own files
    build_context(record, rag("summary", "chunk", 1), client=client, summary_cache=tmp_path)
    assert len(client.calls) == math.ceil(len(record["dialogue"]) / 2)
    assert (tmp_path / record["id"] / "chunk2" / "c1.json").is_file()


def test_extractive_summaries_are_cached_too(records, tmp_path, monkeypatch):
    record = records[1]
    config = rag("summary", "chunk", 2)
    first = build_context(record, config, summary_cache=tmp_path)
    path = cache_file(tmp_path, record["id"], "chunk2", "c1")
    sessions = [Session.from_dict(s) for s in record["dialogue"][:2]]
    assert json.loads(path.read_text())["key"] == summary_key(transcript(sessions), EXTRACTIVE_KIND)

    def fail(*args, **kwargs):
        raise AssertionError("the summary should come from the cache")

    monkeypatch.setattr("harness.context.extractive_summary", fail)
    assert build_context(record, config, summary_cache=tmp_path) == first
    path.write_text("{not json")  # a damaged entry is a miss, recomputed and replaced
    monkeypatch.undo()
    assert build_context(record, config, summary_cache=tmp_path) == first
    assert json.loads(path.read_text())["unit"] == "c1"


def test_llm_summarizer_through_the_fake_endpoint(records, server):
    record = records[2]
    server.reset()
    with llm_client(server) as client:
        for config in (rag("summary", "session", 3), rag("summary", "chunk", 2)):
            by_model = build_context(record, config, client=client)
            # the fake endpoint answers the summarizer prompt with the extractive summary
            assert by_model == build_context(record, config)
    requests = server.chat_requests()
    assert len(requests) == len(record["dialogue"]) + math.ceil(len(record["dialogue"]) / 2)
    for request in requests:
        assert request.status == 200 and role_of(request.body["messages"]) == "summarizer"
        prompt = json.dumps(request.body["messages"])
        assert '"evidence"' not in prompt and record["description"] not in prompt


def test_embeddings_through_the_fake_endpoint(records, server):
    record = records[3]
    server.reset()
    config = rag("raw", "utterance", 4, embeddings="fake-embed")
    with llm_client(server) as client:
        context = build_context(record, config, client=client)
    sessions = [Session.from_dict(s) for s in record["dialogue"]]
    turns = [(s, i, t) for s in sessions for i, t in enumerate(s.turns, start=1)]
    expected = EmbeddingRetriever([embedding_for(t.text) for _, _, t in turns]).top(embedding_for(record["query"]), 4)
    assert context.units == [f"d{turns[i][0].day}t{turns[i][1]}" for i in sorted(expected)]
    evidence = {f"d{s.day}t{i}" for s, i, t in turns if t.evidence}
    assert context.evidence_recall == len(evidence & set(context.units)) / len(evidence)
    calls = [r for r in server.requests if r.path.endswith("/embeddings")]
    assert len(calls) >= 1 and {r.body["model"] for r in calls} == {"fake-embed"}
    assert sum(len(r.body["input"]) for r in calls) == len(turns) + 1
    assert context.tokens == count_tokens(context.text) and len(context.text.splitlines()) == 4


def test_embeddings_need_a_client(records):
    with pytest.raises(ValueError, match="embeddings"):
        build_context(records[0], rag("raw", "session", 2, embeddings="fake-embed"))


# -- configuration ------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,option", [
    ({"mode": "vector"}, "mode"),
    ({"mode": "rag", "storage": "zip"}, "storage"),
    ({"mode": "rag", "storage": "raw", "granularity": "chunk"}, "granularity"),
    ({"mode": "rag", "storage": "summary", "granularity": "utterance"}, "granularity"),
    ({"mode": "rag", "top_k": 0}, "--top-k"),
    ({"mode": "rag", "top_k": 2.5}, "--top-k"),
    ({"mode": "rag", "top_k": True}, "--top-k"),
    ({"mode": "rag", "storage": "summary", "granularity": "chunk", "chunk_sessions": 0}, "--chunk-sessions"),
    ({"mode": "rag", "embeddings": " "}, "embeddings"),
    ({"mode": "long-context", "storage": "summary"}, "storage"),
    ({"mode": "long-context", "granularity": "utterance"}, "granularity"),
    ({"mode": "long-context", "embeddings": "fake-embed"}, "embeddings"),
])
def test_bad_configs_raise_naming_the_option(kwargs, option):
    config = ContextConfig(**kwargs)
    with pytest.raises(ValueError, match=option):
        config.validate()
    with pytest.raises(ValueError, match=option):
        build_context(hand_record(QUERY_DAY3), config)


def test_labels_and_validate_returns_the_config():
    assert ContextConfig().label() == "long-context"
    assert rag("raw", "session", 5).label() == "rag/raw/session/k=5"
    assert rag("raw", "utterance", 10).label() == "rag/raw/utterance/k=10"
    assert rag("summary", "chunk", 3, chunk_sessions=2).label() == "rag/summary/chunk=2/k=3"
    assert rag("raw", "session", 5, embeddings="e5").label() == "rag/raw/session/k=5/emb=e5"
    config = rag("summary", "session", 1)
    assert config.validate() is config and hash(config) == hash(rag("summary", "session", 1))


# -- retrieval ----------------------------------------------------------------------------------

def test_tokenize():
    assert tokenize("The file is Q3_report.xlsx, due at 5 PM!") == ["file", "q3", "report", "xlsx", "due", "5", "pm"]
    assert tokenize("and the of") == []


def test_bm25_ranks_best_first_and_breaks_ties_by_index():
    texts = ["lunch was nice", "budget review on friday", "the budget", "weather", "budget budget review"]
    retriever = BM25Retriever(texts)
    assert retriever.top("budget review", 2)[0] in (1, 4) and set(retriever.top("budget review", 3)) == {1, 2, 4}
    assert retriever.top("nothing matches", 3) == [0, 1, 2]
    assert retriever.top("weather", 10)[0] == 3 and len(retriever.top("weather", 10)) == 5
    # a word in most units of a tiny corpus: BM25Okapi's floor would make its idf negative and
    # rank the units that have it last; ours keeps it positive
    assert BM25Retriever(["alpha beta", "alpha beta", "gamma"]).top("alpha", 3) == [0, 1, 2]
    assert BM25Retriever(["alpha beta", "gamma", "alpha beta"]).top("alpha", 3) == [0, 2, 1]
    assert BM25Okapi([["alpha", "beta"], ["gamma"], ["alpha", "beta"]]).get_scores(["alpha"])[0] < 0
    assert BM25Retriever([]).top("x", 3) == [] and BM25Retriever(["", "the"]).top("x", 5) == [0, 1]


def test_bm25_scores_match_rank_bm25(records):
    for record in records:
        texts = [t["text"] for s in record["dialogue"] for t in s["turns"]]
        ours = BM25Retriever(texts).scores(record["query"])
        theirs = BM25Okapi([tokenize(t) for t in texts]).get_scores(tokenize(record["query"]))
        assert np.array_equal(ours, theirs)


def test_embedding_retriever_uses_cosine_similarity():
    retriever = EmbeddingRetriever([[1, 0], [0, 5], [1, 1], [0, 0]])
    assert retriever.top([0, 1], 4) == [1, 2, 0, 3]  # a zero vector scores 0, like the orthogonal one
    assert retriever.top([2, 0], 2) == [0, 2]
    assert retriever.top([0, 0], 2) == [0, 1]
    with pytest.raises(ValueError, match="dimensions"):
        retriever.top([1, 0, 0], 1)
    assert EmbeddingRetriever([]).top([1.0], 3) == []


def test_the_fallback_counter_counts_pieces_and_long_runs():
    assert approx_tokens("") == 0
    assert approx_tokens("Hi, Bo!") == 4  # Hi , Bo !
    assert approx_tokens("Hello, world!") == 6  # two 5-letter words: one more each
    assert approx_tokens("internationalization 12345678") == 5 + 2  # 20 letters: 1 + 4; 8 digits: 1 + 1
    assert approx_tokens("naïve") == 3  # a letter outside A-Z is a piece of its own: na ï ve


def test_tokens_are_counted_with_cl100k_offline_and_the_fallback_says_so(monkeypatch):
    assert counter_name() == "cl100k_base" and "cl100k_base" in counter_description()
    assert count_tokens("") == 0
    assert count_tokens("Hello, world!") == 4  # Hello , world !
    assert count_tokens("We set the meeting for 2025-06-16 12:00.") == 17  # digits in runs of up to three
    assert count_tokens("<|endoftext|>") > 1  # a special token's text is plain text, never refused
    monkeypatch.setattr(tokens, "_encoder", lambda: None)
    assert tokens.counter_name() == "approx-words-punct-v1" and "approximate" in tokens.counter_description()
    assert tokens.count_tokens("Hello, world!") == 6
