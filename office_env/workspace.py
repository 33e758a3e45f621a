"""One testbed folder in the OfficeBench layout, with every path kept inside it.

``data/`` holds documents, ``emails/<user>/*.eml`` one mailbox per person and
``calendar/<user>.ics`` one calendar per person. All path arguments from tasks, tools and
criteria go through :meth:`Workspace.resolve`, which refuses absolute paths, ``..``, NUL bytes
and symlinks that lead out of the root.

A testbed usually comes from a stranger (a dataset, a seed folder), so the root itself must be a
real folder, not a symlink, and :meth:`Workspace.copy_to` opens it as an untrusted tree
(:mod:`office_env.untrusted`): the copy is refused, naming the path, when anything in it is a
symlink, a special file, a hard link to a file outside it, a bad name or beyond the tree limits,
and otherwise holds fresh regular files only. Listings and snapshots walk the same way and skip
such entries.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from datetime import datetime
from pathlib import Path

from office_env.apps import get_app
from office_env.errors import OfficeError, PathError
from office_env.snapshot import Snapshot
from office_env.untrusted import copy_tree, scan_tree

DATA_DIR = "data"
# where the mail and calendar apps keep one mailbox / one calendar per person: their registry entries say
EMAILS_DIR = get_app("email").folder.rstrip("/")
CALENDAR_DIR = get_app("calendar").folder.rstrip("/")
ANSWER_FILE = "data/answer.txt"

_USER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,63}$")
_DRIVE_RE = re.compile(r"^[A-Za-z]:")


class Workspace:
    """A sandboxed testbed folder.

    ``now`` is the simulated "current time" of the office; tools stamp new e-mails and events
    with it so that replaying the same calls gives the same bytes. ``trusted`` marks a folder
    this project wrote itself (every copy made by :meth:`copy_to` is one); only those may be
    hard-linked by ``copy_to(link=True)``.
    """

    def __init__(self, root: str | os.PathLike[str], now: datetime | None = None, *, trusted: bool = False) -> None:
        path = Path(root)
        require_folder(path, missing=f"{root}: testbed folder does not exist",
                       symlink=f"{root}: testbed folder is a symlink; give the real folder",
                       not_folder=f"{root}: testbed folder does not exist (not a folder)")
        self.root = path.resolve()
        self._root_text = str(self.root).rstrip("/")
        self.now = now
        self.trusted = trusted

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # -- paths -------------------------------------------------------------------------------

    def resolve(self, relpath: str, *, field: str = "path") -> Path:
        """Return the absolute path of ``relpath`` inside the testbed, or raise PathError.

        The root is resolved once; below it each existing part is looked at (``lstat``): with no
        symlink among them the joined path is the real one, else it is resolved in full and must
        still lie inside the root."""
        parts = relative_parts(relpath, field=field)
        below = self._below(parts)
        if below == "missing":  # nothing further to follow
            return self.root.joinpath(*parts)
        if below == "link":
            real = self.root.joinpath(*parts).resolve()
            if real != self.root and self.root not in real.parents:
                raise PathError(f"{field}: {relpath!r} leads outside the testbed (through a symlink)")
            return real
        return Path("/".join((self._root_text, *parts)))

    def relative(self, path: Path) -> str:
        """The testbed-relative POSIX form of an absolute path inside the testbed. A path written
        below the resolved root is looked at below it only, as :meth:`resolve` looks; one with a
        link, a missing part, "." or ".." among its parts is resolved in full."""
        text = str(path)
        if text.startswith(self._root_text + "/"):
            rest = text[len(self._root_text) + 1:]
            parts = rest.split("/")
            if all(part not in ("", ".", "..") for part in parts) and self._below(parts) == "plain":
                return rest
        return path.resolve().relative_to(self.root).as_posix()

    def _below(self, parts: list[str]) -> str:
        """What ``parts`` below the root are, one ``lstat`` each up to the first that is not a plain
        existing entry: "missing" (that part does not exist), "link" (it is a symlink) or "plain"."""
        path = self._root_text
        for part in parts:
            path = f"{path}/{part}"
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                return "missing"
            if stat.S_ISLNK(mode):
                return "link"
        return "plain"

    @staticmethod
    def check_user(user: str, *, field: str = "user") -> str:
        """Validate a mailbox/calendar owner name; ``alice@example.com`` maps to ``alice``."""
        if not isinstance(user, str):
            raise PathError(f"{field}: expected a user name, got {type(user).__name__}")
        name = user.strip()
        if "@" in name:
            name = name.split("@", 1)[0]
        if not _USER_RE.match(name) or name in {".", ".."}:
            raise PathError(f"{field}: {user!r} is not a valid user name")
        return name

    def mailbox(self, user: str, *, field: str = "user") -> Path:
        """Folder of a user's mailbox; an existing folder matching case-insensitively wins."""
        name = self.check_user(user, field=field)
        found = self.find_user_entry(EMAILS_DIR, name)
        return found if found is not None else self.resolve(f"{EMAILS_DIR}/{name}", field=field)

    def calendar_file(self, user: str, *, field: str = "user") -> Path:
        name = self.check_user(user, field=field)
        found = self.find_user_entry(CALENDAR_DIR, name, suffix=".ics")
        return found if found is not None else self.resolve(f"{CALENDAR_DIR}/{name}.ics", field=field)

    def find_user_entry(self, folder: str, name: str, suffix: str = "") -> Path | None:
        """The entry ``folder/<name><suffix>``, matched exactly first, then ignoring case. An exact
        entry with no link on its way is known by ``resolve``'s own look at each part (a mailbox is
        looked up by every call and check of the mail)."""
        relpath = f"{folder}/{name}{suffix}"
        parts = relative_parts(relpath)
        if self._below(parts) == "plain":  # every part an existing entry, none a link: what resolve gives
            return Path("/".join((self._root_text, *parts)))
        base = self.root / folder
        exact = base / f"{name}{suffix}"
        if exact.exists():
            return self.resolve(relpath)
        if base.is_dir():
            wanted = f"{name}{suffix}".lower()
            for entry in sorted(os.listdir(base)):  # the names iterdir gives, in its order, without a path each
                if entry.lower() == wanted:
                    return self.resolve(f"{folder}/{entry}")
        return None

    def users(self) -> list[str]:
        """Everyone with a mailbox or a calendar in this testbed."""
        names: set[str] = set()
        if (self.root / EMAILS_DIR).is_dir():
            names.update(p.name for p in (self.root / EMAILS_DIR).iterdir() if p.is_dir() and not p.is_symlink())
        if (self.root / CALENDAR_DIR).is_dir():
            names.update(p.stem for p in (self.root / CALENDAR_DIR).glob("*.ics"))
        return sorted(names)

    def list_files(self, subdir: str = "") -> list[str]:
        """Every regular file under ``subdir`` (testbed-relative, sorted)."""
        base = self.root if subdir.strip() in ("", ".", "./") else self.resolve(subdir, field="folder")
        if not base.exists():
            return []
        prefix = base.relative_to(self.root).parts
        tree = scan_tree(base, check_links=False, max_file_bytes=None, max_total_bytes=None)
        return ["/".join(prefix + entry.parts) for entry in tree.files]

    # -- writing -----------------------------------------------------------------------------

    def write_bytes(self, relpath: str, data: bytes, *, field: str = "path") -> Path:
        """Write atomically: a temporary file in the same folder, then a rename."""
        target = self.resolve(relpath, field=field)
        if target.is_dir():
            raise OfficeError(f"{relpath}: is a folder, not a file")
        atomic_write(target, data)
        return target

    # -- copies and snapshots ----------------------------------------------------------------

    def copy_to(self, dest: str | os.PathLike[str], *, link: bool = False) -> "Workspace":
        """Copy the testbed into ``dest`` (which must not exist) and return the copy.

        The source is opened as an untrusted tree: a symlink, special file, hard link to a file
        outside it, bad name or anything beyond the tree limits raises ``PathError`` naming the
        path (and no ``dest`` is left); the copy holds fresh regular files only.

        ``link=True`` hard-links the files instead of copying them, but only when this workspace
        is ``trusted`` (the project's own copy); from any other source it copies, so a dataset or
        seed file is never linked. Links are safe for scratch copies that only the office tools
        change, because every tool write replaces a file by rename and never edits one in place.
        """
        dest_path = Path(dest)
        if dest_path.exists() or dest_path.is_symlink():
            raise PathError(f"{dest}: destination already exists")
        copy_tree(self.root, dest_path, link=link and self.trusted)
        return Workspace(dest_path, now=self.now, trusted=True)

    def snapshot(self) -> Snapshot:
        return Snapshot.of(self.root)


