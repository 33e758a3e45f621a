"""The two layers of the suite: ``tests/conftest.py`` marks the modules named here ``slow`` and
starts the longest first."""

# The slow layer: modules that build datasets through the whole pipeline, run the command line in
# child processes or serve HTTP (measured with --durations: each takes seconds). Everything else is
# the fast unit layer: ``pytest -m "not slow"`` runs it in well under a minute.
SLOW_MODULES = frozenset({
    "test_build", "test_llm_builds", "test_synthesis", "test_cli", "test_server_profiles", "test_show",
    "test_harness", "test_challenge", "test_plus", "test_resume", "test_ray_executor", "test_hostile",
    "test_families", "test_gates", "test_progress", "test_export", "test_tool_fuzz", "test_world_check",
    "test_gameability", "test_llm_client", "test_small_talk", "test_rate_limit", "test_fake_llm", "test_phrasing",
    "test_horizon", "test_dialogue", "test_review_app", "test_duplicates", "test_workers", "test_limits",
    "test_other_work", "test_review_browser", "test_exports", "test_tools", "test_adversary",
    "test_review_agreement", "test_read_cache", "test_surfers", "test_context_checks", "test_probes",
    "test_fake_listener", "test_review_hardening", "test_llama_server", "test_server_tokens", "test_slots",
})


# The modules that take longest, longest first: the parallel workers take modules in collection
# order, so starting these early keeps one long module from running alone at the end.
LONGEST_FIRST = ("test_llama_server", "test_resume", "test_harness", "test_build", "test_llm_builds",
                 "test_hostile", "test_plus", "test_challenge", "test_show", "test_families")
