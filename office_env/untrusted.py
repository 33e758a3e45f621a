"""Opening folder trees and JSON files written by someone else, without trusting them.

Testbeds, reference folders, seed task folders and dataset task folders are read, scored and
copied here but come from strangers. Anything in them may point elsewhere on the machine (a
symlink to ``/etc``, a hard link to a private file), hang a reader (a FIFO), or break the
one-line output of the command line (a file name holding a newline). So every such tree is
opened through :func:`scan_tree` before anything in it is read or copied, and every JSON file
through :func:`load_json`.

``scan_tree`` walks a tree with ``os.scandir`` and ``lstat`` only, never following a link (each
folder is opened with ``O_NOFOLLOW`` and must be the folder its parent listed), and returns the
regular files it accepts plus every entry it refused, each with a named reason:

- ``is a symlink``: file or folder; a root that is a symlink refuses the whole tree;
- ``is a hard link to a file outside the tree``: a regular file whose link count is larger than
  the number of times its (device, inode) occurs inside the tree (or, for a dataset task's tree,
  than the names found at its path in the tasks of its world: ``office_env.dataset_links``);
- ``is a special file (FIFO|socket|device)``: reading one can block forever or never end;
- ``has a bad name (...)``: control characters (newline included), a backslash, more than
  ``MAX_NAME_CHARS`` characters, bytes that are not UTF-8, ``.`` or ``..``;
- ``is nested more than N folders deep``, ``is past the limit of N files and folders``, ``is too
  large``: the tree limits of :mod:`office_env.limits` (``MAX_TREE_DEPTH``, ``MAX_TREE_FILES``,
  which counts folders too, since a million empty folders cost as much to walk as files, and
  ``MAX_FILE_BYTES``).

Callers that load strangers' folders treat a tree with any refused entry as unusable, with a
one-line error naming the first refused path: scoring or copying a partial testbed silently would
give wrong results, and a dataset is either taken whole or not at all. Views of the project's own
working copies (snapshots, file listings) skip refused entries instead.

:func:`copy_tree` copies only what a scan accepted. Each source is opened relative to its
already-opened parent folder with ``O_NOFOLLOW`` and checked with ``fstat`` to be the very
regular file the scan accepted (same device and inode), so a file swapped for a link between
the scan and the copy is refused, not followed. The copy holds fresh files only: never a
symlink, and never a hard link back to an untrusted source (``link=True`` exists for trees the
project wrote itself).

:func:`load_json` checks the size (``MAX_JSON_BYTES``) before reading, the number of values
(``MAX_JSON_VALUES``) before parsing, by counting separators outside strings at C speed (parsing
a million small lists alone takes seconds), and the nesting depth (``MAX_JSON_DEPTH``) while and
after parsing, iteratively, so a task.json nested a hundred
thousand levels costs one error line (``tasks/x/task.json: nested deeper than 64 levels``), not
a traceback.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import unicodedata
from collections import Counter
from dataclasses import dataclass, field, replace
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, Iterator, NamedTuple, cast

from office_env.dataset_links import sibling_names
from office_env.errors import PathError
from office_env.formats.bounded import FOLDER_FLAGS, READ_FLAGS, read_upto
from office_env.limits import (
    MAX_FILE_BYTES,
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    MAX_JSON_VALUES,
    MAX_NAME_CHARS,
    MAX_TREE_BYTES,
    MAX_TREE_DEPTH,
    MAX_TREE_FILES,
    MiB,
)

SYMLINK = "is a symlink"
OUTSIDE_LINK = "is a hard link to a file outside the tree"
SPECIAL = "is a special file"
BAD_NAME = "has a bad name"
TOO_DEEP = f"is nested more than {MAX_TREE_DEPTH} folders deep"
TOO_MANY = f"is past the limit of {MAX_TREE_FILES} files and folders in one tree"
TOO_LARGE = "is too large"
MISSING = "does not exist"
NOT_FOLDER = "is not a folder"
UNREADABLE = "cannot be read"
CHANGED = "changed while being read"

MAX_SKIPPED_KEPT = 100  # refused entries listed one by one; the rest are only counted

_HIDDEN_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_CHUNK = 1 << 20


class UntrustedInputError(PathError):
    """A file or tree from a stranger that is refused; ``str()`` is one line naming the path."""

    def __init__(self, label: str, reason: str, *, kind: str = "file",
                 line: int | None = None, column: int | None = None, detail: str = "") -> None:
        self.label = label
        self.reason = reason
        self.kind = kind  # "file" (what the file is) or "json" (what it holds)
        self.line, self.column, self.detail = line, column, detail
        super().__init__(f"{label}: {reason}")


# -- names ------------------------------------------------------------------------------------

def _hidden(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") or ch in _HIDDEN_CONTROLS


def printable(text: object) -> str:
    """``text`` with control characters and undecodable bytes escaped (``\\n``, ``\\xff``), so
    that a path always prints on one line and says what it holds."""
    text = str(text)
    if text.isprintable() or not any(_hidden(ch) for ch in text):  # isprintable: none is hidden
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif _hidden(ch):
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a plain relative path component, or ``None`` when it is one."""
    if name in ("", ".", ".."):
        return "empty, . or .."
    if name.isprintable():  # no surrogate, control or direction mark: only the plain rules are left
        if "/" in name or "\\" in name:
            return "contains a slash or backslash"
        return f"longer than {MAX_NAME_CHARS} characters" if len(name) > MAX_NAME_CHARS else None
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in name):
        return "not valid UTF-8"
    if "/" in name or "\\" in name:
        return "contains a slash or backslash"
    if any(_hidden(ch) for ch in name):
        return "contains a control character"
    if len(name) > MAX_NAME_CHARS:
        return f"longer than {MAX_NAME_CHARS} characters"
    return None


