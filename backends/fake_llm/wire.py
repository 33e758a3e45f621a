"""What an OpenAI-compatible server checks and breaks on the wire: the request checks the fake
endpoint applies (model, messages, tools, embeddings input) with OpenAI's error shapes, the token
count of a prompt, and the reply faults it injects (a malformed body, a missing field)."""

from __future__ import annotations

import json
from typing import Any

from backends.llm.strict_json import json_kind
from backends.tokens import count_tokens
from office_env.limits import MAX_EMBEDDING_DIMENSIONS, MAX_EMBEDDING_INPUTS, MAX_EMBEDDING_VALUES

REPLY_FAULTS = ("message_string", "choices_empty", "choices_object", "content_object", "tool_calls_object",
                "function_missing", "arguments_object", "arguments_deep", "usage_strings", "body_array",
                "body_deep", "body_not_json")
EMBEDDING_DIMENSIONS = 64
MALFORMED_TAIL = " Let me know if you need anything else!"
DEEP_LEVELS = 100_000                # nesting of the arguments_deep and body_deep faults
MAX_MODEL_CHARS = 256                # one model name


def message_text(message: dict) -> str:
    """The text of one chat message: its content (a string or text parts) and the names and
    arguments of any tool calls it carries."""
    pieces: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        pieces.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            pieces.append(str(function.get("name", "")))
            pieces.append(str(function.get("arguments", "")))
    return "\n".join(pieces)


