"""Configuration of the llm backend: endpoint, key, models per role, limits, cache, prices.

Sources, later wins: the dataclass defaults < a JSON or TOML config file < the environment
(``OPENAI_API_KEY``, ``OPENAI_BASE_URL``) < explicit overrides (CLI flags; ``None`` means "not
given"). A config file holds the field names below at its top level (or under one ``[llm]``
table); ``cache_path`` in a file is relative to the file's folder. Prices are USD per 1K tokens,
``{model: [prompt, completion]}``.

Request shaping, because servers differ in what they accept:

- ``temperature`` (a number, or null -- ``"none"`` in TOML -- for none sent);
- ``max_tokens``: a number for every role, or ``{role: number, "default": number}``; sent as
  ``max_tokens``, or as ``max_completion_tokens`` to models that need it;
- ``structured_output``: ``json_schema`` (the role's schema goes in ``response_format``, for servers
  that constrain decoding to it: OpenAI, vLLM, llama.cpp, Ollama), ``json_object`` or ``none``;
- ``context_window``: tokens a prompt and its reply may take together; unset, it is read from the
  server's ``/v1/models`` when the server says it (vLLM's ``max_model_len``, ...);
- ``timeout``: seconds an attempt gets for each 4,096 tokens of its prompt and reply limit, and at
  least this (see :mod:`backends.llm.patience`);
- ``start_wait``: seconds a local server that refuses connections is asked again before a run
  starts (one still loading its model); 10 by default, 0 to fail at once;
- ``rpm`` / ``tpm``: the endpoint's requests and tokens per minute, kept to by a shared limiter
  (``backends.llm.rate_limit``) whose concurrency also adapts to 429s and timeouts;
- ``extra_body``: fields a server reads beyond OpenAI's (llama.cpp's ``top_k`` or ``logit_bias``,
  vLLM's ``chat_template_kwargs``), sent in every request; never one the client sets itself;
- ``offline_roles``: roles the offline backend answers while the model answers the others
  (``["planner", "surfer", "task_generator"]``: the model writes and reviews the dialogue of
  procedural tasks; ``["plus_generator"]``: it reviews procedural regenerations);
- ``models``: the same keys per model name (``temperature``, ``max_tokens``, ``token_parameter``,
  ``structured_output``, ``context_window``, ``reasoning``, ``extra_body``), overriding the ones above.

OpenAI's reasoning models (``o1``, ``o3``, ``o4``, ``gpt-5`` and their variants, or any model with
``reasoning = true``) refuse ``temperature`` and ``max_tokens``: for them temperature is not sent
unless the model's own entry sets it, and the limit goes as ``max_completion_tokens``.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

OPENAI_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
PLACEHOLDER_KEY = "sk-local-no-key"  # sent to local endpoints that need no key
DEFAULT_MAX_TOKENS = 4096
REASONING_MAX_TOKENS = 16384  # a reasoning model spends part of its budget before it answers
STRUCTURED_OUTPUTS = ("json_schema", "json_object", "none")
TOKEN_PARAMETERS = ("max_tokens", "max_completion_tokens")
MODEL_KEYS = ("temperature", "max_tokens", "token_parameter", "structured_output", "context_window", "reasoning",
              "parallel_tool_calls", "strict_schema", "extra_body")
# what the client itself puts in a request: an extra_body may not say them again
CLIENT_FIELDS = frozenset({"model", "messages", "tools", "tool_choice", "parallel_tool_calls", "response_format",
                           "temperature", "max_tokens", "max_completion_tokens", "stream", "n"})
EXTRA_BODY_MAX_BYTES = 16_384
# the roles of a Neo build and of a Plus regeneration, by the names usage tables give them:
# offline_roles picks among these
BUILD_ROLES = ("planner", "surfer", "task_generator", "dialogue_day", "verifier", "plus_generator")
STRICT_HOSTS = ("api.openai.com", ".openai.azure.com")  # where a json_schema is enforced only when strict
NOT_SETTABLE = {"api_key": "give the key in OPENAI_API_KEY or the --llm-config file, never on the command line "
                           "(it would be written into the run's files)",
                "cache_path": "use --cache / --no-cache"}
_STRING_KEYS = ("base_url", "api_key", "model", "embedding_model", "structured_output")
_REASONING_RE = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)(?:$|[-.:])")


ENV_SETTINGS = {"OPENAI_API_KEY": "api_key", "OPENAI_BASE_URL": "base_url", "HOMER_MODEL": "model"}
ENV_FILE = ".env"
MAX_ENV_FILE_BYTES = 64 * 1024


def environment() -> dict[str, str]:
    """The variables the settings read (``ENV_SETTINGS``): the process's own, else those of a
    ``.env`` file in the working folder (``KEY=VALUE`` lines, as python-dotenv reads them; a
    regular file of at most 64 KiB, never a link: a stranger's folder may hold one). A variable
    set in the process wins over the file."""
    values = {name: os.environ[name] for name in ENV_SETTINGS if os.environ.get(name)}
    if len(values) == len(ENV_SETTINGS) or not os.path.lexists(ENV_FILE):
        return values
    from dotenv import dotenv_values

    from office_env.untrusted import UntrustedInputError, read_file

    try:
        text = read_file(ENV_FILE, max_bytes=MAX_ENV_FILE_BYTES).decode("utf-8")
    except (UntrustedInputError, UnicodeDecodeError) as exc:
        raise LLMConfigError(f"{exc}; remove it, or set the variables in the environment") from None
    from_file = dotenv_values(stream=io.StringIO(text))
    return {**{name: value for name, value in from_file.items() if name in ENV_SETTINGS and value}, **values}


MAX_SECONDS = 86_400  # a day: the longest timeout or wait a setting takes
MAX_RETRIES = 50
MAX_CONCURRENCY = 1_024  # requests in flight at once, per endpoint and model
MAX_TOKENS = 10_000_000  # the largest reply limit or context window a setting takes


def _whole(value: Any, low: int, high: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and low <= value <= high


def _seconds(value: Any) -> bool:
    """A finite number of seconds from 0 to ``MAX_SECONDS`` (NaN and infinity are not)."""
    return (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
            and 0 <= value <= MAX_SECONDS)


class LLMConfigError(ValueError):
    """The llm backend's configuration is unusable; the message says what to set, and where."""


@dataclass
class LLMSettings:
    base_url: str | None = None
    api_key: str | None = None
    model: str = "gpt-4o-mini"
    role_models: dict[str, str] = field(default_factory=dict)
    timeout: float = 60
    start_wait: float = 10.0  # seconds a local endpoint that refuses connections is waited for at the start
    max_retries: int = 4
    max_concurrency: int = 4
    rpm: int | None = None   # requests per minute the endpoint allows (None: no budget kept)
    tpm: int | None = None   # tokens per minute
    cache_path: Path | None = None
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    embedding_model: str = "text-embedding-3-small"
    temperature: float | None = 0.0
    max_tokens: dict[str, int] = field(default_factory=dict)
    structured_output: str = "none"
    context_window: int | None = None
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    allow_unlisted_model: bool = False  # run a model the server answers but does not list (llama.cpp: any name)
    strict_schema: bool | None = None  # json_schema sent strict (None: on OpenAI's and Azure's endpoints)
    extra_body: dict[str, Any] = field(default_factory=dict)  # server-specific request fields (top_k, logit_bias...)
    offline_roles: tuple[str, ...] = ()  # build roles the offline backend answers instead of the model

    # -- request shaping ---------------------------------------------------------------------

    def _model_option(self, model: str, key: str) -> tuple[bool, Any]:
        options = self.models.get(model, {})
        return (key in options, options.get(key))

    def is_reasoning(self, model: str) -> bool:
        given, value = self._model_option(model, "reasoning")
        return bool(value) if given else _REASONING_RE.match(model) is not None

    def temperature_for(self, model: str) -> float | None:
        """The temperature to send to ``model``; None: send none."""
        given, value = self._model_option(model, "temperature")
        if given:
            return value
        return None if self.is_reasoning(model) else self.temperature

    def max_tokens_for(self, role: str, model: str) -> int:
        given, value = self._model_option(model, "max_tokens")
        table = value if given and isinstance(value, dict) else ({"default": value} if given else {})
        for source in (table, self.max_tokens):
            if role in source:
                return source[role]
            if "default" in source:
                return source["default"]
        return REASONING_MAX_TOKENS if self.is_reasoning(model) else DEFAULT_MAX_TOKENS

    def token_parameter_for(self, model: str) -> str:
        given, value = self._model_option(model, "token_parameter")
        if given:
            return value
        return "max_completion_tokens" if self.is_reasoning(model) else "max_tokens"

    def parallel_tool_calls_for(self, model: str) -> bool | None:
        """``parallel_tool_calls`` to send with tools to ``model`` (None: send none). Sent as true
        by default, so a model may call several tools in one reply (the harness runs them in order);
        reasoning models, some of which refuse the parameter, get none unless configured."""
        given, value = self._model_option(model, "parallel_tool_calls")
        if given:
            return value
        return None if self.is_reasoning(model) else True

    def strict_schema_for(self, model: str) -> bool:
        """Whether a ``json_schema`` response format goes to ``model`` in its strict form, with
        ``strict: true``: by default on OpenAI's and Azure's endpoints, which enforce a schema only
        so; servers that decode to any schema by grammar get the role's schema as it is (its strict
        form would have them write every optional field as null)."""
        given, value = self._model_option(model, "strict_schema")
        value = value if given else self.strict_schema
        if value is not None:
            return bool(value)
        host = (urlsplit(self.endpoint).hostname or "").lower()
        return any(host == h or (h.startswith(".") and host.endswith(h)) for h in STRICT_HOSTS)

    def extra_body_for(self, model: str) -> dict[str, Any]:
        """Fields sent in every request to ``model`` beside the ones the client sets: a server's own
        knobs (llama.cpp's ``top_k`` or ``logit_bias``, vLLM's ``chat_template_kwargs``); the model's
        own table replaces the global one."""
        given, value = self._model_option(model, "extra_body")
        return value if given else self.extra_body

    def structured_output_for(self, model: str) -> str:
        given, value = self._model_option(model, "structured_output")
        return value if given else self.structured_output

    def context_window_for(self, model: str) -> int | None:
        """The configured context window of ``model`` (None: not configured)."""
        given, value = self._model_option(model, "context_window")
        return value if given else self.context_window

    def model_for(self, role: str) -> str:
        """The model for ``role``: its entry in ``role_models``, else ``model``."""
        return self.role_models.get(role, self.model)

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (OpenAI's own when none is configured), without a trailing /."""
        return (self.base_url or OPENAI_URL).rstrip("/")

    @property
    def is_local(self) -> bool:
        """True for an endpoint on this machine (no key needed)."""
        return (urlsplit(self.endpoint).hostname or "") in LOCAL_HOSTS

    def validate(self, source: str = "settings") -> "LLMSettings":
        """Check types and ranges and that a non-local endpoint has a key; returns self."""
        if self.base_url is not None and not isinstance(self.base_url, str):
            raise LLMConfigError(f"{source}: base_url must be a string (got {self.base_url!r})")
        url = urlsplit(self.endpoint)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise LLMConfigError(f"{source}: base_url {self.base_url!r} must be an http:// or https:// URL "
                                 f"(e.g. http://127.0.0.1:8000/v1)")
        if not self.api_key and not self.is_local:
            raise LLMConfigError(
                f"no API key for {self.endpoint}: set OPENAI_API_KEY in the environment (or api_key in the "
                f"--llm-config file); a key is optional only for a local base URL (127.0.0.1, localhost)")
        if not isinstance(self.model, str) or not self.model:
            raise LLMConfigError(f"{source}: model must be a non-empty string")
        if not isinstance(self.embedding_model, str) or not self.embedding_model:
            raise LLMConfigError(f"{source}: embedding_model must be a non-empty string")
        if not isinstance(self.role_models, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in self.role_models.items()):
            raise LLMConfigError(f"{source}: role_models must map role names to model names")
        if not _seconds(self.timeout) or self.timeout <= 0:
            raise LLMConfigError(f"{source}: timeout must be a number of seconds > 0 and at most {MAX_SECONDS:,} "
                                 f"(got {self.timeout!r})")
        if not _seconds(self.start_wait):
            raise LLMConfigError(f"{source}: start_wait must be a number of seconds from 0 to {MAX_SECONDS:,} "
                                 f"(got {self.start_wait!r})")
        if not _whole(self.max_retries, 0, MAX_RETRIES):
            raise LLMConfigError(f"{source}: max_retries must be an integer from 0 to {MAX_RETRIES} "
                                 f"(got {self.max_retries!r})")
        if not _whole(self.max_concurrency, 1, MAX_CONCURRENCY):
            raise LLMConfigError(f"{source}: max_concurrency must be an integer from 1 to {MAX_CONCURRENCY} "
                                 f"(got {self.max_concurrency!r})")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise LLMConfigError(f"{source}: {name} must be a whole number >= 1 per minute (got {value!r})")
        _check_temperature(self.temperature, f"{source}: temperature")
        _check_max_tokens(self.max_tokens, f"{source}: max_tokens")
        _check_choice(self.structured_output, STRUCTURED_OUTPUTS, f"{source}: structured_output")
        _check_window(self.context_window, f"{source}: context_window")
        if self.strict_schema is not None and not isinstance(self.strict_schema, bool):
            raise LLMConfigError(f"{source}: strict_schema must be true, false or null (got {self.strict_schema!r})")
        _check_extra_body(self.extra_body, f"{source}: extra_body")
        if not isinstance(self.offline_roles, (list, tuple)) or not all(
                isinstance(role, str) and role in BUILD_ROLES for role in self.offline_roles):
            raise LLMConfigError(f"{source}: offline_roles must list build roles among {', '.join(BUILD_ROLES)} "
                                 f"(got {self.offline_roles!r})")
        self.offline_roles = tuple(dict.fromkeys(self.offline_roles))
        if not isinstance(self.allow_unlisted_model, bool):
            raise LLMConfigError(f"{source}: allow_unlisted_model must be true or false "
                                 f"(got {self.allow_unlisted_model!r})")
        if not isinstance(self.models, dict):
            raise LLMConfigError(f"{source}: models must map model names to tables of options")
        for name, options in self.models.items():
            where = f"{source}: models.{name}"
            if not isinstance(options, dict):
                raise LLMConfigError(f"{where} must be a table of options ({', '.join(MODEL_KEYS)})")
            unknown = sorted(set(options) - set(MODEL_KEYS))
            if unknown:
                raise LLMConfigError(f"{where}: unknown option(s) {', '.join(unknown)} "
                                     f"(expected {', '.join(MODEL_KEYS)})")
            if "temperature" in options:
                _check_temperature(options["temperature"], f"{where}.temperature")
            if "max_tokens" in options:
                value = options["max_tokens"]
                _check_max_tokens(value if isinstance(value, dict) else {"default": value}, f"{where}.max_tokens")
            if "token_parameter" in options:
                _check_choice(options["token_parameter"], TOKEN_PARAMETERS, f"{where}.token_parameter")
            if "structured_output" in options:
                _check_choice(options["structured_output"], STRUCTURED_OUTPUTS, f"{where}.structured_output")
            if "context_window" in options:
                _check_window(options["context_window"], f"{where}.context_window")
            if "parallel_tool_calls" in options and options["parallel_tool_calls"] is not None \
                    and not isinstance(options["parallel_tool_calls"], bool):
                raise LLMConfigError(f"{where}.parallel_tool_calls must be true, false or null (send none)")
            if "strict_schema" in options and not isinstance(options["strict_schema"], bool):
                raise LLMConfigError(f"{where}.strict_schema must be true or false")
            if "extra_body" in options:
                _check_extra_body(options["extra_body"], f"{where}.extra_body")
            if "reasoning" in options and not isinstance(options["reasoning"], bool):
                raise LLMConfigError(f"{where}.reasoning must be true or false")
        for model, price in self.prices.items():
            if (not isinstance(price, tuple) or len(price) != 2
                    or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) and p >= 0
                               for p in price)):
                raise LLMConfigError(f"{source}: prices.{model} must be [prompt, completion] USD per 1K tokens")
        return self

    @classmethod
    def load(cls, config_file: Path | str | None = None, set_values: dict[str, Any] | None = None,
             **overrides: Any) -> "LLMSettings":
        """Defaults < ``config_file`` (JSON or TOML) < the variables of :func:`environment`
        (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``HOMER_MODEL``) < ``overrides`` (field names; ``None`` values
        are ignored) < ``set_values`` (``--llm-set``; ``None`` is a value there). Raises :class:`LLMConfigError`."""
        known = {f.name for f in fields(cls)}
        settings = cls()
        source = "settings"
        if config_file is not None:
            path = Path(config_file)
            source = str(path)
            settings = replace(settings, **_read_config(path, known))
        variables = environment()
        env: dict[str, Any] = {field: variables[name] for name, field in ENV_SETTINGS.items() if variables.get(name)}
        settings = replace(settings, **env)
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise LLMConfigError(f"unknown setting(s) {', '.join(unknown)}: expected {', '.join(sorted(known))}")
        given = {k: v for k, v in overrides.items() if v is not None}
        for key, value in (set_values or {}).items():
            if key in _STRING_KEYS and not isinstance(value, str):
                raise LLMConfigError(f"--llm-set {key}: must be a string (got {value!r})")
        given.update(set_values or {})  # --llm-set: a null there is a value (temperature=null: send none)
        unknown = sorted(set(given) - known)
        if unknown:
            raise LLMConfigError(f"unknown setting(s) {', '.join(unknown)}: expected {', '.join(sorted(known))}")
        if "cache_path" in given:
            given["cache_path"] = Path(given["cache_path"])
        if "prices" in given:
            given["prices"] = _prices(given["prices"], "overrides")
        if "max_tokens" in given:
            given["max_tokens"] = _max_tokens_table(given["max_tokens"], "overrides")
        settings = replace(settings, **given)
        return settings.validate(source)


