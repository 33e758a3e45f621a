"""What the test modules share besides fixtures (those are in ``tests/conftest.py``): imported as
``tests.support.<module>``.

- ``records``: task records and JSON files written for a test, and places in a record's dialogue;
- ``homer_cli``: the ``homer`` command line run in the test process;
- ``llama_server``: a real llama.cpp server (the ``llama_server`` fixture starts one);
- ``slow``: the order the longest modules start in (which modules are slow each says itself).
"""