# -- scanning ---------------------------------------------------------------------------------

class FileEntry(NamedTuple):
    """One accepted regular file: its parts below the root and what the scan saw. A named tuple, not a
    frozen dataclass: a scan makes one per file, and a frozen dataclass is made four times slower."""

    parts: tuple[str, ...]
    size: int
    dev: int
    ino: int
    nlink: int
    mtime_ns: int = 0
    ctime_ns: int = 0  # changes with every link made or removed (office_env.dataset_links)

    @property
    def rel(self) -> str:
        return "/".join(self.parts)


@dataclass(frozen=True)
class Skipped:
    """One refused entry: its path below the root ("" for the root itself) and the reason."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{printable(self.path) or '.'}: {self.reason}"


@dataclass
class Tree:
    """What :func:`scan_tree` found: accepted files and folders, refused entries."""

    root: Path
    files: list[FileEntry] = field(default_factory=list)
    folders: list[tuple[str, ...]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    skipped_count: int = 0  # every refused entry, also those past MAX_SKIPPED_KEPT
    root_id: tuple[int, int] | None = None  # the root folder walked (device, inode); None when refused

    @property
    def total_bytes(self) -> int:
        """The accepted files' sizes together (as listed: a sparse file counts whole)."""
        return sum(f.size for f in self.files)

    @property
    def ok(self) -> bool:
        return self.skipped_count == 0

    @property
    def refused(self) -> bool:
        """True when the root itself was refused (missing, a symlink, not a folder)."""
        return any(s.path == "" for s in self.skipped)

    def skip(self, path: str, reason: str) -> None:
        self.skipped_count += 1
        if len(self.skipped) < MAX_SKIPPED_KEPT:
            self.skipped.append(Skipped(path, reason))

    def _first(self, label: str | os.PathLike[str] | None) -> tuple[str, str]:
        base = printable(label if label is not None else self.root)
        first = self.skipped[0]
        where = f"{base}/{printable(first.path)}" if first.path else base
        more = self.skipped_count - 1
        tail = f" (and {more} more refused entr{'y' if more == 1 else 'ies'})" if more else ""
        return where, f"{first.reason}{tail}"

    def problem(self, label: str | os.PathLike[str] | None = None) -> str | None:
        """One line naming the first refused entry (and how many more), or ``None``."""
        if self.ok:
            return None
        where, reason = self._first(label)
        return f"{where}: {reason}"

    def check(self, label: str | os.PathLike[str] | None = None) -> "Tree":
        """Raise :class:`UntrustedInputError` unless every entry was accepted."""
        if not self.ok:
            raise UntrustedInputError(*self._first(label))
        return self


def _size(n: float) -> str:
    return f"{n / MiB:.1f} MiB" if n >= MiB else f"{int(n)} bytes"


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "unknown type"


