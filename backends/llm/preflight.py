"""The endpoint check before a run: one line saying what is wrong, in seconds, before anything is
written.

It proves each route the run will use, shaped as the run will send it:

- ``GET /models`` (the models served, and the context windows some servers state, completed by
  llama.cpp's ``/props``: see :mod:`backends.llm.window`); a 404 there
  and on the chat route of a base URL without ``/v1`` says to add ``/v1``;
- ``chat``: a one-token request per model with the run's temperature and token parameter, so a
  wrong key (servers that list models without one), a model not served and a refused parameter
  (``Unsupported parameter 'temperature'``) all show here, with the setting that fixes them; a
  model answered but not listed (llama.cpp answers any name with its one model) is refused unless
  ``allow_unlisted_model`` is set;
- ``response_format``: for runs whose structured replies ask for one (``structured_output``), the
  same request held to a one-field schema (strict where the run's would be), so a server that
  refuses ``json_schema`` or strict mode says so before the run;
- ``tools``: the same request with one small tool, for runs whose roles call tools; a server that
  reads no more prompt tokens with the tool than without left it out (llama.cpp without a
  tool-capable chat template does so silently);
- ``embeddings``: one short input to the embedding model, for RAG ranked by embeddings.

A local server that is still starting (connection refused) is asked again for up to ``wait``
seconds (the ``start_wait`` setting, 10 by default), so ``homer fake-llm &`` followed at once by a
run does not race. Every request is bounded in total by what is left of ``seconds`` (see :mod:`backends.llm.transport`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, cast
from urllib.parse import urlsplit

import openai

from backends.llm.server_tokens import dialect_of
from backends.llm.strict_json import JSONLimitError, loads_limited
from backends.llm.window import stated_windows

PREFLIGHT_SECONDS = 10.0
RETRY_PAUSE = 0.2
ROUTES = ("chat", "tools", "embeddings")
PING_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
               "additionalProperties": False}
PING_TOOL = {"type": "function", "function": {"name": "ping", "description": "Answer a ping.",
                                              "parameters": {"type": "object", "properties": {}}}}



class Refused(Exception):
    """What the check found wrong, as one line (the client raises it as a ``PreflightError``)."""


def check(client: Any, models: Iterable[str] | None = None, seconds: float = PREFLIGHT_SECONDS,
          routes: Iterable[str] = ("chat",), embedding_model: str | None = None,
          wait: float | None = None, notes: list[str] | None = None) -> tuple[dict[str, int], str | None]:
    """Run the check; the context windows ``/models`` states, by model, and the server's tokenizer
    route (:func:`backends.llm.server_tokens.dialect_of`). Raises :class:`Refused`. What passes but
    looks wrong is added to ``notes`` as one line each."""
    settings = client.settings
    routes = tuple(routes)
    unknown = sorted(set(routes) - set(ROUTES))
    if unknown:
        raise ValueError(f"unknown route(s) {', '.join(unknown)}: expected {', '.join(ROUTES)}")
    wanted = sorted(set(models) if models is not None else {settings.model, *settings.role_models.values()})
    wait = (settings.start_wait if settings.is_local else 0.0) if wait is None else wait
    probe = _Probe(client, time.monotonic() + seconds, seconds)
    listed, windows, missing, dialect = probe.models(wait)
    if settings.is_local and settings.timeout > seconds:
        # a local server on a CPU may take its whole timeout to start on a prompt (its slots busy with
        # other clients): the requests below get that long, as the run's own would
        probe.seconds, probe.deadline = settings.timeout, time.monotonic() + settings.timeout
        probe.patient = True
    if "chat" in routes or "tools" in routes:
        for model in wanted:
            probe.chat(model, listed, missing, tools="tools" in routes and model == wanted[0])
            if listed and model not in listed:
                listed = probe.models(0.0)[0] or listed  # a server that lists what it has served lists it now
            if listed and model not in listed:
                # llama.cpp serves its one model under any name: a typo'd name would run another model
                names = ", ".join(sorted(listed)[:12])
                if not settings.allow_unlisted_model:
                    raise Refused(f"{probe.where}: model {model!r} is not among the models the server lists "
                                  f"({names}); choose one of those with --model, or --llm-set "
                                  "allow_unlisted_model=true if this server serves it under another name")
                if notes is not None:
                    notes.append(f"{probe.where}: model {model!r} is not among the models the server lists "
                                 f"({names}) but was answered (allow_unlisted_model): the server may serve "
                                 "another model under that name")
    if "embeddings" in routes:
        probe.embeddings(embedding_model or settings.embedding_model)
    return windows, dialect


class _Probe:
    def __init__(self, client: Any, deadline: float, seconds: float) -> None:
        self.client, self.deadline, self.seconds = client, deadline, seconds
        self.where = client.settings.endpoint
        self.patient = False  # True once the budget is the timeout setting (a local server)

    def api(self) -> openai.OpenAI:
        left = self.deadline - time.monotonic()
        if left <= 0.05:
            raise Refused(f"{self.where}: no answer within {self.seconds:g} s (is the server up and reachable?)")
        return self.client._openai.with_options(max_retries=0, timeout=left)

    def models(self, wait: float) -> tuple[set[str], dict[str, int], bool, str | None]:
        """The models ``/models`` lists, the windows it states, whether it answered 404, and the
        server's tokenizer route."""
        give_up = time.monotonic() + wait
        while True:
            try:
                data = loads_limited(self.api().models.with_raw_response.list().content)
                break
            except openai.APIConnectionError as exc:
                if isinstance(exc, openai.APITimeoutError):
                    raise Refused(f"{self.where}: no answer within {self.seconds:g} s (is the server up and "
                                  f"reachable?)") from None
                if time.monotonic() + RETRY_PAUSE < give_up:
                    time.sleep(RETRY_PAUSE)  # a local server still starting: ask again, with a whole budget
                    self.deadline = time.monotonic() + self.seconds
                    continue
                cause = exc.__cause__ or exc
                waited = f" after {wait:g} s of retries" if wait else ""
                raise Refused(f"{self.where}: cannot connect ({cause.__class__.__name__}: {str(cause)[:200]})"
                              f"{waited}; is the server running at this address?") from None
            except openai.APIStatusError as exc:
                if exc.status_code in (401, 403):
                    raise Refused(refused_key(self.where, exc)) from None
                return set(), {}, exc.status_code == 404, None  # a server without /models: the chat probe tells
            except (openai.OpenAIError, JSONLimitError):
                return set(), {}, False, None
        rows = data.get("data") if isinstance(data, dict) else None
        listed = {r["id"] for r in rows if isinstance(r, dict) and isinstance(r.get("id"), str)} \
            if isinstance(rows, list) else set()
        return listed, stated_windows(self.api(), self.where, data), False, dialect_of(data)

    def chat(self, model: str, listed: set[str], missing: bool, tools: bool) -> None:
        """One token from ``model``, shaped as the run will ask (and with a tool when ``tools``)."""
        settings = self.client.settings
        request: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "Say OK."}],
                                   settings.token_parameter_for(model): 16 if settings.is_reasoning(model) else 1}
        temperature = settings.temperature_for(model)
        if temperature is not None:
            request["temperature"] = temperature
        plain = self._ask(model, listed, missing, "a one-token request", request)
        mode = settings.structured_output_for(model)
        if mode != "none":  # the run's structured replies ask for this: a server that refuses it says so now
            shape = {"type": "json_object"} if mode == "json_object" else {
                "type": "json_schema", "json_schema": {"name": "ping", "schema": PING_SCHEMA,
                                                       "strict": settings.strict_schema_for(model)}}
            self._ask(model, listed, missing, f"a one-token request with a {mode} response format",
                      {**request, "messages": [{"role": "user", "content": 'Reply with {"ok": true}.'}],
                       "response_format": shape})
        if tools:
            parallel = settings.parallel_tool_calls_for(model)
            shaped = {"tools": [PING_TOOL], "tool_choice": "auto",
                      **({"parallel_tool_calls": parallel} if parallel is not None else {})}
            with_tool = self._ask(model, listed, missing, "a one-token request with a tool", {**request, **shaped})
            if plain and with_tool and with_tool <= plain:
                raise Refused(f"{self.where}: the server left the tools out of the prompt ({with_tool} prompt "
                              f"tokens with a tool, {plain} without): the run's tool calls would never happen; "
                              f"serve the model with a tool-capable chat template (llama.cpp: --jinja)")

    def _ask(self, model: str, listed: set[str], missing: bool, what: str, request: dict[str, Any]) -> int:
        """Send ``request``; the prompt tokens the server says it read (0 when it does not say)."""
        try:
            extra = self.client.settings.extra_body_for(model)  # a server that refuses its own fields says so now
            raw = self.api().chat.completions.with_raw_response.create(
                **request, **({"extra_body": extra} if extra else {})).content
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code == 429:
                if model in listed:
                    return 0  # the server is busy or failing now: the run's own retries and breaker see to it
                raise Refused(f"{self.where}: HTTP {exc.status_code} to {what} for {model!r}: "
                              f"{error_text(exc)[:200]}") from None
            raise Refused(self._refusal(model, listed, missing, what, exc)) from None
        except openai.APITimeoutError:
            budget = "the timeout setting" if self.patient else "the check's budget"
            advice = f"; a slow local server: raise {'it' if self.patient else 'the timeout setting'}, e.g. " \
                "--llm-set timeout=600" if self.client.settings.is_local else ""
            raise Refused(f"{self.where}: {what} for {model!r} got no answer within {self.seconds:g} s "
                          f"({budget}{advice})") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise Refused(f"{self.where}: cannot connect ({cause.__class__.__name__}: {str(cause)[:200]})") from None
        except openai.OpenAIError as exc:
            raise Refused(f"{self.where}: {what} for {model!r}: {exc}") from None
        return _prompt_tokens(raw)

    def _refusal(self, model: str, listed: set[str], missing: bool, what: str, exc: openai.APIStatusError) -> str:
        status, text = exc.status_code, error_text(exc)
        if status in (401, 403):
            return refused_key(self.where, exc)
        path = urlsplit(self.where).path.rstrip("/")
        if status == 404 and missing and not path.endswith("/v1"):
            return (f"{self.where}: HTTP 404 for /models and for chat: the base URL probably lacks /v1; try "
                    f"--base-url {self.where}/v1")
        known = f"; the server lists: {', '.join(sorted(listed)[:12])}" if listed else ""
        if status == 404 or (model not in listed and _about_model(text)):
            return f"{self.where}: model {model!r} is not served (HTTP {status}: {text[:200]}){known}"
        return f"{self.where}: {what} for {model!r} was refused (HTTP {status}: {text[:200]}){fix_for(text, model)}"

    def embeddings(self, model: str) -> None:
        try:
            self.api().embeddings.with_raw_response.create(model=model, input=["ping"], encoding_format="float")
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise Refused(refused_key(self.where, exc)) from None
            if exc.status_code < 500 and exc.status_code != 429:
                raise Refused(f"{self.where}: the embeddings route refused model {model!r} (HTTP {exc.status_code}: "
                              f"{error_text(exc)[:200]}); RAG with --embeddings needs an embedding model this "
                              f"server serves (or leave --embeddings out for BM25)") from None
        except openai.APITimeoutError:
            raise Refused(f"{self.where}: an embeddings request for {model!r} got no answer within "
                          f"{self.seconds:g} s") from None
        except openai.OpenAIError as exc:
            raise Refused(f"{self.where}: an embeddings request for {model!r}: {exc}") from None


