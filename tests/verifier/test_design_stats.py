"""The task-design survey that bench/quality.py prints."""

from __future__ import annotations

from pathlib import Path

from backends.dataset_reader import iter_tasks
from generators.families import FAMILIES
from orchestrator.build import build
from orchestrator.roles import BuildConfig
from verifier.design_stats import design_figures


def test_design_figures_of_a_small_build(tmp_path: Path):
    build(tmp_path / "ds", 8, BuildConfig(seed=4, days=2, utterances_per_day=12))
    tasks = list(iter_tasks(tmp_path / "ds"))
    figures = design_figures(tasks)
    assert figures["tasks"] == 8
    assert figures["families_registered"] == len(FAMILIES) >= 40
    assert sum(figures["registered_by_app_count"].values()) == len(FAMILIES)
    assert figures["near_duplicates"] == 0
    assert figures["criteria_traced_share"] == 1.0 and figures["tasks_passing_trace"] == 1.0
    assert figures["worlds"] == 1 and figures["files_per_world"] >= 10
    assert figures["median_sheet_rows"] > 0 and figures["median_pdf_pages"] >= 1
    assert figures["intent_pool_min"] >= 5 and figures["query_pool_min"] >= 5
    assert sum(figures["difficulty"].values()) == 8
