"""The llm path against a real llama.cpp server (``tests/support/llama_server.py``): what homer sends and how
it reads the answers. The model is tiny (SmolLM2-135M), so these assert the protocol, never the
model's skill: tools reach the prompt, the schema reaches the server and binds its output, usage is
recorded as the server reports it, a reply cut at the token limit is flagged, errors are classified,
a fatal preflight (a refused key, a server that drops the tools) writes nothing, and build, regenerate,
eval and probe each meet the server. A recording proxy between homer and the server shows both sides.
Requests whose prompt is long (the agent's 20 tools, a build's roles) go to the model's first block
alone, which reads a prompt fifty times faster; the whole model serves the short ones and the test
that needs a server slow to answer."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from backends.llm import ContextLengthError, LLMClient
from backends.llm.settings import LLMSettings
from office_env import default_registry
from orchestrator.build import build
from orchestrator.roles import BuildConfig

from tests.support.homer_cli import homer_forked, homer_here
from tests.support.llama_server import MODEL_NAME, LlamaServer, RecordingProxy, post_json

pytestmark = pytest.mark.slow

SLOW = {"timeout": 600, "max_retries": 0}  # one CPU request may take minutes: never abandon and resend it

# The first block alone says noise. A bias towards closing quotes and brackets keeps a reply held to a
# schema a few dozen tokens (what may come next is still the grammar's to say, so it fits the schema),
# and one towards the end of the turn (token 2, <|im_end|>) ends a reply that no grammar holds at once.
TERSE = {"logit_bias": [['"', 40], [']', 12], ['}', 12], [',', -10], [2, 60]]}
# and towards the object's opening and its colon: no whitespace before a key or a value
TERSE_OBJECT = {"logit_bias": [*TERSE["logit_bias"], ["{", 40], [":", 40]]}


def homer(*args: str | Path, key: str = "none") -> subprocess.CompletedProcess:
    """``homer ARGS`` in this process (``tests/support/homer_cli.py``): these tests read what a command
    sends, prints and writes, not the process it runs in (a child would spend seconds importing)."""
    proc = homer_here(*args, env={"OPENAI_API_KEY": key})
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def llm_sets(**values) -> list[str]:
    return [part for key, value in {**SLOW, **values}.items() for part in ("--llm-set", f"{key}={json.dumps(value)}")]


@pytest.fixture
def proxy(llama_server):
    with RecordingProxy(llama_server.root) as recording:
        yield recording


@pytest.fixture
def block_proxy(first_block_server):
    """A recording proxy before the first-block server: for the tests whose requests carry the agent's
    20 tools (a prompt of 1,600 tokens the whole model reads for seconds of CPU) and whose point is
    what is sent and how the answer is read, never what the model says."""
    with RecordingProxy(first_block_server.root) as recording:
        yield recording


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """One offline task of one app with the shortest history (2 days of about 4 utterances)."""
    out = tmp_path_factory.mktemp("llama") / "tiny"
    assert build(out, 1, BuildConfig(seed=5, days=2, utterances_per_day=4, app_counts=(1,)), workers=1).accepted == 1
    return out


def client(url: str, **settings) -> LLMClient:
    return LLMClient(LLMSettings(base_url=url, api_key="none", model=MODEL_NAME, **{**SLOW, **settings}))


def served_usage(proxy: RecordingProxy) -> list[dict]:
    return [e.reply["usage"] for e in proxy.chats() if e.status == 200]


def test_the_agents_tools_reach_the_prompt_and_usage_is_the_servers(first_block_server, block_proxy):
    tools = default_registry().openai_tools()
    # a short system message: the tools are what grows the prompt (the eval tests send the agent's own)
    system = [{"role": "system", "content": "You are the office assistant."}]
    with client(block_proxy.url) as llm:
        with_tools = llm.chat("agent", system, tools=tools, max_tokens=1)
        without = llm.chat("agent", system, max_tokens=1)
        totals = llm.usage.totals()
    bodies = [e.body for e in block_proxy.chats()]
    assert len(bodies[0]["tools"]) == 20 and bodies[0]["tool_choice"] == "auto" and "tools" not in bodies[1]
    # the template put every schema in the prompt, a line of compact JSON per function (what homer
    # validates, without the {"type": "function"} wrapper): the prompt grew by those lines and the
    # instructions around them, and by fewer tokens than the spaced JSON would take
    lines = [json.dumps(t["function"], separators=(",", ":"), ensure_ascii=False) for t in tools]
    templated = post_json(f"{first_block_server.root}/apply-template", {"messages": system, "tools": tools})["prompt"]
    assert all(f"\n{line}\n" in templated for line in lines)
    grew = with_tools.prompt_tokens - without.prompt_tokens
    assert first_block_server.tokens("\n".join(lines)) < grew < first_block_server.tokens(json.dumps(tools))
    served = served_usage(block_proxy)
    assert [with_tools.prompt_tokens, without.prompt_tokens] == [u["prompt_tokens"] for u in served]
    assert totals["prompt_tokens"] == sum(u["prompt_tokens"] for u in served)
    assert totals["completion_tokens"] == sum(u["completion_tokens"] for u in served) == 2


def test_the_grammar_engine_takes_the_tools_and_the_window_is_the_servers(block_proxy):
    from backends.llm.window import props_window

    registry = default_registry()
    with client(block_proxy.url) as llm:  # the first-block server: slots of 16,384 tokens
        # llama.cpp states its slot's window; it answers to any model name, so the window holds for any
        assert llm.context_window(MODEL_NAME) == 16384 and llm.context_window("another-name") == 16384
        assert props_window(llm._openai, block_proxy.url) == 16384  # /props, read when /v1/models does not say it
        # a call the reply must make: the server builds its grammar from all 20 schemas at once
        result = llm.chat("agent", [{"role": "user", "content": "List the files in the data folder."}],
                          tools=registry.openai_tools(), tool_choice="required", max_tokens=120)
    assert [e.status for e in block_proxy.chats()] == [200]  # a schema the grammar engine cannot take is HTTP 400
    assert result.tool_calls or result.finish_reason == "length"
    if result.finish_reason != "length":  # whole calls, bound by the grammar: valid as the registry checks
        assert all(registry.validate(c.name, c.arguments) == [] for c in result.tool_calls)


def test_the_servers_own_count_is_the_prompt_it_reads_and_sets_the_reply_limit(proxy):
    from backends.llm import LLMError
    from backends.llm.client import prompt_tokens

    tools = default_registry().openai_tools()[:1]
    messages = [{"role": "system", "content": "You answer in one word."}, {"role": "user", "content": "Say OK."}]
    with client(proxy.url) as llm:
        exact = llm.server_count(MODEL_NAME, messages, tools)  # /apply-template, then /tokenize
        read = llm.chat("agent", messages, tools=tools, max_tokens=1).prompt_tokens
    assert exact == read and exact != prompt_tokens(messages, tools)  # the template's tokens, not homer's guess
    # a window that leaves 600 tokens by the server's count (the estimate with its margin would leave
    # less): the request asks for exactly those; the proxy keeps it from the server (no decoding)
    proxy.clear()
    proxy.forward_if = lambda path, body: not path.endswith("/chat/completions")
    with client(proxy.url, context_window=exact + 600) as llm, pytest.raises(LLMError):
        llm.chat("agent", messages, tools=tools)
    assert [e.body["max_tokens"] for e in proxy.chats()] == [600]
    assert [e.path for e in proxy.exchanges if e.path in ("/apply-template", "/tokenize")] == \
        ["/apply-template", "/tokenize"]


def test_an_abandoned_request_is_not_sent_again_while_the_server_works_on_it(llama_server, proxy):
    """The first attempt times out (the proxy keeps the server working on it, as a server that does
    not notice the client went away would); the same request goes again only once /slots shows an
    idle slot, or, still busy at the bound, not at all."""
    from backends.llm import LLMError

    words = " ".join(f"w{i}" for i in range(100))  # about 300 tokens no other test sent: no cached prefix
    with client(proxy.url, timeout=0.1, max_retries=1) as llm:
        try:
            llm.chat("agent", [{"role": "user", "content": words}], max_tokens=1)
        except LLMError as exc:  # still busy at the bound, or the second attempt out of time too
            assert exc.timed_out and "timeout setting" in str(exc), exc
    chats = [sent for path, sent in proxy.arrivals if path.endswith("/chat/completions")]
    looks = [sent for path, sent in proxy.arrivals if path == "/slots"]
    assert 1 <= len(chats) <= 2, chats
    deadline = time.monotonic() + 300
    while len(proxy.chats()) < len(chats) and time.monotonic() < deadline:  # the server finishes what it got
        time.sleep(0.1)
    first = proxy.chats()[0]
    assert first.status == 200 and looks
    assert looks[0] < first.answered  # it looked while the server still worked on the first one
    # and sent nothing more until a look showed the server done with it (the proxy may stamp the
    # first answer a moment after the server freed its slot: that stamp is no bound)
    idle = [e.answered for e in proxy.exchanges if e.path == "/slots" and isinstance(e.reply, list) and e.reply
            and any(isinstance(slot, dict) and slot.get("is_processing") is False for slot in e.reply)]
    assert all(any(first.sent < seen <= sent for seen in idle) for sent in chats[1:]), (idle, chats, first)


def test_eval_flags_a_reply_cut_at_the_token_limit(first_block_server, block_proxy, tiny, tmp_path):
    """In RAG mode: long-context sends the same request with the whole history in it (the fake
    endpoint's tests cover both modes), which here would be seconds more of the server's CPU."""
    out = tmp_path / "run"
    proc = homer("eval", tiny, "--agent", "llm", "--mode", "rag", "--top-k", "1", "--model", MODEL_NAME,
                 "--base-url", block_proxy.url,
                 "--workers", "1", "-q", "--out", out, *llm_sets(max_tokens=4))
    assert proc.returncode == 1 and "1 truncated" in proc.stderr, proc.stderr
    row = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert row["error"].startswith("error: truncated:") and "max_tokens" in row["error"]
    assert row["trajectory"]["final_message"] is None and row["trajectory"]["stop_reason"] == "error"
    agent = [e for e in block_proxy.chats() if len(e.body.get("tools") or ()) == 20]  # not the preflight's probes
    assert len(agent) == 1 and agent[0].body["max_tokens"] == 4
    assert agent[0].reply["choices"][0]["finish_reason"] == "length"
    usage = agent[0].reply["usage"]
    assert row["trajectory"]["usage"] == {"calls": 1, "prompt_tokens": usage["prompt_tokens"],
                                          "completion_tokens": usage["completion_tokens"]}
    # the tools are in the prompt: at least their names and descriptions (the chat template writes their
    # JSON its own way, which may take fewer tokens than json.dumps does)
    described = " ".join(f"{t['function']['name']} {t['function']['description']}" for t in agent[0].body["tools"])
    assert usage["prompt_tokens"] > first_block_server.tokens(described)


def test_a_prompt_over_the_window_is_a_context_error(llama_server, proxy):
    long = [{"role": "user", "content": "word " * 10_000}]
    # the window the server states (/v1/models meta.n_ctx): refused before anything is sent
    with client(proxy.url) as llm, pytest.raises(ContextLengthError) as before:
        llm.chat("agent", long, max_tokens=1)
    assert before.value.window == 8192 and not proxy.chats()
    # a window set larger than the server's: the server's refusal is read as a context error, not a retry
    with client(proxy.url, context_window=100_000) as llm, pytest.raises(ContextLengthError) as refused:
        llm.chat("agent", long, max_tokens=1)
    assert refused.value.status == 400 and len(proxy.chats()) == 1


def test_a_refused_key_stops_build_and_eval_before_anything_is_written(tmp_path, tiny):
    with LlamaServer(tmp_path / "keyed.log", api_key="right-key") as keyed:
        out = tmp_path / "ds"
        proc = homer("build", "--backend", "llm", "--n", "1", "--out", out, "--model", MODEL_NAME,
                     "--base-url", keyed.url, "--no-cache", *llm_sets(), key="wrong-key")
        assert proc.returncode == 2 and "key was refused" in proc.stderr and "401" in proc.stderr, proc.stderr
        assert not out.exists() or not any(out.iterdir())
        run = tmp_path / "run"
        proc = homer("eval", tiny, "--agent", "llm", "--out", run, "--model", MODEL_NAME, "--base-url", keyed.url,
                     *llm_sets(), key="wrong-key")
        assert proc.returncode == 2 and "key was refused" in proc.stderr, proc.stderr
        assert not run.exists() or not any(run.iterdir())


def test_a_server_that_drops_the_tools_stops_build_and_eval_before_anything_is_written(tmp_path, tiny):
    """Served without ``--jinja``, llama.cpp reads the GGUF's own chat template and leaves ``tools``
    out of the prompt without a word: the endpoint check sees the prompt not grow with a tool and
    stops the command (exit 2) naming the fix, before a folder is filled."""
    with LlamaServer(tmp_path / "plain.log", tool_template=False) as plain, RecordingProxy(plain.root) as recording:
        out = tmp_path / "ds"
        proc = homer("build", "--backend", "llm", "--n", "1", "--out", out, "--model", MODEL_NAME,
                     "--base-url", recording.url, "--no-cache", *llm_sets())
        assert proc.returncode == 2, proc.stderr
        assert "left the tools out of the prompt" in proc.stderr and "tool-capable chat template" in proc.stderr
        assert "--jinja" in proc.stderr
        assert not out.exists() or not any(out.iterdir())
        run = tmp_path / "run"
        proc = homer("eval", tiny, "--agent", "llm", "--out", run, "--model", MODEL_NAME, "--base-url", recording.url,
                     *llm_sets())
        assert proc.returncode == 2 and "left the tools out of the prompt" in proc.stderr, proc.stderr
        assert not run.exists() or not any(run.iterdir())
    # what the check saw: the same prompt with and without a tool, as the server counted it
    probes = [e for e in recording.chats() if e.status == 200]
    with_tool = [e.reply["usage"]["prompt_tokens"] for e in probes if e.body.get("tools")]
    without = [e.reply["usage"]["prompt_tokens"] for e in probes if not e.body.get("tools")]
    assert with_tool and without and set(with_tool) == set(without)


def test_probe_asks_each_question_under_its_schema_and_keeps_the_servers_answers(block_proxy, tiny, tmp_path):
    """``homer probe`` with a model: each question goes out with its letters as a JSON Schema enum,
    the grammar keeps the reply to one of them, and every answer written is the one the server gave.
    The first-block server's noise, biased to open and close the object at once, answers in about 14
    tokens (unbiased, it spends dozens on whitespace first)."""
    out = tmp_path / "probe"
    proc = homer("probe", tiny, "--agent", "llm", "--mode", "rag", "--top-k", "1", "--per-task", "1", "--model",
                 MODEL_NAME, "--base-url", block_proxy.url, "--workers", "1", "--out", out,
                 *llm_sets(structured_output="json_schema", extra_body=TERSE_OBJECT, max_tokens=32))
    assert proc.returncode == 0, proc.stderr
    asked = [e for e in block_proxy.chats()
             if (e.body.get("response_format") or {}).get("json_schema", {}).get("name") == "probe"]
    rows = [json.loads(line) for line in (out / "probes.jsonl").read_text().splitlines()]
    # closed-book and with the history, one request each; a reply cut at the token limit (a small
    # model may spread its JSON over lines) is asked again once, under the same limit
    cut = [e for e in asked if e.reply["choices"][0]["finish_reason"] == "length"]
    assert rows and len(asked) == 2 * len(rows) + len(cut)
    assert all(asked[asked.index(e) + 1].body["max_tokens"] == e.body["max_tokens"] for e in cut)
    given = []
    for exchange in asked:
        if exchange in cut:
            continue
        letters = exchange.body["response_format"]["json_schema"]["schema"]["properties"]["answer"]["enum"]
        choice = exchange.reply["choices"][0]
        assert choice["finish_reason"] == "stop"
        answer = json.loads(choice["message"]["content"])["answer"]
        assert answer in letters
        given.append(answer)
    summary = json.loads((out / "probe.json").read_text())
    assert summary["questions"] == len(rows) == 1 and summary["tasks"] == 1 and not summary["errors"]
    assert sorted(given) == sorted(a for row in rows for a in (row["closed_book"], row["with_history"]))


def test_a_model_name_the_server_does_not_list_is_refused_unless_allowed(proxy, tiny, tmp_path):
    """llama.cpp answers any model name with its one model: the endpoint check refuses a name it does
    not list, in one line naming the listed ones, before anything is written; allowed by
    ``allow_unlisted_model``, the run goes on with a warning. The agent's own request is kept from
    the server (decoding with 20 tools is minutes of CPU): this test reads the check, not the run."""
    def not_the_agent(path: str, body: bytes | None) -> bool:
        return not (path.endswith("/chat/completions") and len(json.loads(body or b"{}").get("tools") or ()) > 1)

    proxy.forward_if = not_the_agent
    refused = homer("eval", tiny, "--agent", "llm", "--model", "nope", "--base-url", proxy.url, "--workers", "1",
                    "-q", "--out", tmp_path / "refused", *llm_sets())
    assert refused.returncode == 2 and not (tmp_path / "refused").exists()
    assert "model 'nope' is not among the models the server lists (smollm2); choose one of those" in refused.stderr
    proc = homer("eval", tiny, "--agent", "llm", "--model", "nope", "--base-url", proxy.url, "--workers", "1", "-q",
                 "--out", tmp_path / "run", *llm_sets(allow_unlisted_model=True))
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert any("model 'nope' is not among the models the server lists (smollm2) but was answered" in line
               for line in warnings), proc.stderr
    answered = [e for e in proxy.chats() if e.status == 200]  # the check's one-token requests
    assert answered and {e.body["model"] for e in answered} == {"nope"}
    assert {e.reply["model"] for e in answered} <= {"nope", MODEL_NAME}


# what ends an attempt at the protocol (the server or the reply), not at a quality gate
PROTOCOL_WORDS = ("no valid JSON", "no valid notes", "cut off", "token limit", "HTTP", "timed out", "unreachable",
                  "refused", "crashed", "context window")


def first_attempt(proxy: RecordingProxy, out: Path, *args: str) -> dict:
    """``homer build --backend llm ARGS`` until its first attempt has an outcome (then ^C): that outcome.
    A child forked from this process (``homer_forked``): a build to interrupt, without a second of
    imports each."""
    proc = homer_forked(
        "build", "--backend", "llm", "--n", "1", "--seed", "3", "--workers", "1", "--days", "2",
        "--utterances", "6", "--apps", "1", "--max-rounds", "1", "--out", out, "--model", MODEL_NAME,
        "--base-url", proxy.url, "--no-cache", "-q", *args,
        *llm_sets(structured_output="json_schema", extra_body=TERSE, max_tokens=4096),
        env={"OPENAI_API_KEY": "none"})
    progress = out / ".progress.jsonl"  # an attempt's outcome, as it comes
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None and not (
                progress.is_file() and progress.read_text().strip()):
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    assert "Traceback" not in stderr, stderr
    return json.loads(progress.read_text().splitlines()[0])


def role_replies(proxy: RecordingProxy) -> dict[str, list]:
    """The server's answered chats by role (the name of the schema they were held to)."""
    by_role: dict[str, list] = {}
    for exchange in proxy.chats():
        name = (exchange.body.get("response_format") or {}).get("json_schema", {}).get("name")
        if exchange.status == 200 and name not in (None, "ping"):  # ping: the run's check of the server
            by_role.setdefault(name, []).append(exchange)
    return by_role


def assert_whole_and_valid(replies: dict[str, dict[str, list]]) -> None:
    """Every reply was whole (never cut) and is valid against the schema it was asked under."""
    for by_role in replies.values():
        for role, exchanges in by_role.items():
            for exchange in exchanges:
                choice = exchange.reply["choices"][0]
                assert choice["finish_reason"] == "stop", (role, choice)
                schema = exchange.body["response_format"]["json_schema"]["schema"]
                assert not list(Draft202012Validator(schema).iter_errors(json.loads(choice["message"]["content"])))


def test_a_build_sends_every_role_to_the_real_server_and_ends_at_a_quality_gate(first_block_server, tmp_path):
    """Every role of a Neo build, planner to verifier, asks the real server under its schema, each
    reply parses, and each attempt ends at a quality gate. The model's noise drafts no task a check
    could hold and writes no dialogue the verifier's rules pass, so two more builds keep the roles
    before the one under test offline (``offline_roles``): one sends the dialogue of a real draft
    to the server, one the review of a real dialogue."""
    offline = ["planner", "surfer", "task_generator"]
    outcomes, replies = {}, {}
    for name, roles in (("whole", []), ("dialogue", offline), ("review", [*offline, "dialogue_day"])):
        with RecordingProxy(first_block_server.root) as proxy:  # one each: a stopped build's last request is its own
            sets = ["--llm-set", f"offline_roles={json.dumps(roles)}"] if roles else []
            outcomes[name] = first_attempt(proxy, tmp_path / name, *sets)
            replies[name] = role_replies(proxy)
    assert set(replies["whole"]) >= {"planner", "surfer", "task_generator"}
    planner = replies["whole"]["planner"][0].body["response_format"]["json_schema"]["schema"]
    assert planner["properties"]["apps"]["minItems"] == planner["properties"]["apps"]["maxItems"] == 1  # --apps 1
    assert set(replies["dialogue"]) == {"dialogue_day"} and set(replies["review"]) == {"verifier"}
    assert_whole_and_valid(replies)
    for name, outcome in outcomes.items():
        assert outcome["status"] == "dropped", outcome
        assert not any(word in outcome["reason"] for word in PROTOCOL_WORDS), outcome
        assert set(outcome["tokens"]) == {role for role in replies[name]}  # usage counts what was asked
    assert outcomes["dialogue"]["reason"].startswith("verifier: rejected 1 rounds")  # by its rules: --max-rounds 1


def role_schemas() -> dict[str, dict]:
    """Every JSON Schema a role sends as ``response_format`` (the planner's and the probe's as one
    request makes them)."""
    from generators.families import FAMILIES
    from generators.dialogue_llm import DAYS_PER_CALL
    from generators.schemas import PLUS_SCHEMA, dialogue_days_schema, task_draft_schema
    from harness.probe_run import schema_for
    from harness.probes import Probe
    from harness.summaries import SUMMARY_SCHEMA
    from orchestrator.planner import plan_schema
    from surfers import notes_schema
    from verifier.schemas import JUDGE_VOTE_SCHEMA, VERDICT_SCHEMA

    probe = Probe(task="t", piece="p", dynamic="d", question="q", options=("a", "b", "c"), answer="A",
                  answerable=True)
    return {"planner": plan_schema(2, sorted(FAMILIES)), "task_generator": task_draft_schema(),
            "plus_generator": PLUS_SCHEMA, "dialogue_day": dialogue_days_schema(DAYS_PER_CALL), "verifier": VERDICT_SCHEMA,
            "judge": JUDGE_VOTE_SCHEMA, "summarizer": SUMMARY_SCHEMA, "probe": schema_for(probe),
            "surfer": notes_schema()}


def test_every_roles_schema_is_accepted_by_the_servers_grammar_engine(proxy):
    from backends.llm.client import response_format_for

    import urllib.error
    import urllib.request

    for role, schema in role_schemas().items():  # one request a role: acceptance is decided before decoding
        body = {"model": MODEL_NAME, "messages": [{"role": "user", "content": "JSON:"}], "max_tokens": 1,
                "response_format": response_format_for("json_schema", role, schema)}
        request = urllib.request.Request(f"{proxy.url}/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=300) as reply:
                reply.read()
        except urllib.error.HTTPError as refused:
            refused.read()
    sent = {e.body["response_format"]["json_schema"]["name"]: e.status for e in proxy.chats()}
    assert sent == dict.fromkeys(role_schemas(), 200)  # a schema the grammar engine cannot take is HTTP 400


def one_seed(tmp_path: Path) -> Path:
    seeds = tmp_path / "seeds" / "tasks"
    shutil.copytree(Path(__file__).resolve().parents[2] / "datasets" / "officebench-sample" / "tasks" / "1-2",
                    seeds / "1-2")
    return seeds


def test_a_regeneration_sends_both_roles_to_the_real_server_and_ends_at_a_quality_gate(first_block_server,
                                                                                        tmp_path):
    """A Plus regeneration's generator and verifier each ask the real server under their schema; the
    model's rewrite fails the verifier's rules, so a second run keeps the rewriting offline to send
    the review of a real one to the server."""
    seeds = one_seed(tmp_path)
    outcomes, replies = {}, {}
    for name, roles in (("whole", []), ("review", ["plus_generator"])):
        with RecordingProxy(first_block_server.root) as proxy:
            sets = ["--llm-set", f"offline_roles={json.dumps(roles)}"] if roles else []
            homer("regenerate", "--seeds", seeds.parent, "--backend", "llm", "--model", MODEL_NAME, "--base-url",
                  proxy.url, "--days", "2", "--utterances", "4", "--workers", "1", "--max-rounds", "1", "--no-cache",
                  "-q", "--out", tmp_path / name, *sets,
                  *llm_sets(structured_output="json_schema", extra_body=TERSE, max_tokens=4096))
            outcomes[name] = json.loads((tmp_path / name / "attempts.jsonl").read_text().splitlines()[0])
            replies[name] = role_replies(proxy)
    assert set(replies["whole"]) == {"plus_generator"} and set(replies["review"]) == {"verifier"}
    assert_whole_and_valid(replies)
    whole, review = outcomes["whole"], outcomes["review"]
    assert whole["status"] == "dropped" and not any(w in whole["reason"] for w in PROTOCOL_WORDS), whole
    # the model's verdict: a rejection, or a pass the gates then judge
    assert review["status"] in ("dropped", "accepted") and not any(w in review.get("reason", "") for w in
                                                                   PROTOCOL_WORDS), review
    assert set(review["tokens"]) == {"verifier"}


def test_an_eval_step_gets_the_servers_answer_and_scores_it(first_block_server, tiny, tmp_path):
    """One agent step of ``eval --agent llm``: the server's reply (an empty answer, by the bias) ends
    the trajectory and is scored as an answer, not taken for an error."""
    with RecordingProxy(first_block_server.root) as proxy:
        homer("eval", tiny, "--agent", "llm", "--mode", "rag", "--top-k", "1", "--model", MODEL_NAME,
              "--base-url", proxy.url, "--workers", "1", "-q", "--out", tmp_path / "run",
              *llm_sets(extra_body=TERSE, max_tokens=64))
        agent = [e for e in proxy.chats() if len(e.body.get("tools") or ()) == 20]  # not the preflight's probes
    row = json.loads((tmp_path / "run" / "results.jsonl").read_text().splitlines()[0])
    assert row["error"] is None and row["passed"] is False, row
    assert agent and all(e.reply["choices"][0]["finish_reason"] == "stop" for e in agent)
    assert row["trajectory"]["usage"]["calls"] == len(agent)


def test_regenerating_a_seed_sends_its_schema_and_drops_cut_replies_with_their_usage(first_block_server, tmp_path):
    seeds = one_seed(tmp_path)
    out = tmp_path / "plus"
    with RecordingProxy(first_block_server.root) as proxy:
        proc = homer("regenerate", "--seeds", seeds.parent, "--backend", "llm", "--model", MODEL_NAME,
                     "--base-url", proxy.url, "--days", "2", "--utterances", "4", "--workers", "1", "--no-cache",
                     "-q", "--out", out, *llm_sets(structured_output="json_schema", max_tokens=8))
    assert proc.returncode == 1 and "no task was written" in proc.stderr, proc.stderr
    formats = [(e, e.body.get("response_format")) for e in proxy.chats()]
    pings = [e for e, shape in formats if shape and shape["json_schema"]["name"] == "ping"]
    assert len(pings) == 1 and pings[0].status == 200  # the endpoint check's probe of the response format
    chats = [e for e, shape in formats if shape and e not in pings]  # not the check's one-token requests
    assert {(e.status, e.body["response_format"]["json_schema"]["name"], e.reply["choices"][0]["finish_reason"])
            for e in chats} == {(200, "plus_generator", "length")}
    assert [e.body["max_tokens"] for e in chats] == [8, 8, 8]  # repaired twice, never with a higher limit
    outcome = json.loads((out / "attempts.jsonl").read_text().splitlines()[0])
    assert outcome["status"] == "dropped" and "cut off at the token limit" in outcome["reason"]
    spent = json.loads((out / "build.json").read_text())["usage_not_kept"]["plus_generator"]
    served = [e.reply["usage"] for e in chats]
    assert spent["calls"] == 3 and spent["prompt_tokens"] == sum(u["prompt_tokens"] for u in served)
    assert spent["completion_tokens"] == sum(u["completion_tokens"] for u in served) == 3 * 8  # each cut at 8