def scan_tree(root: str | os.PathLike[str], *, check_links: bool = True, max_entries: int = MAX_TREE_FILES,
              max_depth: int = MAX_TREE_DEPTH, max_file_bytes: int | None = MAX_FILE_BYTES,
              max_total_bytes: int | None = MAX_TREE_BYTES) -> Tree:
    """Walk ``root`` without following any link; see the module docstring for what is refused.

    ``check_links=False`` accepts files with extra hard links (for the project's own copies made
    with ``link=True``); ``max_file_bytes=None`` and ``max_total_bytes=None`` accept any size (for
    hashing, which streams). Files and folders both count towards ``max_entries``; the files
    accepted may hold ``max_total_bytes`` together (the first file past it is refused)."""
    tree = Tree(Path(root))
    st = _root_folder(root, tree)
    if st is None:
        return tree
    tree.root_id = (st.st_dev, st.st_ino)  # the walk lists this very folder or refuses the root (CHANGED)
    walk = _Walk(tree, max_entries, max_depth, max_file_bytes, max_total_bytes)
    # each folder is opened with O_NOFOLLOW and must be the very folder its parent listed (same
    # device and inode), so a folder swapped for a link during the walk is refused, not listed
    stack: list[tuple[str, tuple[str, ...], tuple[int, int]]] = [(os.fspath(root), (), (st.st_dev, st.st_ino))]
    while stack:
        folder, parts, expected = stack.pop()
        listed = walk.listing(folder, "/".join(parts), expected)
        if listed is None:
            if walk.entries > max_entries:
                break
            continue
        children = [walk.admit(folder, parts, name, est) for name, est in sorted(listed, key=_by_name)]
        stack.extend(reversed([child for child in children if child is not None]))  # depth-first, in name order
    if check_links:
        _drop_outside_links(tree)
    tree.files.sort(key=_by_parts)
    return tree


_by_name = itemgetter(0)  # a listing's (name, status) pairs in name order (names are unique in a folder)
_by_parts = attrgetter("parts")  # a tree's files in path order


def _root_folder(root: str | os.PathLike[str], tree: Tree) -> os.stat_result | None:
    """``root``'s own status when it is a real folder; else None, with the reason kept in ``tree``."""
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        tree.skip("", MISSING)
        return None
    except OSError as exc:
        tree.skip("", f"{UNREADABLE} ({exc.strerror or exc.__class__.__name__})")
        return None
    if stat.S_ISLNK(st.st_mode):
        tree.skip("", SYMLINK)
        return None
    if not stat.S_ISDIR(st.st_mode):
        tree.skip("", NOT_FOLDER)
        return None
    return st


class _Walk:
    """The running counts of one :func:`scan_tree` walk and its limits."""

    def __init__(self, tree: Tree, max_entries: int, max_depth: int, max_file_bytes: int | None,
                 max_total_bytes: int | None) -> None:
        self.tree, self.max_entries, self.max_depth = tree, max_entries, max_depth
        self.max_file_bytes, self.max_total_bytes = max_file_bytes, max_total_bytes
        self.entries = self.total = 0

    def listing(self, folder: str, rel_folder: str, expected: tuple[int, int]
                ) -> list[tuple[str, os.stat_result | OSError]] | None:
        """The entries of ``folder`` with their own (link) status; None when it cannot be listed, was
        swapped during the walk, or holds the entry past ``max_entries`` (the reason kept)."""
        listed: list[tuple[str, os.stat_result | OSError]] = []
        try:
            fd = os.open(folder, FOLDER_FLAGS)
        except OSError as exc:
            self.tree.skip(rel_folder, _open_reason(exc, folder))
            return None
        try:
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != expected:
                self.tree.skip(rel_folder, CHANGED)
                return None
            with os.scandir(fd) as it:
                for entry in it:
                    self.entries += 1
                    if self.entries > self.max_entries:
                        break
                    try:
                        listed.append((entry.name, entry.stat(follow_symlinks=False)))
                    except OSError as exc:
                        listed.append((entry.name, exc))
        except OSError as exc:
            self.tree.skip(rel_folder, f"{UNREADABLE} ({exc.strerror or exc.__class__.__name__})")
            return None
        finally:
            os.close(fd)
        if self.entries > self.max_entries:
            self.tree.skip(rel_folder, f"holds an entry that {TOO_MANY}")
            return None
        return listed

    def admit(self, folder: str, parts: tuple[str, ...], name: str, est: os.stat_result | OSError
              ) -> tuple[str, tuple[str, ...], tuple[int, int]] | None:
        """Keep entry ``name`` of ``folder`` in the tree or its reason for refusal; a sub-folder to
        walk comes back as (path, parts, (device, inode))."""
        problem = name_problem(name)
        if problem is not None:
            self._refuse(parts, name, f"{BAD_NAME} ({problem})")
            return None
        if isinstance(est, OSError):
            self._refuse(parts, name, f"{UNREADABLE} ({est.strerror or est.__class__.__name__})")
            return None
        mode = est.st_mode
        if stat.S_ISREG(mode):  # the common case first; an accepted entry needs no joined path
            size = est.st_size
            if self.max_file_bytes is not None and size > self.max_file_bytes:
                self._refuse(parts, name, f"{TOO_LARGE} ({_size(size)}; the limit is {_size(self.max_file_bytes)})")
            elif self.max_total_bytes is not None and self.total + size > self.max_total_bytes:
                self._refuse(parts, name, f"{TOO_LARGE} (with the files before it, the tree passes "
                                          f"{_size(self.max_total_bytes)}, the limit for one tree)")
            else:
                self.total += size
                self.tree.files.append(FileEntry(parts + (name,), size, est.st_dev, est.st_ino, est.st_nlink,
                                                 est.st_mtime_ns, est.st_ctime_ns))
        elif stat.S_ISDIR(mode):
            if len(parts) + 1 > self.max_depth:
                self._refuse(parts, name, TOO_DEEP)
            else:
                self.tree.folders.append(parts + (name,))
                return os.path.join(folder, name), parts + (name,), (est.st_dev, est.st_ino)
        elif stat.S_ISLNK(mode):
            self._refuse(parts, name, SYMLINK)
        else:
            self._refuse(parts, name, f"{SPECIAL} ({_special_kind(mode)})")
        return None

    def _refuse(self, parts: tuple[str, ...], name: str, reason: str) -> None:
        """Keep why entry ``name`` of the folder ``parts`` is refused (its path joined only then)."""
        self.tree.skip("/".join((*parts, name)), reason)


