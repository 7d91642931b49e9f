"""Other users for the file security tests (docs/security.md, "Files"): `nobody`, a temporary group
(groupadd, removed afterwards), a process run as another uid in chosen groups, and the modes of
everything under a directory."""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shutil
import site
import stat
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence

NOBODY = pwd.getpwnam("nobody")


@contextlib.contextmanager
def temporary_group() -> Iterator[tuple[str, int]]:
    """A new group (name, gid), deleted afterwards."""
    name = f"aa-test-{uuid.uuid4().hex[:8]}"
    subprocess.run(["groupadd", name], check=True, capture_output=True, timeout=30)
    try:
        yield name, grp.getgrnam(name).gr_gid
    finally:
        subprocess.run(["groupdel", name], check=False, capture_output=True, timeout=30)


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def as_user(uid: int, gid: int, groups: Sequence[int]) -> Callable[[], None]:
    """A preexec_fn that runs the child as uid, with primary group gid and supplementary groups."""
    def switch() -> None:
        os.setgroups(list(groups))
        os.setgid(gid)
        os.setuid(uid)
    return switch


def run_as_nobody(argv: Sequence[str], groups: Sequence[int], env: dict[str, str],
                  timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """argv as `nobody` (its own primary group) with the supplementary groups given; output as text."""
    return subprocess.run(list(argv), env=env, cwd="/", capture_output=True, text=True, timeout=timeout,
                          preexec_fn=as_user(NOBODY.pw_uid, NOBODY.pw_gid, groups))


def _others_reach(path: str) -> bool:
    """Whether every directory above path lets others through and path lets them read (and run) it."""
    path = os.path.realpath(path)
    parts = path.split(os.sep)
    for i in range(2, len(parts)):
        if not os.stat(os.sep.join(parts[:i])).st_mode & stat.S_IXOTH:
            return False
    return bool(os.stat(path).st_mode & stat.S_IROTH)


def python_for_others(env: dict[str, str]) -> list[str]:
    """An interpreter another user can run with this one's packages (env's PYTHONPATH gains the
    site-packages): this one, or the system's of the same version when this one's installation is
    private (a pyenv under /root)."""
    candidates = [sys.executable, shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}",
                                               path="/usr/local/bin:/usr/bin") or ""]
    for candidate in candidates:
        if candidate and _others_reach(candidate) and (candidate != sys.executable or _others_reach(sys.base_prefix)):
            env["PYTHONPATH"] = os.pathsep.join([env.get("PYTHONPATH", ""), *site.getsitepackages()])
            return [candidate]
    raise AssertionError(f"no Python {sys.version_info.major}.{sys.version_info.minor} that another user may run "
                         f"({sys.executable} is private to its owner)")


def modes(root: str) -> dict[str, tuple[int, int, int]]:
    """Every entry under root (root itself as "."), not following links: (mode bits, uid, gid)."""
    out = {}
    for directory, dirs, files in os.walk(root):
        for name in [".", *dirs, *files] if directory == root else [*dirs, *files]:
            path = os.path.normpath(os.path.join(directory, name))
            st = os.lstat(path)
            out[os.path.relpath(path, root)] = (st.st_mode & 0o7777, st.st_uid, st.st_gid)
    return out
