"""Driver configuration: `DriverContext` mirrors the native option table one-to-one.

Every field has an environment variable (`AERON_<FIELD>`, in its metadata's `env`) and a default;
a field left at `None` takes the environment variable if set, else the driver default. The native
option table (`_native/src/driver/aa_driver_context.c`) is the one source of the names, defaults
and descriptions: the fields' metadata (`env`, `property`, `type`, `default`, `doc`) come from it
(aeron_async/_options.py). The defaults follow Aeron's C driver (reference section 11);
`aeron-async driver --help-options` and docs/configuration.md list them.

Sizes accept ints or strings with k/m/g suffixes ("64k", "16m"); durations accept seconds as
int/float or strings with ns/us/ms/s ("500ms", "10s").
"""

from __future__ import annotations

import attrs

from . import _options

Size = int | str
Duration = float | int | str


@_options.accepting_option_names(_options.DRIVER)
@attrs.define(slots=True, kw_only=True, field_transformer=_options.context_fields(_options.DRIVER))
class DriverContext(_options.NativeContext):
    """Settings of a media driver. Unset fields use `AERON_*` environment variables, then defaults."""

    _NATIVE_PREFIX = "aa_driver_context"
    _KIND = _options.DRIVER

    aeron_dir: str | None = None
    dir_delete_on_start: bool | None = None
    dir_delete_on_shutdown: bool | None = None
    dir_group: str | int | None = None
    threading_mode: str | None = None
    conductor_idle_strategy: str | None = None
    sender_idle_strategy: str | None = None
    receiver_idle_strategy: str | None = None
    sharednetwork_idle_strategy: str | None = None
    shared_idle_strategy: str | None = None
    term_buffer_length: Size | None = None
    ipc_term_buffer_length: Size | None = None
    term_buffer_sparse_file: bool | None = None
    mtu_length: Size | None = None
    ipc_mtu_length: Size | None = None
    publication_term_window_length: Size | None = None
    ipc_publication_term_window_length: Size | None = None
    file_page_size: Size | None = None
    perform_storage_checks: bool | None = None
    low_file_store_warning_threshold: Size | None = None
    conductor_buffer_length: Size | None = None
    clients_buffer_length: Size | None = None
    counters_buffer_length: Size | None = None
    error_buffer_length: Size | None = None
    client_liveness_timeout: Duration | None = None
    publication_linger_timeout: Duration | None = None
    publication_unblock_timeout: Duration | None = None
    publication_connection_timeout: Duration | None = None
    image_liveness_timeout: Duration | None = None
    timer_interval: Duration | None = None
    counters_free_to_reuse_timeout: Duration | None = None
    untethered_window_limit_timeout: Duration | None = None
    untethered_resting_timeout: Duration | None = None
    untethered_linger_timeout: Duration | None = None
    mdc_destination_timeout: Duration | None = None
    mdc_max_destinations: int | None = None
    sender_max_receivers: int | None = None
    driver_timeout: Duration | None = None
    tether_subscriptions: bool | None = None
    rejoin_stream: bool | None = None
    reliable_stream: bool | None = None
    spies_simulate_connection: bool | None = None
    publication_reserved_session_id_low: int | None = None
    publication_reserved_session_id_high: int | None = None
    conductor_cycle_threshold: Duration | None = None
    sender_cycle_threshold: Duration | None = None
    receiver_cycle_threshold: Duration | None = None
    rcv_status_message_timeout: Duration | None = None
    rcv_initial_window_length: Size | None = None
    receiver_max_images: int | None = None
    receiver_max_sessions_per_stream: int | None = None
    receiver_max_term_length: Size | None = None
    nak_unicast_delay: Duration | None = None
    nak_unicast_retry_delay_ratio: int | None = None
    retransmit_unicast_delay: Duration | None = None
    retransmit_unicast_linger: Duration | None = None
    send_to_status_poll_ratio: int | None = None
    cubiccongestioncontrol_measurertt: bool | None = None
    cubiccongestioncontrol_initialrtt: Duration | None = None
    cubiccongestioncontrol_tcpmode: bool | None = None
    nak_multicast_max_backoff: Duration | None = None
    nak_multicast_group_size: int | None = None
    max_resend: int | None = None
    multicast_flow_control_strategy: str | None = None
    socket_so_rcvbuf: Size | None = None
    socket_so_sndbuf: Size | None = None
    socket_multicast_ttl: int | None = None
    name_resolver_supplier: str | None = None
    name_resolver_init_args: str | None = None
    unicast_flow_control_strategy: str | None = None
    flow_control_receiver_timeout: Duration | None = None
    flow_control_group_min_size: int | None = None
    flow_control_group_tag: int | None = None
    receiver_group_tag: int | None = None
    udp_receive_loss: str | None = None
    udp_send_loss: str | None = None
    udp_loss_seed: int | None = None
    # driver-name (gossip) resolver (reference 8.2)
    driver_resolver_name: str | None = None
    driver_resolver_interface: str | None = None
    driver_resolver_bootstrap_neighbor: str | None = None
    driver_resolver_allowed_networks: str | None = None
    driver_resolver_hmac_key_file: str | None = None
    driver_resolver_cache_max_entries: int | None = None
    driver_resolver_neighbors_max: int | None = None
    driver_resolver_gossip_rate_limit: Size | None = None
    # driver control: who may stop the driver with TERMINATE_DRIVER (`aeron-async driver --terminate`)
    driver_termination_validator: str | None = None
    driver_termination_token: str | None = None
    driver_termination_token_file: str | None = None
    # the loss report (`aeron-async loss`)
    loss_report_buffer_length: Size | None = None
    # name resolution
    driver_async_executor_threads: int | None = None
    driver_reresolution_check_interval: Duration | None = None
    name_resolver_threshold: Duration | None = None
    name_resolution_pending_allowed: bool | None = None


def native_options() -> list[tuple[str, str, str, str]]:
    """(env name, property name, default, description) for every option of the native driver."""
    return _options.listing(_options.DRIVER)
