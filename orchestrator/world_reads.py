"""What a world's read-only testbed says the same way to each of its tasks, read once per world.

The tasks of a world share its testbed, which no task changes (replays work on copies): its
surfers' notes, the facts the offline chat mentions and its list of files are the same for each
of them. They are kept by (testbed path, world seed), since a later build may reuse the path for
another world, and for the latest few worlds only: a worker's tasks come a world at a time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from office_env import Workspace
from office_env.formats.built import Kept
from orchestrator.roles import Job

KEPT_WORLDS = 4  # worlds whose reads a process keeps


@dataclass
class WorldReads:
    """What one world's testbed says (each part read when first asked for)."""

    notes: dict[str, dict[str, Any]] = field(default_factory=dict)  # app -> the surfer's notes
    # the documents and absences the offline chat mentions (``orchestrator.offline_roles``)
    facts: tuple[tuple[str, ...], tuple[tuple[str, date, date], ...]] | None = None
    files: tuple[str, ...] | None = None  # every file of the testbed (``Workspace.list_files``)


_WORLD_READS: Kept[WorldReads] = Kept(KEPT_WORLDS)
_WORLD_READS_LOCK = threading.Lock()  # a task's surfers run in threads of their own (the graph's fan-out)


def world_reads(job: Job) -> WorldReads:
    """The reads kept of the job's world (empty when it is first asked for)."""
    with _WORLD_READS_LOCK:
        return _WORLD_READS.get((str(job.testbed), job.world.seed), WorldReads)


def testbed_files(job: Job) -> list[str]:
    """Every file of the job's testbed (testbed-relative, sorted), listed once per world."""
    reads = world_reads(job)
    if reads.files is None:
        reads.files = tuple(Workspace(job.testbed, now=job.world.now).list_files())
    return list(reads.files)