def _drop_outside_links(tree: Tree) -> None:
    """Refuse the files hard-linked from outside the tree (more links than the tree holds), but
    for the links a dataset's tasks share with their world's other tasks (``office_env.dataset_links``)."""
    seen = Counter((f.dev, f.ino) for f in tree.files)
    extra = [(f.parts, (f.dev, f.ino, f.nlink, f.ctime_ns)) for f in tree.files if f.nlink > seen[(f.dev, f.ino)]]
    if not extra:
        return
    shared = sibling_names(tree.root, extra)  # only a tree with extra links looks for its dataset
    outside = {f.parts for f in tree.files if f.nlink > max(seen[(f.dev, f.ino)], shared.get((f.dev, f.ino), 0))}
    if outside:
        refused = [f for f in tree.files if f.parts in outside]
        tree.files = [f for f in tree.files if f.parts not in outside]
        for entry in refused:
            tree.skip(entry.rel, OUTSIDE_LINK)


def tree_problem(root: str | os.PathLike[str], label: str | os.PathLike[str] | None = None, *,
                 optional: bool = False) -> str | None:
    """The one-line problem of the tree at ``root``, or ``None`` when every entry is accepted;
    ``optional=True`` accepts a root that does not exist (nothing there to refuse)."""
    tree = scan_tree(root)
    if optional and tree.skipped and tree.skipped[0] == Skipped("", MISSING):
        return None
    return tree.problem(label if label is not None else root)


# -- reading accepted files --------------------------------------------------------------------

