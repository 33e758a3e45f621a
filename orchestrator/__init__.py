"""Top of the stack: graphs, batch runners and the ``homer`` command line."""