def folder_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a real folder (``lstat``, never followed): "missing", "symlink",
    "not a folder"; None when it is one."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "missing"
    if stat.S_ISLNK(mode):
        return "symlink"
    return None if stat.S_ISDIR(mode) else "not a folder"


def require_folder(path: str | os.PathLike[str], *, missing: str, symlink: str, not_folder: str) -> None:
    """Refuse (``PathError``, with the message for what is wrong) a ``path`` that is not a real folder."""
    problem = folder_problem(path)
    if problem is not None:
        raise PathError({"missing": missing, "symlink": symlink, "not a folder": not_folder}[problem])


def relative_parts(relpath: object, *, field: str = "path", allow_parent: bool = False) -> list[str]:
    """Split a testbed-relative path into its parts, refusing anything that could escape.

    Refused: non-strings, empty paths, NUL bytes, absolute or drive paths, ``~`` and (unless
    ``allow_parent``) any ``..`` part. ``./`` parts and backslashes are normalised.
    """
    if not isinstance(relpath, str):
        raise PathError(f"{field}: expected a path string, got {type(relpath).__name__}")
    text = relpath.strip()
    if not text:
        raise PathError(f"{field}: empty path")
    if "\x00" in text:
        raise PathError(f"{field}: path contains a NUL byte")
    text = text.replace("\\", "/")
    if text.startswith("/") or _DRIVE_RE.match(text) or text.startswith("~"):
        raise PathError(f"{field}: {relpath!r} is absolute; give a path relative to the testbed")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts and not allow_parent:
        raise PathError(f"{field}: {relpath!r} contains '..'; paths must stay inside the testbed")
    if not parts:
        raise PathError(f"{field}: {relpath!r} names the testbed itself, not a file")
    return parts


def atomic_write(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` so that readers see the old or the new file, never half. The
    folder is made only when the temporary file finds none (a missing folder, or a file in its
    place, which making the folder refuses as before): it almost always exists."""
    try:
        fd, tmp = _temporary(target)
    except (FileNotFoundError, NotADirectoryError):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary(target)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, 0o644)  # mkstemp creates 0600; written files are ordinary shared files
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _temporary(target: Path) -> tuple[int, str]:
    """A new temporary file beside ``target``, open for writing (its descriptor and path)."""
    return tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
