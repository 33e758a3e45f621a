"""The order the suite's worker processes take modules in: ``tests/conftest.py`` starts the longest
first. (Which modules are slow is said in each: ``pytestmark = pytest.mark.slow``.)"""

# The modules that take longest, longest first: the parallel workers take modules in collection
# order, so starting these early keeps one long module from running alone at the end.
LONGEST_FIRST = ("test_llama_server", "test_resume", "test_harness", "test_build", "test_llm_builds",
                 "test_hostile", "test_plus", "test_challenge", "test_show", "test_families")
