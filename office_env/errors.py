"""Errors a user (or an agent) can act on.

Everything that goes wrong because of input -- a path that leaves the testbed, a corrupt file,
a bad cell address -- is an ``OfficeError`` whose message names the file and what is wrong.
Tools turn these into observations; the CLI prints them; nothing shows a traceback.
"""

from __future__ import annotations


class OfficeError(Exception):
    """A problem caused by input, with a message a person can act on."""


class PathError(OfficeError):
    """A path argument that is malformed or would leave the testbed."""


class CorruptFileError(OfficeError):
    """A file that exists but cannot be read as the format its name claims."""


class MissingFileError(OfficeError):
    """A file that an operation needs does not exist."""
