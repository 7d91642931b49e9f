"""The archive directory and its files (docs/security.md, "Files"): owner only whatever the umask
(the catalog, the mark file, segment files, and what `aeron-async recordings migrate` creates), a
directory another user owns refused with its owner, its mode and the fix, a planted link not
followed, and AERON_ARCHIVE_DIR_GROUP letting another user of that group read the recordings."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

import aeron_async
from aeron_async.archive import AeronArchive, RecordingSignal
from aeron_async.cli import main
from aeron_async.errors import ConfigurationError
from conftest import REPO, new_aeron_dir, python_env
from support.archive_e2e import Stream, archive_beside_driver, record, wait_recorded
from support.users import NOBODY, modes, python_for_others, run_as_nobody, temporary_group, umask

CHANNEL = "aeron:ipc?term-length=64k"


@pytest.fixture
def aeron_dir() -> Iterator[str]:
    path = new_aeron_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def record_one(aeron_dir: str, archive_dir: str, **overrides: Any) -> int:
    """One stopped recording of a short stream in archive_dir (the archive then closed): its id."""
    with archive_beside_driver(aeron_dir, archive_dir, **overrides) as service, \
            aeron_async.Aeron.connect(service.aeron_dir) as client, AeronArchive.connect(client) as archive:
        publication = client.add_exclusive_publication(CHANNEL, 7001)
        subscription_id, recording_id = record(archive, CHANNEL, 7001)
        wait_recorded(archive, recording_id, Stream(300, seed=7).publish(publication))
        archive.stop_recording(subscription_id=subscription_id)
        archive.wait_for_signal(RecordingSignal.STOP, recording_id=recording_id)
        return recording_id


def kinds(found: dict[str, tuple[int, int, int]]) -> dict[str, tuple[int, int, int]]:
    """The entry of each kind: the directory, the catalog, the mark file (when there), a segment file."""
    segments = sorted(p for p in found if p.endswith(".rec"))
    assert segments, sorted(found)
    wanted = [".", "archive.catalog", segments[0]] + (["archive-mark.dat"] if "archive-mark.dat" in found else [])
    return {name: found[name] for name in wanted}


def test_a_fresh_archive_dir_is_the_owner_s_only_whatever_the_umask(
        aeron_dir: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    archive_dir = str(tmp_path / "new" / "archive")
    with umask(0o022):
        recording_id = record_one(aeron_dir, archive_dir)
        destination = str(tmp_path / "copies" / "archive")
        assert main(["recordings", "migrate", "--archive-dir", archive_dir, destination, str(recording_id)]) == 0, \
            capsys.readouterr()
    me = os.geteuid()
    for root in (archive_dir, destination):
        found = kinds(modes(root))
        assert "archive-mark.dat" in found or root == destination
        for path, (mode, uid, _) in found.items():
            assert (oct(mode), uid) == (oct(0o700 if path == "." else 0o600), me), (root, path)
        parent = os.stat(os.path.dirname(root))
        assert oct(parent.st_mode & 0o7777) == oct(0o700), f"{os.path.dirname(root)}, created with it"


def test_a_squatted_archive_dir_is_refused_and_left_alone(aeron_dir: str, tmp_path: Any) -> None:
    archive_dir = str(tmp_path / "archive")
    os.mkdir(archive_dir)
    os.chown(archive_dir, NOBODY.pw_uid, NOBODY.pw_gid)
    os.chmod(archive_dir, 0o777)
    with pytest.raises(ConfigurationError) as refused:
        record_one(aeron_dir, archive_dir)
    message = str(refused.value)
    for part in (archive_dir, f"owned by nobody (uid {NOBODY.pw_uid})", "mode 0777", "`chown root`",
                 "choose another aeron.archive.dir (AERON_ARCHIVE_DIR)"):
        assert part in message, message
    assert os.listdir(archive_dir) == []
    st = os.stat(archive_dir)
    assert (st.st_uid, st.st_mode & 0o7777) == (NOBODY.pw_uid, 0o777)


def test_a_planted_link_to_the_mark_file_is_not_followed(aeron_dir: str, tmp_path: Any) -> None:
    archive_dir = tmp_path / "archive"
    archive_dir.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("kept")
    os.symlink(victim, archive_dir / "archive-mark.dat")
    with pytest.raises(ConfigurationError) as refused:
        record_one(aeron_dir, str(archive_dir))
    assert "symbolic link, which is not followed" in str(refused.value), str(refused.value)
    assert victim.read_text() == "kept"


@pytest.fixture
def reachable_dir() -> Iterator[str]:
    """A directory under /tmp that other users may pass through (pytest's tmp_path is its owner's only)."""
    path = tempfile.mkdtemp(prefix="aa-archive-files-")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_group_reads_the_recordings_of_another_user(aeron_dir: str, reachable_dir: str) -> None:
    archive_dir = os.path.join(reachable_dir, "archive")
    env = python_env()
    tool = [*python_for_others(env), "-m", "aeron_async", "recordings", "list", "--archive-dir", archive_dir]
    env["PYTHONPATH"] = REPO + os.pathsep + env["PYTHONPATH"]
    with temporary_group() as (group, gid), umask(0o022):
        recording_id = record_one(aeron_dir, archive_dir, dir_group=group)
        found = kinds(modes(archive_dir))
        assert "archive-mark.dat" in found
        for path, (mode, _, path_gid) in found.items():
            assert (oct(mode), path_gid) == (oct(0o2750 if path == "." else 0o640), gid), path
        member = run_as_nobody(tool, [gid], env)
        assert member.returncode == 0, member.stdout + member.stderr
        rows = [line.split() for line in member.stdout.splitlines()[1:]]
        assert [(int(r[0]), r[1]) for r in rows] == [(recording_id, "VALID")], member.stdout
        stranger = run_as_nobody(tool, [], env)
        assert stranger.returncode != 0 and "no access to the archive directory" in stranger.stderr and \
            "AERON_ARCHIVE_DIR_GROUP" in stranger.stderr, \
            stranger.stdout + stranger.stderr