class _Opener:
    """Opens a scanned tree's files relative to their opened parent folders (``O_NOFOLLOW`` at
    every step), keeping only the current chain of folders open."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.chain: list[int] = []
        self.names: tuple[str, ...] = ()

    def __enter__(self) -> "_Opener":
        try:
            self.chain = [os.open(self.tree.root, FOLDER_FLAGS)]
        except OSError as exc:
            raise UntrustedInputError(printable(self.tree.root), _open_reason(exc)) from None
        self.names = ()
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.chain:
            os.close(fd)
        self.chain = []

    def _folder(self, parts: tuple[str, ...]) -> int:
        common = 0
        while common < min(len(parts), len(self.names)) and parts[common] == self.names[common]:
            common += 1
        while len(self.chain) > common + 1:
            os.close(self.chain.pop())
        self.names = self.names[:common]
        for name in parts[common:]:
            try:
                fd = os.open(name, FOLDER_FLAGS, dir_fd=self.chain[-1])
            except OSError as exc:
                where = "/".join(self.names + (name,))
                raise UntrustedInputError(printable(self.tree.root / where),
                                          _open_reason(exc, name, self.chain[-1])) from None
            self.chain.append(fd)
            self.names = self.names + (name,)
        return self.chain[-1]

    def open(self, entry: FileEntry, *, check_links: bool = True) -> tuple[int, os.stat_result]:
        """An open descriptor of ``entry`` after proving it is the file the scan accepted."""
        parent = self._folder(entry.parts[:-1])
        try:
            fd = os.open(entry.parts[-1], READ_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise UntrustedInputError(printable(self.tree.root / entry.rel),
                                      _open_reason(exc, entry.parts[-1], parent)) from None
        st = os.fstat(fd)
        problem = None
        if not stat.S_ISREG(st.st_mode):
            problem = f"{SPECIAL} ({_special_kind(st.st_mode)})"
        elif (st.st_dev, st.st_ino) != (entry.dev, entry.ino):
            problem = CHANGED
        elif check_links and st.st_nlink > entry.nlink:
            problem = OUTSIDE_LINK
        elif check_links and st.st_nlink > 1 and st.st_ctime_ns != entry.ctime_ns:
            problem = CHANGED  # a shared file whose names changed since they were counted
        if problem:
            os.close(fd)
            raise UntrustedInputError(printable(self.tree.root / entry.rel), problem)
        return fd, st


def _open_reason(exc: OSError, name: str | None = None, dir_fd: int | None = None) -> str:
    """Why an open with ``O_NOFOLLOW`` failed, in the words of the scan."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and name is not None:
        try:
            if stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode):
                return SYMLINK
        except OSError:
            pass
    if exc.errno == errno.ELOOP:
        return SYMLINK
    if exc.errno == errno.ENOENT:
        return MISSING
    if exc.errno == errno.ENOTDIR:
        return f"{NOT_FOLDER} ({CHANGED})"
    return f"{UNREADABLE} ({exc.strerror or exc.__class__.__name__})"


def iter_files(tree: Tree, *, check_links: bool = True, skip_errors: bool = False
               ) -> Iterator[tuple[FileEntry, int]]:
    """Each accepted file of ``tree`` with an open descriptor (closed when the loop moves on).

    A file that changed since the scan raises :class:`UntrustedInputError`, or with
    ``skip_errors=True`` is left out."""
    with _Opener(tree) as opener:
        for entry in tree.files:
            try:
                fd, _ = opener.open(entry, check_links=check_links)
            except UntrustedInputError:
                if skip_errors:
                    continue
                raise
            try:
                yield entry, fd
            finally:
                os.close(fd)


def read_fd(fd: int, limit: int | None, label: str) -> bytes:
    """All bytes of an open file, refusing more than ``limit``."""
    data = read_upto(fd, limit)
    if data is None:
        # read_upto gives None only past a limit
        raise UntrustedInputError(label, f"{TOO_LARGE} (grew past {_size(cast(int, limit))} while being read)")
    return data


# -- copying ----------------------------------------------------------------------------------

def copy_tree(src: str | os.PathLike[str], dest: str | os.PathLike[str], *, link: bool = False,
              label: str | os.PathLike[str] | None = None, trusted: bool = False) -> Tree:
    """Copy the tree at ``src`` into ``dest`` (which must not exist) and return the scan.

    Raises :class:`UntrustedInputError` (naming the path) when any entry is refused, and leaves no
    ``dest`` behind. The copy holds fresh regular files and folders only. ``link=True`` hard-links
    each file instead (falling back to a copy), and is only for trees this project wrote itself:
    a link shares the file with its source, and the outside-hard-link check is off for them.
    ``trusted=True`` turns that check off for a plain copy of such a tree too (its files may be
    linked into scratch copies while it is copied)."""
    src_path, dest_path = Path(src), Path(dest)
    check_links = not (link or trusted)
    tree = scan_tree(src_path, check_links=check_links).check(label if label is not None else src_path)
    dest_path.parent.mkdir(parents=True, exist_ok=True)
    os.mkdir(dest_path)
    try:
        for parts in tree.folders:
            os.mkdir(os.path.join(dest_path, *parts))
        linked = _link_all(tree, dest_path) if link else set()
        rest = replace(tree, files=[e for e in tree.files if e.parts not in linked]) if linked else tree
        for entry, fd in iter_files(rest, check_links=check_links):
            target = dest_path.joinpath(*entry.parts)
            if link and _link(fd, entry, tree.root, target):
                continue
            _write_fresh(fd, target, tree.root / entry.rel)
    except BaseException:
        shutil.rmtree(dest_path, ignore_errors=True)
        raise
    return tree


