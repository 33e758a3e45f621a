"""The order the suite's worker processes take modules in: ``tests/conftest.py`` starts the longest
first. Which modules are slow is not said here: each slow module says it (``pytestmark =
pytest.mark.slow``), and a fast-layer run names any unmarked module that took long.

This list is kept by hand on purpose. It only decides which modules start first, so a module
missing from it runs as before (in its layer, after these), and a stale order costs wall time, never
a result; ``tests/test_layers.py`` checks that each name is a module marked slow. Deriving it from
the last run's durations would make the collection order depend on a cache file: every xdist worker
must collect the same order (a run beside another that rewrites the cache would stop with "different
tests collected"), and a fresh clone, as in CI, has no durations to go by."""

# The modules that take longest, longest first: the parallel workers take modules in collection
# order, so starting these early keeps one long module from running alone at the end.
LONGEST_FIRST = ("test_llama_server", "test_resume", "test_harness", "test_build", "test_llm_builds",
                 "test_hostile", "test_plus", "test_challenge", "test_show", "test_families")
