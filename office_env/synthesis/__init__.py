"""Seeded, deterministic office worlds and the testbeds written from them.

``make_world(seed)`` names the people, company, projects and "now" of one office;
``write_workspace(world, root)`` writes its documents, mailbox and calendars in the
OfficeBench layout and returns a manifest (testbed-relative path -> document kind).
The same seed always gives byte-identical files.
"""

from office_env.synthesis.common import KINDS
from office_env.synthesis.documents import write_workspace
from office_env.synthesis.world import Person, World, make_world

__all__ = ["KINDS", "Person", "World", "make_world", "write_workspace"]
