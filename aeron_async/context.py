"""Driver configuration: `DriverContext` mirrors the native option table one-to-one.

Every field has an environment variable (`AERON_<FIELD>`, shown in `env`) and a default; a field
left at `None` takes the environment variable if set, else the driver default. The defaults follow
Aeron's C driver (reference section 11); `aeron-async driver --help-options` and
docs/configuration.md list them.

Sizes accept ints or strings with k/m/g suffixes ("64k", "16m"); durations accept seconds as
int/float or strings with ns/us/ms/s ("500ms", "10s").
"""

from __future__ import annotations

from typing import Any

import attrs

from ._ffi import ffi, lib
from .errors import ConfigurationError, check

Size = int | str
Duration = float | int | str


def _field(env: str, default_doc: str, doc: str) -> Any:
    return attrs.field(default=None, kw_only=True, metadata={"env": env, "default": default_doc, "doc": doc})


@attrs.define(slots=True)
class DriverContext:
    """Settings of a media driver. Unset fields use `AERON_*` environment variables, then defaults."""

    aeron_dir: str | None = _field("AERON_DIR", "/dev/shm/aeron-<user>", "directory of the CnC file and log buffers")
    dir_delete_on_start: bool | None = _field("AERON_DIR_DELETE_ON_START", "false", "delete the directory on start even if a driver there looks alive")
    dir_delete_on_shutdown: bool | None = _field("AERON_DIR_DELETE_ON_SHUTDOWN", "false", "delete the directory when the driver closes")
    threading_mode: str | None = _field("AERON_THREADING_MODE", "DEDICATED", "DEDICATED, SHARED_NETWORK, SHARED or INVOKER")
    conductor_idle_strategy: str | None = _field("AERON_CONDUCTOR_IDLE_STRATEGY", "backoff", "idle strategy of the conductor")
    sender_idle_strategy: str | None = _field("AERON_SENDER_IDLE_STRATEGY", "backoff", "idle strategy of the sender")
    receiver_idle_strategy: str | None = _field("AERON_RECEIVER_IDLE_STRATEGY", "backoff", "idle strategy of the receiver")
    sharednetwork_idle_strategy: str | None = _field("AERON_SHAREDNETWORK_IDLE_STRATEGY", "backoff", "idle strategy of the sender+receiver thread")
    shared_idle_strategy: str | None = _field("AERON_SHARED_IDLE_STRATEGY", "backoff", "idle strategy of the single driver thread (SHARED, INVOKER)")
    term_buffer_length: Size | None = _field("AERON_TERM_BUFFER_LENGTH", "16m", "term length of network publications")
    ipc_term_buffer_length: Size | None = _field("AERON_IPC_TERM_BUFFER_LENGTH", "64m", "term length of IPC publications")
    term_buffer_sparse_file: bool | None = _field("AERON_TERM_BUFFER_SPARSE_FILE", "false", "create log buffers as sparse files")
    mtu_length: Size | None = _field("AERON_MTU_LENGTH", "1408", "max datagram length of network publications")
    ipc_mtu_length: Size | None = _field("AERON_IPC_MTU_LENGTH", "1408", "max frame length of IPC publications")
    publication_term_window_length: Size | None = _field("AERON_PUBLICATION_TERM_WINDOW_LENGTH", "0 (term/2)", "how far a network publisher may run ahead")
    ipc_publication_term_window_length: Size | None = _field("AERON_IPC_PUBLICATION_TERM_WINDOW_LENGTH", "0 (term/2)", "how far an IPC publisher may run ahead")
    file_page_size: Size | None = _field("AERON_FILE_PAGE_SIZE", "4k", "page size log buffers are aligned to")
    perform_storage_checks: bool | None = _field("AERON_PERFORM_STORAGE_CHECKS", "true", "check free space before creating a log buffer")
    low_file_store_warning_threshold: Size | None = _field("AERON_LOW_FILE_STORE_WARNING_THRESHOLD", "160m", "free space below which a warning is logged")
    conductor_buffer_length: Size | None = _field("AERON_CONDUCTOR_BUFFER_LENGTH", "1m + 768", "to-driver ring buffer length")
    clients_buffer_length: Size | None = _field("AERON_CLIENTS_BUFFER_LENGTH", "1m + 128", "to-clients broadcast buffer length")
    counters_buffer_length: Size | None = _field("AERON_COUNTERS_BUFFER_LENGTH", "1m", "counter values buffer length (metadata is 4x)")
    error_buffer_length: Size | None = _field("AERON_ERROR_BUFFER_LENGTH", "1m", "distinct error log length")
    client_liveness_timeout: Duration | None = _field("AERON_CLIENT_LIVENESS_TIMEOUT", "10s", "clients silent this long are timed out")
    publication_linger_timeout: Duration | None = _field("AERON_PUBLICATION_LINGER_TIMEOUT", "5s", "linger of a drained publication")
    publication_unblock_timeout: Duration | None = _field("AERON_PUBLICATION_UNBLOCK_TIMEOUT", "15s", "unblock a publication whose writer died mid-claim")
    publication_connection_timeout: Duration | None = _field("AERON_PUBLICATION_CONNECTION_TIMEOUT", "5s", "network publication connection timeout")
    image_liveness_timeout: Duration | None = _field("AERON_IMAGE_LIVENESS_TIMEOUT", "10s", "images without traffic this long are removed")
    timer_interval: Duration | None = _field("AERON_TIMER_INTERVAL", "1s", "interval of the conductor's resource checks")
    counters_free_to_reuse_timeout: Duration | None = _field("AERON_COUNTERS_FREE_TO_REUSE_TIMEOUT", "1s", "freed counter ids are reused after this")
    untethered_window_limit_timeout: Duration | None = _field("AERON_UNTETHERED_WINDOW_LIMIT_TIMEOUT", "5s", "untethered subscribers behind this long are dropped")
    untethered_resting_timeout: Duration | None = _field("AERON_UNTETHERED_RESTING_TIMEOUT", "10s", "dropped untethered subscribers rejoin after this")
    mdc_destination_timeout: Duration | None = _field("AERON_MDC_DESTINATION_TIMEOUT", "5s", "dynamic multi-destination-cast destinations without a status message this long are dropped")
    driver_timeout: Duration | None = _field("AERON_DRIVER_TIMEOUT", "10s", "a driver whose heartbeat is older is considered dead (one that closed or whose process is gone: at once)")
    tether_subscriptions: bool | None = _field("AERON_TETHER_SUBSCRIPTIONS", "true", "IPC and spy subscriptions hold publishers back unless tether=false (network ones always do)")
    rejoin_stream: bool | None = _field("AERON_REJOIN_STREAM", "true", "dropped subscribers may rejoin")
    reliable_stream: bool | None = _field("AERON_RELIABLE_STREAM", "true", "recover loss by NAK")
    spies_simulate_connection: bool | None = _field("AERON_SPIES_SIMULATE_CONNECTION", "false", "spies count as a connection")
    publication_reserved_session_id_low: int | None = _field("AERON_PUBLICATION_RESERVED_SESSION_ID_LOW", "-1", "low end of reserved session ids")
    publication_reserved_session_id_high: int | None = _field("AERON_PUBLICATION_RESERVED_SESSION_ID_HIGH", "1000", "high end of reserved session ids")
    conductor_cycle_threshold: Duration | None = _field("AERON_CONDUCTOR_CYCLE_THRESHOLD", "1s", "conductor cycles longer than this are counted")
    sender_cycle_threshold: Duration | None = _field("AERON_SENDER_CYCLE_THRESHOLD", "1s", "sender cycles longer than this are counted")
    receiver_cycle_threshold: Duration | None = _field("AERON_RECEIVER_CYCLE_THRESHOLD", "1s", "receiver cycles longer than this are counted")
    rcv_status_message_timeout: Duration | None = _field("AERON_RCV_STATUS_MESSAGE_TIMEOUT", "200ms", "a receiver sends a status message at least this often")
    rcv_initial_window_length: Size | None = _field("AERON_RCV_INITIAL_WINDOW_LENGTH", "128k", "receiver window of UDP images (rcv-wnd= per channel)")
    nak_unicast_delay: Duration | None = _field("AERON_NAK_UNICAST_DELAY", "100us", "delay before a receiver NAKs a gap (nak-delay= per channel)")
    nak_unicast_retry_delay_ratio: int | None = _field("AERON_NAK_UNICAST_RETRY_DELAY_RATIO", "100", "a gap still open is NAKed again after delay x ratio")
    retransmit_unicast_delay: Duration | None = _field("AERON_RETRANSMIT_UNICAST_DELAY", "0", "delay before a sender resends what a NAK asked for")
    retransmit_unicast_linger: Duration | None = _field("AERON_RETRANSMIT_UNICAST_LINGER", "10ms", "a sender ignores NAKs for a range it just resent this long")
    send_to_status_poll_ratio: int | None = _field("AERON_SEND_TO_STATUS_POLL_RATIO", "6", "a busy sender reads control frames every this many cycles")
    cubiccongestioncontrol_measurertt: bool | None = _field("AERON_CUBICCONGESTIONCONTROL_MEASURERTT", "false", "cc=cubic images measure the RTT (cc=cubic,measure-rtt:true per channel)")
    cubiccongestioncontrol_initialrtt: Duration | None = _field("AERON_CUBICCONGESTIONCONTROL_INITIALRTT", "100us", "RTT cc=cubic assumes until one is measured (initial-rtt: per channel)")
    cubiccongestioncontrol_tcpmode: bool | None = _field("AERON_CUBICCONGESTIONCONTROL_TCPMODE", "false", "cc=cubic grows at least as fast as TCP below the last window (tcp-mode: per channel)")
    nak_multicast_max_backoff: Duration | None = _field("AERON_NAK_MULTICAST_MAX_BACKOFF", "10ms", "group images NAK after a random delay below this (reference 4.3)")
    nak_multicast_group_size: int | None = _field("AERON_NAK_MULTICAST_GROUP_SIZE", "10", "receivers the random multicast NAK delay is shaped for")
    max_resend: int | None = _field("AERON_MAX_RESEND", "16", "retransmissions a multicast publication runs at once, 1 to 256 (max-resend= per channel)")
    multicast_flow_control_strategy: str | None = _field("AERON_MULTICAST_FLOW_CONTROL_STRATEGY", "max", "flow control of multicast publications without fc=, by registered name")
    socket_so_rcvbuf: Size | None = _field("AERON_SOCKET_SO_RCVBUF", "128k", "UDP receive socket buffer (0 = OS default); so-rcvbuf= per channel")
    socket_so_sndbuf: Size | None = _field("AERON_SOCKET_SO_SNDBUF", "0", "UDP send socket buffer (0 = OS default); so-sndbuf= per channel")
    socket_multicast_ttl: int | None = _field("AERON_SOCKET_MULTICAST_TTL", "0", "multicast TTL (0 = OS default); ttl= per channel")
    name_resolver_supplier: str | None = _field("AERON_NAME_RESOLVER_SUPPLIER", "default", "name resolver of host names in UDP channels, by registered name (aeron_async.strategies)")
    name_resolver_init_args: str | None = _field("AERON_NAME_RESOLVER_INIT_ARGS", "", "arguments of the name resolver (the default takes none)")
    unicast_flow_control_strategy: str | None = _field("AERON_UNICAST_FLOW_CONTROL_STRATEGY", "unicast", "flow control of unicast publications without fc=, a registered name with options (e.g. 'min,t:2s')")
    flow_control_receiver_timeout: Duration | None = _field("AERON_FLOW_CONTROL_RECEIVER_TIMEOUT", "5s", "min/tagged flow control drop a receiver silent this long (t: per channel)")
    flow_control_group_min_size: int | None = _field("AERON_FLOW_CONTROL_GROUP_MIN_SIZE", "0", "min/tagged: receivers needed before a publication is connected (g:/N per channel)")
    flow_control_group_tag: int | None = _field("AERON_FLOW_CONTROL_GROUP_TAG", "-1", "tagged flow control tracks receivers sending this tag (g:<tag> per channel)")
    receiver_group_tag: int | None = _field("AERON_RECEIVER_GROUP_TAG", "", "group tag this driver's receivers send in status messages (gtag= per subscription; empty = none)")
    udp_receive_loss: str | None = _field("AERON_UDP_RECEIVE_LOSS", "", "loss generator rules on receive, e.g. 'drop:data:5%,dup:any:1%' (docs/loss-generator.md)")
    udp_send_loss: str | None = _field("AERON_UDP_SEND_LOSS", "", "loss generator rules on send (docs/loss-generator.md)")
    udp_loss_seed: int | None = _field("AERON_UDP_LOSS_SEED", "0", "seed of the loss generator, so a run can be replayed")
    # driver-name (gossip) resolver (reference 8.2)
    driver_resolver_name: str | None = _field("AERON_DRIVER_RESOLVER_NAME", "", "this driver's name for the driver name resolver (empty = the host name)")
    driver_resolver_interface: str | None = _field("AERON_DRIVER_RESOLVER_INTERFACE", "", "host:port the driver name resolver binds; setting it makes 'driver' the name resolver (empty = off)")
    driver_resolver_bootstrap_neighbor: str | None = _field("AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR", "", "comma list of host:port of resolvers to announce this driver to, every one of them")
    # driver control (docs/api.md, "Driver control"): who may stop the driver with TERMINATE_DRIVER
    # (`aeron-async driver --terminate`)
    driver_termination_validator: str | None = _field("AERON_DRIVER_TERMINATION_VALIDATOR", "deny", "deny (nobody may stop the driver with TERMINATE_DRIVER), allow (anybody), or token (requests carrying driver_termination_token)")
    driver_termination_token: str | None = _field("AERON_DRIVER_TERMINATION_TOKEN", "", "the token a TERMINATE_DRIVER request must carry with driver_termination_validator='token'")
    # the loss report (docs/architecture.md, "The loss report")
    loss_report_buffer_length: Size | None = _field("AERON_LOSS_REPORT_BUFFER_LENGTH", "1m", "length of loss-report.dat, where the receiver records every image's loss (aeron-async loss)")
    # name resolution (docs/architecture.md, "Name resolution", "Driver names")
    driver_async_executor_threads: int | None = _field("AERON_DRIVER_ASYNC_EXECUTOR_THREADS", "1", "threads that look names of UDP channels up, off the conductor (1 to 64)")
    driver_reresolution_check_interval: Duration | None = _field("AERON_DRIVER_RERESOLUTION_CHECK_INTERVAL", "1s", "how often silent named endpoints/control addresses are resolved again; 0 disables")
    name_resolver_threshold: Duration | None = _field("AERON_NAME_RESOLVER_THRESHOLD", "5s", "a name lookup taking longer is counted in a system counter")
    name_resolution_pending_allowed: bool | None = _field("AERON_NAME_RESOLUTION_PENDING_ALLOWED", "false", "register channels whose names do not resolve yet, not connected, retrying them (ours)")

    def items(self) -> list[tuple[str, str]]:
        """(environment variable, native value) for every field that is set."""
        out = []
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if value is not None:
                out.append((field.metadata["env"], _native_value(field.name, value)))
        return out

    def _to_native(self) -> Any:
        ctx = lib.aa_driver_context_new()
        if ctx == ffi.NULL:
            check(-1, ConfigurationError)
        try:
            for env, value in self.items():
                check(lib.aa_driver_context_set(ctx, env.encode(), value.encode()), ConfigurationError)
        except BaseException:
            lib.aa_driver_context_free(ctx)
            raise
        return ctx


_DURATION_FIELDS = {
    f.name for f in attrs.fields(DriverContext) if f.type is not None and "Duration" in str(f.type)
}


def _native_value(name: str, value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if name in _DURATION_FIELDS and isinstance(value, int | float):
        if value < 0:
            raise ConfigurationError(f"{name}={value!r} must not be negative (seconds, or a string like '500ms')")
        return f"{int(round(value * 1_000_000_000))}ns"
    return str(value)


def native_options() -> list[tuple[str, str, str, str]]:
    """(env name, property name, default, description) for every option of the native driver."""
    out = []
    index = 0
    env = ffi.new("const char **")
    prop = ffi.new("const char **")
    default = ffi.new("const char **")
    desc = ffi.new("const char **")
    while lib.aa_driver_option(index, env, prop, default, desc) == 0:
        out.append(tuple(ffi.string(p[0]).decode() for p in (env, prop, default, desc)))
        index += 1
    return out  # type: ignore[return-value]
