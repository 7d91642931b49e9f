"""The injectable clocks of the driver and the client (C API: aa_driver_context_set_clock,
aa_client_connect_with_clock, and the test clock aa_test_clock_*): their timers fire when a test
moves the clock, long before the same timeout could pass in real time."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

import aeron_async
from aeron_async._ffi import ffi, lib
from aeron_async.context import DriverContext
from aeron_async.errors import check
from conftest import TEST_DRIVER_SETTINGS, wait_for

# Timeouts far longer than any wait of these tests: only a moved clock can reach them.
LONG_TIMEOUT_S = 60.0
SETTINGS = {**TEST_DRIVER_SETTINGS, "client_liveness_timeout": LONG_TIMEOUT_S}


@pytest.fixture
def moving_clock() -> Iterator[Any]:
    # epoch time starts at the system's: the other side of each test reads the system clock
    clock = lib.aa_test_clock_new(1_000_000_000, int(time.time() * 1000))
    assert clock != ffi.NULL
    yield clock
    lib.aa_test_clock_free(clock)


def clock_functions() -> tuple[Any, Any]:
    return ffi.addressof(lib, "aa_test_clock_nano_time"), ffi.addressof(lib, "aa_test_clock_epoch_time")


@pytest.fixture
def clocked_driver(aeron_dir: str, moving_clock: Any) -> Iterator[Any]:
    ctx = DriverContext(aeron_dir=aeron_dir, **SETTINGS)._to_native()
    try:
        nano_time, epoch_time = clock_functions()
        check(lib.aa_driver_context_set_clock(ctx, nano_time, epoch_time, moving_clock))
        out = ffi.new("aa_driver_t **")
        check(lib.aa_driver_launch(out, ctx))
    finally:
        lib.aa_driver_context_free(ctx)
    yield out[0]
    lib.aa_driver_close(out[0])


def driver_heartbeat_age_ms(aeron_dir: str) -> int:
    age = ffi.new("int64_t *")
    pid = ffi.new("int64_t *")
    lib.aa_driver_is_active(aeron_dir.encode(), 60_000, age, pid)
    return int(age[0])


def test_driver_times_out_a_client_when_its_clock_moves_past_the_liveness_timeout(
    aeron_dir: str, clocked_driver: Any, moving_clock: Any
) -> None:
    with aeron_async.Aeron.connect(aeron_dir, driver_timeout=LONG_TIMEOUT_S) as client:
        client.add_publication("aeron:ipc", 1001)

        def state() -> int:
            return int(lib.aa_client_state(client._ptr))

        # just short of the timeout: the driver runs at the moved time (its heartbeat, written
        # with its clock, is far ahead of the system's), and the client is alive
        lib.aa_test_clock_advance(moving_clock, int((LONG_TIMEOUT_S - 1.0) * 1e9))
        wait_for(lambda: driver_heartbeat_age_ms(aeron_dir) < -30_000, timeout=5.0, what="the driver to read the moved clock")
        assert state() == lib.AA_CLIENT_STATE_ACTIVE

        lib.aa_test_clock_advance(moving_clock, int(2.0 * 1e9))
        wait_for(lambda: state() == lib.AA_CLIENT_STATE_CLIENT_TIMEOUT, timeout=5.0, what="the client timeout")
        with pytest.raises(aeron_async.ClientTimeoutError):
            _ = client.client_id


def test_client_declares_the_driver_lost_when_its_clock_moves_past_the_driver_timeout(
    aeron_dir: str, moving_clock: Any
) -> None:
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **SETTINGS):
        out = ffi.new("aa_client_t **")
        nano_time, epoch_time = clock_functions()
        timeout_ms = int(LONG_TIMEOUT_S * 1000)
        check(lib.aa_client_connect_with_clock(
            out, aeron_dir.encode(), timeout_ms, False, ffi.NULL, nano_time, epoch_time, moving_clock))
        try:
            assert lib.aa_client_state(out[0]) == lib.AA_CLIENT_STATE_ACTIVE
            lib.aa_test_clock_advance(moving_clock, int((LONG_TIMEOUT_S + 1.0) * 1e9))
            wait_for(
                lambda: lib.aa_client_state(out[0]) == lib.AA_CLIENT_STATE_DRIVER_TIMEOUT,
                timeout=5.0,
                what="the driver timeout",
            )
            assert b"has not answered" in ffi.string(lib.aa_client_state_message(out[0]))
        finally:
            lib.aa_client_close(out[0])


def test_a_clock_needs_both_functions() -> None:
    ctx = lib.aa_driver_context_new()
    try:
        nano_time, _ = clock_functions()
        assert lib.aa_driver_context_set_clock(ctx, nano_time, ffi.NULL, ffi.NULL) == -1
        assert b"give both nano_time and epoch_time" in ffi.string(lib.aa_errmsg())
        assert lib.aa_driver_context_set_clock(ctx, ffi.NULL, ffi.NULL, ffi.NULL) == 0
    finally:
        lib.aa_driver_context_free(ctx)
