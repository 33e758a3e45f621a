"""The sibling works of a task's history: other families' tasks drawn on the same office.

Both backends tell them (``generators.sibling_works``): the offline writer writes their events as it
writes the task's, and the llm prompt hands them to the model in the same event list, unmarked.
They are drawn as the task is (a family builds a draft from the office's notes) with seeds of their
own, so the same attempt always gets the same siblings.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from generators.families import FAMILIES
from generators.model import TaskDraft
from generators.sibling_works import MAX_SIBLINGS, Sibling, sibling_pieces
from office_env.seeding import rng as seeded
from orchestrator.roles import Job

MAX_DRAWS = 6  # families tried for one history's siblings, at most


def draw_siblings(job: Job, task: TaskDraft, notes_for: Callable[[str], dict[str, Any] | None],
                  avoid: Sequence[str] = (), count: int = MAX_SIBLINGS) -> list[Sibling]:
    """Up to ``count`` siblings for ``task``: families other than the task's, in a seeded order,
    each built on the notes ``notes_for(app)`` gives (a family whose app has none is passed over),
    at most :data:`MAX_DRAWS` of them; those whose details are of the kinds the task's are (a
    shared cue) first, so that each task detail has others of its kind, told apart by their work
    alone. ``avoid``: values the task's checks need (no sibling says one)."""
    world = job.world
    names = sorted(n for n in FAMILIES if n != task.family)
    seeded(job.config.seed, job.index, "siblings").shuffle(names)
    colleagues = tuple((p.user, p.name) for p in world.colleagues)
    drafts: list[TaskDraft] = []
    for name in names:
        if len(drafts) == MAX_DRAWS:
            break
        fam = FAMILIES[name]
        notes = {app: notes_for(app) for app in fam.apps}
        if any(n is None for n in notes.values()):
            continue
        rng = seeded(job.config.seed, job.index, "sibling", name)
        draft = fam.build(fam.input(rng, notes, world.user.user, world.user.name,  # type: ignore[arg-type]  # no app's notes are None (above)
                                    colleagues, world.now))
        if draft is not None:
            drafts.append(draft)
    cues = {p.cue for p in task.memory if p.cue}
    drafts.sort(key=lambda d: not cues & {p.cue for p in d.memory})
    return sibling_pieces(task, drafts, count=count, avoid=avoid)
