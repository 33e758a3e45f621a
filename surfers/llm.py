"""The llm surfer: a function-calling loop over one app's read-only tools, then notes as JSON.

The model is shown the office's file list (and mailbox / calendar owners) up front, may call only
read-only tools, and must end with notes valid against the app's part of ``NOTES_SCHEMA``.
A step cap bounds the loop; a bad final answer is repaired like any structured output.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from backends.llm.client import LLMError, check_reply, repair_prompt
from backends.prompts import render
from office_env import Workspace, default_registry
from office_env.tools import ToolRegistry
from surfers.notes import NOTES_SCHEMA
from surfers.offline import WorkspaceReader, calendar_users, list_files, mailbox_users

APP_TOOLS = {
    "word": ("word_read_file",),
    "excel": ("excel_read_file",),
    "pdf": ("pdf_read_file",),
    "email": ("email_list_emails", "email_read_email"),
    "calendar": ("calendar_list_events",),
}


@lru_cache(maxsize=8)
def app_schema(app: str) -> dict[str, Any]:
    return {"$schema": NOTES_SCHEMA["$schema"], "$defs": NOTES_SCHEMA["$defs"], "$ref": f"#/$defs/{app}_notes"}


def _tools(app: str) -> ToolRegistry:
    read_only = default_registry().read_only()
    return ToolRegistry(t for t in read_only if t.name in APP_TOOLS[app] + ("system_list_files",))


def explore_llm(client: Any, app: str, ws: Workspace, *, max_steps: int = 6, max_repairs: int = 2) -> dict[str, Any]:
    files = list_files(WorkspaceReader(ws))
    inputs = {"app": app, "files": files, "now": ws.now.strftime("%Y-%m-%d %H:%M (%A)") if ws.now else "",
              "users": mailbox_users(files) if app == "email" else calendar_users(files) if app == "calendar" else []}
    schema = app_schema(app)
    validator = Draft202012Validator(schema)
    tools = _tools(app)
    messages = render("surfer", app=app, inputs=inputs, schema=schema)
    repairs = 0
    for _ in range(max_steps):
        result = client.chat("surfer", messages, tools=tools.openai_tools())
        messages = [*messages, result.message()]
        if result.tool_calls:
            for request in result.tool_calls:
                if request.arguments is None:
                    observation = f"Error: arguments of {request.name} are not a JSON object"
                else:
                    observation = tools.call(ws, request.name, request.arguments).observation
                messages.append({"role": "tool", "tool_call_id": request.id, "content": observation})
            continue
        notes, error = check_reply(result, validator)
        if not error:
            return notes
        repairs += 1
        if repairs > max_repairs:
            break
        messages.append({"role": "user", "content": repair_prompt(error)})
    raise LLMError(f"surfer ({app}): no valid notes after {max_steps} steps", role="surfer")