def _prompt_tokens(raw: bytes) -> int:
    try:
        usage = loads_limited(raw).get("usage")
        tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    except (JSONLimitError, AttributeError):
        return 0
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0 else 0


def _about_model(text: str) -> bool:
    lowered = text.lower()
    return "model" in lowered and any(w in lowered for w in ("not found", "does not exist", "unknown", "not served",
                                                              "no such", "invalid model"))


def fix_for(text: str, model: str) -> str:
    """The setting that fixes a refused parameter, as advice ('' when the message names none)."""
    lowered = text.lower()
    if "temperature" in lowered:
        return (f"; send no temperature: --llm-set temperature=null, or in the --llm-config file "
                f"models.\"{model}\".reasoning = true")
    if "max_tokens" in lowered and "max_completion_tokens" in lowered:
        return f"; set models.\"{model}\".token_parameter = \"max_completion_tokens\" in the --llm-config file"
    if "parallel_tool_calls" in lowered:
        return f"; send none: models.\"{model}\".parallel_tool_calls = null in the --llm-config file"
    if "tool" in lowered:
        return "; this server or model does not take tools (llama.cpp: start it with --jinja)"
    if "strict" in lowered and ("response_format" in lowered or "json_schema" in lowered or "schema" in lowered):
        return "; --llm-set strict_schema=false (the schema is then sent as it is, not strict)"
    if "response_format" in lowered or "json_schema" in lowered:
        return "; --llm-set structured_output=json_object (or none)"
    return ""


def refused_key(where: str, exc: openai.APIStatusError) -> str:
    return (f"{where}: the key was refused (HTTP {exc.status_code}: {error_text(exc)[:200]}); set OPENAI_API_KEY "
            "in the environment or api_key in the --llm-config file")


def error_text(exc: openai.APIStatusError) -> str:
    """The server's own message in an error reply (``error.message``), else the client's."""
    body = exc.body
    if isinstance(body, dict):
        inner = cast("dict[str, Any]", body.get("error")) if isinstance(body.get("error"), dict) else body
        if isinstance(inner.get("message"), str):
            return inner["message"]
    return exc.message


__all__ = ["PREFLIGHT_SECONDS", "ROUTES", "Refused", "check", "error_text", "fix_for", "refused_key"]
