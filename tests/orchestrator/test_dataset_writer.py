"""The dataset writer's JSON text."""

from __future__ import annotations

import json
import math

from orchestrator.dataset_writer import dumps


def test_dumps_puts_each_top_level_key_on_its_line_as_json_dumps_writes_it():
    """``dumps`` writes with encoders made once: the text json.dumps gives each key (ASCII) and each
    value (non-ASCII kept), over keys and values of every JSON type, and for data that is no
    object or an empty one."""
    cases = [{}, [], 1, "é", None, {"a": "é\u2028\"\\", "b": [1, 2.5, None, True, -0.0], "ü": {"x": math.inf}},
             {1: 2, None: 3, 2.5: "x", False: True}, {"k": (1, "日本")}, {"deep": [{"t": "😀"}] * 3}]
    for data in cases:
        if isinstance(data, dict) and data:
            lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in data.items()]
            expected = "{\n" + ",\n".join(lines) + "\n}\n"
        else:
            expected = json.dumps(data, ensure_ascii=False) + "\n"
        assert dumps(data) == expected