def _link_all(tree: Tree, dest: Path) -> set[tuple[str, ...]]:
    """Hard-link every file of a tree this project wrote (the scan found each a regular file, not a
    link) without opening it; the parts of the files linked. The rest are copied one by one."""
    done = set()
    source, target = str(tree.root), str(dest)
    for entry in tree.files:
        rel = entry.rel
        try:
            os.link(f"{source}/{rel}", f"{target}/{rel}", follow_symlinks=False)
        except OSError:
            continue
        done.add(entry.parts)
    return done


def _link(fd: int, entry: FileEntry, root: Path, target: Path) -> bool:
    """Hard-link ``entry`` to ``target`` when the link provably is the opened file."""
    try:
        os.link(root.joinpath(*entry.parts), target, follow_symlinks=False)
    except OSError:
        return False
    st, made = os.fstat(fd), os.lstat(target)
    if stat.S_ISREG(made.st_mode) and (made.st_dev, made.st_ino) == (st.st_dev, st.st_ino):
        return True
    os.unlink(target)
    return False


def _write_fresh(fd: int, target: Path, source: Path) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    out = os.open(target, flags, 0o666)
    try:
        total = 0
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise UntrustedInputError(printable(source),
                                          f"{TOO_LARGE} (grew past {_size(MAX_FILE_BYTES)} while being copied)")
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view):]
    finally:
        os.close(out)


# -- JSON -------------------------------------------------------------------------------------

def open_regular(path: str | os.PathLike[str], label: str) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading without following a final symlink and without blocking on a
    FIFO; refuse anything but a regular file."""
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError as exc:
        raise UntrustedInputError(label, _open_reason(exc)) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        what = "a folder" if stat.S_ISDIR(st.st_mode) else f"a special file ({_special_kind(st.st_mode)})"
        raise UntrustedInputError(label, f"is {what}, not a regular file")
    return fd, st


def json_depth_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when lists and objects nest deeper than ``limit`` (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


JSON_STRING_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # one JSON string, its escapes included


def json_value_count(text: str, stop_above: int | None = None) -> int:
    """About how many values (lists, objects and their items) JSON ``text`` holds, without
    parsing it: separators and openers counted outside strings. Exact for valid JSON up to the
    scalars at the top level; bounded by the text's length for anything else. With
    ``stop_above``, counting stops at the first 1 MiB piece that takes it over that number (a
    partial count, still above it)."""
    flat = text.replace("\\\\", "").replace('\\"', "")  # no escape left: every quote opens or closes a string
    count, inside = 0, False
    for start in range(0, max(len(flat), 1), _COUNT_PIECE):
        parts = flat[start:start + _COUNT_PIECE].split('"')
        bare = "".join(parts[1::2] if inside else parts[0::2])
        count += bare.count(",") + bare.count("[") + bare.count("{")
        inside ^= len(parts) % 2 == 0  # an odd number of quotes in the piece flips the state
        if stop_above is not None and count > stop_above:
            break
    return count


_COUNT_PIECE = 2**20


def parse_json(text: str | bytes, label: str, *, max_bytes: int = MAX_JSON_BYTES,
               max_depth: int = MAX_JSON_DEPTH, max_values: int = MAX_JSON_VALUES) -> Any:
    """Parse JSON text from a stranger with the size, value-count and depth limits; one-line
    errors."""
    if len(text) > max_bytes:
        raise UntrustedInputError(label, f"{TOO_LARGE} ({_size(len(text))}; the limit for JSON is {_size(max_bytes)})")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise UntrustedInputError(label, "is not UTF-8 text") from None
    if len(text) > max_values and sum(map(text.count, ",[{")) > max_values:  # else it cannot hold more
        values = json_value_count(text, stop_above=max_values)
        if values > max_values:
            raise UntrustedInputError(label, f"{TOO_LARGE} (more than {max_values:,} lists, objects and items; the "
                                             f"limit is {max_values:,})")
    too_deep = UntrustedInputError(label, f"nested deeper than {max_depth} levels", kind="json")
    try:
        data = json.loads(text)
    except RecursionError:
        raise too_deep from None
    except json.JSONDecodeError as exc:
        raise UntrustedInputError(label, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                                  kind="json", line=exc.lineno, column=exc.colno, detail=exc.msg) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise UntrustedInputError(label, f"invalid JSON: {str(exc).splitlines()[0][:200]}", kind="json") from None
    if json_depth_exceeds(data, max_depth):
        raise too_deep
    return data


def load_json(path: str | os.PathLike[str], label: str | None = None, *, max_bytes: int = MAX_JSON_BYTES,
              max_depth: int = MAX_JSON_DEPTH, max_values: int = MAX_JSON_VALUES) -> Any:
    """Read one JSON file from a stranger: a regular file (not a symlink, FIFO or folder) of at
    most ``max_bytes``, UTF-8, nested at most ``max_depth`` levels. Raises
    :class:`UntrustedInputError` whose message is one line starting with ``label``."""
    label = printable(label if label is not None else path)
    fd, st = open_regular(path, label)
    try:
        if st.st_size > max_bytes:
            raise UntrustedInputError(label, f"{TOO_LARGE} ({_size(st.st_size)}; the limit for JSON is "
                                             f"{_size(max_bytes)})")
        data = read_fd(fd, max_bytes, label)
    finally:
        os.close(fd)
    return parse_json(data, label, max_bytes=max_bytes, max_depth=max_depth, max_values=max_values)


def entry_problem(path: str | os.PathLike[str], *, folder: bool) -> str | None:
    """Why the single entry at ``path`` is refused (a symlink, the wrong kind), or ``None``.

    A missing entry is not a problem here; callers decide whether it must exist."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{UNREADABLE} ({exc.strerror or exc.__class__.__name__})"
    if stat.S_ISLNK(st.st_mode):
        return SYMLINK
    if folder and not stat.S_ISDIR(st.st_mode):
        return NOT_FOLDER
    if not folder and not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    return None


