"""The aeron directory and its files (docs/security.md, "Files"): owner only whatever the umask
(every kind of file the driver creates), a directory another user owns or may write refused with
its owner, its mode and the fix, no symbolic link followed, and AERON_DIR_GROUP sharing the driver
with the clients of another user in that group."""

from __future__ import annotations

import os
from typing import Any

import pytest

import aeron_async
from aeron_async.errors import ConfigurationError
from conftest import TESTS, TEST_DRIVER_SETTINGS, UDP_SETTINGS, free_udp_port, python_env, stream_one, udp_channel
from support.users import NOBODY, modes, python_for_others, run_as_nobody, temporary_group, umask

# what a driver creates, each kind once: its directories, the CnC, the lock, the options file, the
# loss report, the name resolutions table, a publication's log and a network image's log
DIRS = (".", "publications", "images")
FILES = ("cnc.dat", "driver.lock", "driver-options.properties", "loss-report.dat", "name-resolutions.dat")


def created(aeron_dir: str, settings: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """The modes of a fresh driver's directory once an IPC and a UDP stream ran through it."""
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **settings), \
            aeron_async.Aeron.connect(aeron_dir, driver_timeout=5.0) as client:
        stream_one(client, "aeron:ipc", "aeron:ipc", 1001, b"ipc")
        channel = udp_channel(free_udp_port())
        stream_one(client, channel, channel, 1002, b"udp")
        found = modes(aeron_dir)
    logs = {kind: [p for p in found if p.startswith(kind + os.sep) and p.endswith(".logbuffer")]
            for kind in ("publications", "images")}
    assert logs["publications"] and logs["images"], sorted(found)
    for name in (*DIRS, *FILES, logs["publications"][0], logs["images"][0]):
        assert name in found, (name, sorted(found))
    return found


@pytest.mark.parametrize("mask", [0o022, 0o000], ids=["umask-022", "umask-000"])
def test_a_fresh_aeron_dir_is_the_owner_s_only_whatever_the_umask(aeron_dir: str, mask: int) -> None:
    with umask(mask):
        found = created(aeron_dir, UDP_SETTINGS)
    me = os.geteuid()
    for path, (mode, uid, _) in found.items():
        expected = 0o700 if path in DIRS else 0o600
        assert (oct(mode), uid) == (oct(expected), me), path


def test_a_squatted_aeron_dir_is_refused_and_left_alone(aeron_dir: str) -> None:
    os.mkdir(aeron_dir)
    planted = os.path.join(aeron_dir, "cnc.dat")
    with open(planted, "w") as f:
        f.write("the squatter's")
    os.chown(planted, NOBODY.pw_uid, NOBODY.pw_gid)
    os.chown(aeron_dir, NOBODY.pw_uid, NOBODY.pw_gid)
    os.chmod(aeron_dir, 0o777)
    with pytest.raises(ConfigurationError) as refused:
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS)
    message = str(refused.value)
    for part in (aeron_dir, f"owned by nobody (uid {NOBODY.pw_uid})", "mode 0777", "remove it, or `chown root`",
                 "`chmod 0700`", "choose another aeron.dir (AERON_DIR)"):
        assert part in message, message
    st = os.stat(aeron_dir)
    assert (st.st_uid, st.st_mode & 0o7777) == (NOBODY.pw_uid, 0o777)
    with open(planted) as f:
        assert f.read() == "the squatter's"

    # ours but writable by others: refused too, and the fix it names works
    os.remove(planted)
    os.chown(aeron_dir, os.geteuid(), os.getegid())
    with pytest.raises(ConfigurationError) as refused:
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS)
    assert "mode 0777 lets its group or others write it" in str(refused.value), str(refused.value)
    assert "`chmod 0700` it" in str(refused.value)
    os.chmod(aeron_dir, 0o700)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS) as driver:
        assert driver.aeron_dir == aeron_dir


def test_a_planted_symbolic_link_is_not_followed(aeron_dir: str, tmp_path: Any) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("kept")
    # the aeron directory itself a link to a directory of the driver's user: the driver would empty it
    os.symlink(victim, aeron_dir)
    try:
        with pytest.raises(ConfigurationError) as refused:
            aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS)
        assert f"refusing the directory {aeron_dir}: it is a symbolic link" in str(refused.value), str(refused.value)
        assert sorted(os.listdir(victim)) == ["precious"] and (victim / "precious").read_text() == "kept"
    finally:
        os.remove(aeron_dir)

    # a link where the driver creates its lock file: not created through it
    os.mkdir(aeron_dir, 0o700)
    target = victim / "through-the-link"
    os.symlink(target, os.path.join(aeron_dir, "driver.lock"))
    with pytest.raises(ConfigurationError) as refused:
        aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS)
    assert "symbolic link, which is not followed" in str(refused.value), str(refused.value)
    assert not target.exists()


def test_a_group_shares_the_driver_with_another_user_s_clients(aeron_dir: str) -> None:
    env = python_env()
    env["PYTHONPATH"] = TESTS + os.pathsep + env["PYTHONPATH"]
    client = [*python_for_others(env), os.path.join(TESTS, "support", "procs", "files_client.py"), aeron_dir]
    with temporary_group() as (group, gid), umask(0o022):
        found = created(aeron_dir, dict(UDP_SETTINGS, dir_group=group))
        for path, (mode, _, path_gid) in found.items():
            if path == "driver.lock":
                assert oct(mode) == oct(0o600), path   # launchers of the driver's user take turns on it
                continue
            if path in DIRS:
                expected = 0o2750   # the group reads and traverses; only the driver creates and removes
            elif path == "cnc.dat" or path.endswith(".logbuffer"):
                expected = 0o660    # clients write the to-driver buffer, their counters and publications
            else:
                expected = 0o640    # the options, the loss report and the resolutions: read only
            assert (oct(mode), path_gid) == (oct(expected), gid), path

        with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, dir_group=str(gid), **UDP_SETTINGS):
            # a launcher without the option that finds this driver alive changes nothing in its directory
            assert aeron_async.MediaDriver.launch_unless_running(aeron_dir=aeron_dir, **UDP_SETTINGS) is None
            assert oct(os.stat(aeron_dir).st_mode & 0o7777) == oct(0o2750)
            shared = run_as_nobody([*client, str(free_udp_port()), "50"], [gid], env)
            assert shared.returncode == 0 and shared.stdout.split() == ["ok", str(NOBODY.pw_uid), "50", "50"], \
                shared.stdout + shared.stderr
            alone = run_as_nobody([*client, str(free_udp_port()), "50"], [], env)
            assert alone.returncode != 0 and "no access to the media driver" in alone.stderr and "AERON_DIR_GROUP" in alone.stderr, \
                alone.stdout + alone.stderr