def settings_for(options: Any) -> LLMSettings:
    """The settings a run's options give (``model``, ``base_url``, ``llm_config`` and the
    ``llm_overrides`` of ``--llm-set``, pairs of a key and its value as JSON): the one way every
    role, check and price reads them."""
    set_values = {key: json.loads(value) for key, value in getattr(options, "llm_overrides", ()) or ()}
    return LLMSettings.load(getattr(options, "llm_config", None), set_values=set_values,
                            model=getattr(options, "model", None), base_url=getattr(options, "base_url", None))


def parse_override(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` from ``--llm-set`` as ``(key, value as JSON)``: the value read as JSON when it
    is JSON (``2048``, ``null``, ``{"default": 2048}``), else as a string (``json_schema``)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise LLMConfigError(f"--llm-set {text!r}: expected KEY=VALUE (e.g. max_tokens=2048)")
    if key in NOT_SETTABLE:
        raise LLMConfigError(f"--llm-set {key}: {NOT_SETTABLE[key]}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, json.dumps(value, sort_keys=True)


def _read_config(path: Path, known: set[str]) -> dict[str, Any]:
    from office_env.untrusted import UntrustedInputError, read_file

    try:
        text = read_file(path, max_bytes=1 << 20).decode("utf-8")
    except UntrustedInputError as exc:
        raise LLMConfigError(f"{exc}: cannot read the config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LLMConfigError(f"{path}: cannot read the config file ({exc.__class__.__name__}: {exc})") from None
    try:
        if path.suffix.lower() == ".toml":
            data: Any = tomllib.loads(text)
        elif path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            raise LLMConfigError(f"{path}: config file must end in .toml or .json")
    except tomllib.TOMLDecodeError as exc:
        raise LLMConfigError(f"{path}: invalid TOML: {exc}") from None
    except json.JSONDecodeError as exc:
        raise LLMConfigError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise LLMConfigError(f"{path}: expected a table/object of settings at the top level")
    if set(data) == {"llm"} and isinstance(data["llm"], dict):
        data = data["llm"]
    for key in data:
        if key not in known:
            raise LLMConfigError(f"{path}: unknown key {key!r} (expected one of {', '.join(sorted(known))})")
    values = dict(data)
    for key in ("base_url", "api_key", "model", "embedding_model"):
        if key in values and not isinstance(values[key], str):
            raise LLMConfigError(f"{path}: {key} must be a string")
    if "cache_path" in values:
        if not isinstance(values["cache_path"], str) or not values["cache_path"]:
            raise LLMConfigError(f"{path}: cache_path must be a path string")
        cache = Path(values["cache_path"]).expanduser()
        values["cache_path"] = cache if cache.is_absolute() else path.parent / cache
    if "prices" in values:
        values["prices"] = _prices(values["prices"], str(path))
    if "max_tokens" in values:
        values["max_tokens"] = _max_tokens_table(values["max_tokens"], str(path))
    # TOML has no null: the word "none" says "do not send a temperature"
    if values.get("temperature") == "none":
        values["temperature"] = None
    for options in (values.get("models") or {}).values():
        if isinstance(options, dict) and options.get("temperature") == "none":
            options["temperature"] = None
    return values


def _max_tokens_table(raw: Any, source: str) -> dict[str, int]:
    """``max_tokens`` as ``{role: n, "default": n}``: a bare number is the default for every role."""
    if isinstance(raw, dict):
        return dict(raw)
    return {"default": raw}


def _check_temperature(value: Any, where: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 2:
        raise LLMConfigError(f"{where} must be a number from 0 to 2, or null to send none (got {value!r})")


def _check_max_tokens(table: Any, where: str) -> None:
    if not isinstance(table, dict):
        raise LLMConfigError(f"{where} must be a number or a table of role = number")
    for role, value in table.items():
        if not _whole(value, 1, MAX_TOKENS):
            name = where if role == "default" else f"{where}.{role}"
            raise LLMConfigError(f"{name} must be a whole number of tokens from 1 to {MAX_TOKENS:,} (got {value!r})")


def _check_choice(value: Any, choices: tuple[str, ...], where: str) -> None:
    if value not in choices:
        raise LLMConfigError(f"{where} must be one of {', '.join(choices)} (got {value!r})")


def _check_extra_body(value: Any, where: str) -> None:
    if not isinstance(value, dict) or not all(isinstance(key, str) and key for key in value):
        raise LLMConfigError(f"{where} must be a table of request fields (got {value!r})")
    taken = sorted(CLIENT_FIELDS & set(value))
    if taken:
        raise LLMConfigError(f"{where}: {', '.join(taken)} {'is' if len(taken) == 1 else 'are'} set by homer "
                             f"itself (use the setting of that name)")
    try:
        size = len(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        raise LLMConfigError(f"{where} must hold JSON values only") from None
    if size > EXTRA_BODY_MAX_BYTES:
        raise LLMConfigError(f"{where} is {size:,} bytes as JSON; at most {EXTRA_BODY_MAX_BYTES:,}")


def _check_window(value: Any, where: str) -> None:
    if value is None:
        return
    if not _whole(value, 16, MAX_TOKENS):
        raise LLMConfigError(f"{where} must be a whole number of tokens from 16 to {MAX_TOKENS:,} (got {value!r})")


def _prices(raw: Any, source: str) -> dict[str, tuple[float, float]]:
    if not isinstance(raw, dict):
        raise LLMConfigError(f"{source}: prices must map model names to [prompt, completion] USD per 1K tokens")
    prices: dict[str, tuple[float, float]] = {}
    for model, pair in raw.items():
        if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                or not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in pair)):
            raise LLMConfigError(f"{source}: prices.{model} must be [prompt, completion] USD per 1K tokens")
        prices[model] = (float(pair[0]), float(pair[1]))
    return prices