def is_real_dir(path: str | os.PathLike[str]) -> bool:
    """A folder that is not a symlink."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def read_file(path: str | os.PathLike[str], label: str | None = None, *, max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """All bytes of one regular file from a stranger (not a symlink, FIFO, device or folder), of at
    most ``max_bytes``: the size is checked before reading, and reading stops past it."""
    label = printable(label if label is not None else path)
    fd, st = open_regular(path, label)
    try:
        if st.st_size > max_bytes:
            raise UntrustedInputError(label, f"{TOO_LARGE} ({_size(st.st_size)}; the limit is {_size(max_bytes)})")
        return read_fd(fd, max_bytes, label)
    finally:
        os.close(fd)


def output_folder_problem(path: str | os.PathLike[str]) -> str | None:
    """Why a folder to write into is refused: a symlink (writing through it would put files
    wherever it points) or not a folder; ``None`` when it is a real folder or absent."""
    return entry_problem(path, folder=True)


SQLITE_HEADER = b"SQLite format 3\x00"


# The SQLite files this process has checked (and so may have open): (pid, absolute path).
_SQLITE_CHECKED: set[tuple[int, str]] = set()


def sqlite_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be opened as an SQLite file of ours: a symlink, not a regular file, or
    not an SQLite database; its journal files (``-wal``, ``-shm``, ``-journal``) must not be links
    either, since SQLite writes through them. ``None`` when it is absent, empty or a database.

    The header is read once a process: closing any descriptor of a file drops every POSIX lock the
    process holds on it, SQLite's included, so reading it again while a connection of this process
    has it open would let another process checkpoint and remove the write-ahead log that connection
    still writes to (acknowledged writes lost). Later checks look at the entries only (no open)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        problem = entry_problem(f"{os.fspath(path)}{suffix}", folder=False)
        if problem is not None:
            return problem if not suffix else f"its {suffix[1:]} file {problem}"
    key = (os.getpid(), os.path.abspath(path))
    if key in _SQLITE_CHECKED:
        return None
    if os.path.lexists(path):
        try:
            fd, st = open_regular(path, printable(path))
        except UntrustedInputError as exc:
            return exc.reason
        try:
            head = os.read(fd, len(SQLITE_HEADER)) if st.st_size else SQLITE_HEADER
        finally:
            os.close(fd)
        if head != SQLITE_HEADER:
            return "is not an SQLite database"
    _SQLITE_CHECKED.add(key)  # from now on this process may open it: its header is not read again
    return None