class FaultError(Exception):
    def __init__(self, status: int, message: str, kind: str, code: str | None = None,
                 headers: dict[str, str] | None = None, param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.code, self.param = status, message, kind, code, param
        self.headers = headers or {}


def bad_request(message: str, param: str | None = None, status: int = 400) -> FaultError:
    return FaultError(status, message, "invalid_request_error", param=param)


def prompt_tokens_of(body: dict) -> int:
    """The prompt tokens of a chat request: its messages' text and the tool definitions a server
    puts in the prompt."""
    total = sum(count_tokens(message_text(m)) for m in body["messages"] if isinstance(m, dict))
    if body.get("tools"):
        total += count_tokens(json.dumps(body["tools"]))
    return total


def chat_template(messages: list, tools: list | None = None) -> str:
    """One prompt of a chat request, as a server's chat template makes it (ChatML, the tools in a
    system turn of their own): what the ``llama-cpp`` and ``vllm`` profiles count and tokenize."""
    parts = []
    if tools:
        listed = "\n".join(json.dumps(tool) for tool in tools)
        parts.append(f"<|im_start|>system\n# Tools\n<tools>\n{listed}\n</tools><|im_end|>\n")
    for message in messages:
        if isinstance(message, dict):
            parts.append(f"<|im_start|>{message.get('role')}\n{message_text(message)}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def break_json(text: str) -> str:
    """Invalid JSON from a reply: its last closing brace removed and a sentence appended."""
    cut = text.rfind("}")
    if cut >= 0:
        text = text[:cut] + text[cut + 1:]
    return text + MALFORMED_TAIL


def check_model(body: dict) -> None:
    """Refuse a request without a usable model name (the API requires one; /v1/models lists it)."""
    model = body.get("model")
    if model is None:
        raise bad_request("'model' is required", "model")
    if not isinstance(model, str) or not model.strip():
        raise bad_request(f"'model' must be a non-empty string, got {json_kind(model)}", "model")
    if len(model) > MAX_MODEL_CHARS:
        raise bad_request(f"'model' is longer than {MAX_MODEL_CHARS} characters", "model")


def check_chat_request(body: dict) -> None:
    """Refuse a chat request the responders could not read, naming the first bad field."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request(f"'messages' must be a non-empty array, got {json_kind(messages)}"
                           f"{' (empty)' if messages == [] else ''}", "messages")
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise bad_request(f"'{where}' must be an object, got {json_kind(message)}", "messages")
        if not isinstance(message.get("role"), str):
            raise bad_request(f"'{where}.role' must be a string, got {json_kind(message.get('role'))}", "messages")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise bad_request(f"'{where}.content' must be a string, an array of parts or null, got "
                               f"{json_kind(content)}", "messages")
        for j, part in enumerate(content if isinstance(content, list) else []):
            if not isinstance(part, dict):
                raise bad_request(f"'{where}.content[{j}]' must be an object, got {json_kind(part)}", "messages")
        calls = message.get("tool_calls")
        if calls is None:
            continue
        if not isinstance(calls, list):
            raise bad_request(f"'{where}.tool_calls' must be an array, got {json_kind(calls)}", "messages")
        for j, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                raise bad_request(f"'{where}.tool_calls[{j}].function' must be an object", "messages")
            for field in ("name", "arguments"):
                if not isinstance(function.get(field), str):
                    raise bad_request(f"'{where}.tool_calls[{j}].function.{field}' must be a string, got "
                                       f"{json_kind(function.get(field))}", "messages")


def check_embeddings_request(body: dict) -> tuple[list[Any], int]:
    """The inputs and dimensions of an embeddings request, within the limits; else a 400 naming the field."""
    raw = body.get("input")
    if raw is None or raw == "" or raw == []:
        raise bad_request("'input' must be a non-empty string or array", "input")
    if isinstance(raw, str) or (isinstance(raw, list) and all(_token_id(x) for x in raw)):
        items: list[Any] = [raw]
    elif isinstance(raw, list):
        items = raw
        for i, item in enumerate(items):
            if not isinstance(item, str) and not (isinstance(item, list) and item and all(_token_id(x) for x in item)):
                raise bad_request(f"'input[{i}]' must be a string or an array of token ids, got {json_kind(item)}",
                                   "input")
    else:
        raise bad_request(f"'input' must be a string or an array, got {json_kind(raw)}", "input")
    if len(items) > MAX_EMBEDDING_INPUTS:
        raise bad_request(f"'input' has {len(items)} items; at most {MAX_EMBEDDING_INPUTS} per request", "input")
    dimensions = body.get("dimensions", EMBEDDING_DIMENSIONS)
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
        raise bad_request("'dimensions' must be a positive integer", "dimensions")
    if dimensions > MAX_EMBEDDING_DIMENSIONS:
        raise bad_request(f"'dimensions' must be at most {MAX_EMBEDDING_DIMENSIONS}, got {dimensions}", "dimensions")
    if len(items) * dimensions > MAX_EMBEDDING_VALUES:
        raise bad_request(f"{len(items)} inputs of {dimensions} dimensions is {len(items) * dimensions} values; "
                           f"at most {MAX_EMBEDDING_VALUES} per request", "input")
    if body.get("encoding_format", "float") not in ("float", "base64"):
        raise bad_request("'encoding_format' must be 'float' or 'base64'", "encoding_format")
    return items, dimensions


def _token_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def apply_reply_fault(answer: dict, fault: str | None) -> dict | list | bytes:
    """The body to send for ``answer`` under a reply fault (``answer`` itself for any other fault)."""
    if fault == "body_array":
        return [answer]
    if fault == "body_deep":
        return b"[" * DEEP_LEVELS + b"]" * DEEP_LEVELS
    if fault == "body_not_json":
        return b"<html><body>502 Bad Gateway</body></html>"
    if fault == "usage_strings":
        answer["usage"] = {key: str(value) for key, value in answer.get("usage", {}).items()}
        return answer
    choices = answer.get("choices")
    if fault not in REPLY_FAULTS or not isinstance(choices, list):  # embeddings: no choices
        return answer
    choice = choices[0]
    message = choice["message"]
    if fault == "message_string":
        choice["message"] = message.get("content") or ""
    elif fault == "choices_empty":
        answer["choices"] = []
    elif fault == "choices_object":
        answer["choices"] = choice
    elif fault == "content_object":
        message["content"] = {"text": message.get("content")}
    else:
        calls = message.setdefault("tool_calls", [
            {"id": "call_1", "type": "function", "function": {"name": "system_list_files", "arguments": "{}"}}])
        if fault == "tool_calls_object":
            message["tool_calls"] = {"calls": calls}
        for call in calls:
            if fault == "function_missing":
                del call["function"]
            elif fault == "arguments_object":
                try:
                    call["function"]["arguments"] = json.loads(call["function"]["arguments"])
                except json.JSONDecodeError:
                    call["function"]["arguments"] = {"text": call["function"]["arguments"]}
            elif fault == "arguments_deep":
                call["function"]["arguments"] = "[" * DEEP_LEVELS + "]" * DEEP_LEVELS
    return answer
