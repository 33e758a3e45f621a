"""Readers and writers for the office file kinds, deterministic and pure Python.

Each module knows one format. Readers raise ``CorruptFileError`` naming the file when the
bytes are not what the extension claims; writers return bytes so callers write atomically.
"""
