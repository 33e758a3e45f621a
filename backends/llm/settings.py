"""Configuration of the llm backend: endpoint, key, models per role, limits, cache, prices.

Sources, later wins: the dataclass defaults < a JSON or TOML config file < the environment
(``OPENAI_API_KEY``, ``OPENAI_BASE_URL``) < explicit overrides (CLI flags; ``None`` means "not
given"). A config file holds the field names below at its top level (or under one ``[llm]``
table); ``cache_path`` in a file is relative to the file's folder. Prices are USD per 1K tokens,
``{model: [prompt, completion]}``.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

OPENAI_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
PLACEHOLDER_KEY = "sk-local-no-key"  # sent to local endpoints that need no key


class LLMConfigError(ValueError):
    """The llm backend's configuration is unusable; the message says what to set, and where."""


@dataclass
class LLMSettings:
    base_url: str | None = None
    api_key: str | None = None
    model: str = "gpt-4o-mini"
    role_models: dict[str, str] = field(default_factory=dict)
    timeout: float = 60
    max_retries: int = 4
    max_concurrency: int = 4
    cache_path: Path | None = None
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    embedding_model: str = "text-embedding-3-small"

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
        url = urlsplit(self.endpoint)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise LLMConfigError(f"{source}: base_url {self.base_url!r} must be an http:// or https:// URL "
                                 f"(e.g. http://127.0.0.1:8000/v1)")
        if not self.api_key and not self.is_local:
            raise LLMConfigError(
                f"no API key for {self.endpoint}: set OPENAI_API_KEY in the environment "
                f"(or api_key in the config file, or --api-key); a key is optional only for a local "
                f"base URL (127.0.0.1, localhost)")
        if not isinstance(self.model, str) or not self.model:
            raise LLMConfigError(f"{source}: model must be a non-empty string")
        if not isinstance(self.embedding_model, str) or not self.embedding_model:
            raise LLMConfigError(f"{source}: embedding_model must be a non-empty string")
        if not isinstance(self.role_models, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in self.role_models.items()):
            raise LLMConfigError(f"{source}: role_models must map role names to model names")
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)) or self.timeout <= 0:
            raise LLMConfigError(f"{source}: timeout must be a number of seconds > 0 (got {self.timeout!r})")
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise LLMConfigError(f"{source}: max_retries must be an integer >= 0 (got {self.max_retries!r})")
        if (isinstance(self.max_concurrency, bool) or not isinstance(self.max_concurrency, int)
                or self.max_concurrency < 1):
            raise LLMConfigError(f"{source}: max_concurrency must be an integer >= 1 (got {self.max_concurrency!r})")
        for model, price in self.prices.items():
            if (not isinstance(price, tuple) or len(price) != 2
                    or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and p >= 0 for p in price)):
                raise LLMConfigError(f"{source}: prices.{model} must be [prompt, completion] USD per 1K tokens")
        return self

    @classmethod
    def load(cls, config_file: Path | str | None = None, **overrides: Any) -> "LLMSettings":
        """Defaults < ``config_file`` (JSON or TOML) < ``OPENAI_API_KEY``/``OPENAI_BASE_URL`` <
        ``overrides`` (field names; ``None`` values are ignored). Raises :class:`LLMConfigError`."""
        known = {f.name for f in fields(cls)}
        settings = cls()
        source = "settings"
        if config_file is not None:
            path = Path(config_file)
            source = str(path)
            settings = replace(settings, **_read_config(path, known))
        env: dict[str, Any] = {}
        if os.environ.get("OPENAI_API_KEY"):
            env["api_key"] = os.environ["OPENAI_API_KEY"]
        if os.environ.get("OPENAI_BASE_URL"):
            env["base_url"] = os.environ["OPENAI_BASE_URL"]
        settings = replace(settings, **env)
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise LLMConfigError(f"unknown setting(s) {', '.join(unknown)}: expected {', '.join(sorted(known))}")
        given = {k: v for k, v in overrides.items() if v is not None}
        if "cache_path" in given:
            given["cache_path"] = Path(given["cache_path"])
        if "prices" in given:
            given["prices"] = _prices(given["prices"], "overrides")
        settings = replace(settings, **given)
        return settings.validate(source)


def _read_config(path: Path, known: set[str]) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
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
    return values


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
