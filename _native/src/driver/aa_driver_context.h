/*
 * All driver configuration in one place. Every field has an environment variable (AERON_*), a
 * property-style name (aeron.*) and a documented default, in the driver's option table
 * (aa_driver_context.c, run by the option engine util/aa_options.h); aa_driver_context_set takes
 * either name.
 */
#ifndef AA_DRIVER_CONTEXT_H
#define AA_DRIVER_CONTEXT_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "media/aa_loss_generator.h"
#include "util/aa_options.h"
#include "util/aa_clock.h"
#include "util/aa_fs.h"

typedef enum aa_threading_mode_enum
{
    AA_THREADING_MODE_DEDICATED = 0,
    AA_THREADING_MODE_SHARED_NETWORK = 1,
    AA_THREADING_MODE_SHARED = 2,
    AA_THREADING_MODE_INVOKER = 3
}
aa_threading_mode_t;

typedef struct aa_driver_context_stct
{
    char aeron_dir[1024];
    bool dir_delete_on_start;
    bool dir_delete_on_shutdown;
    /* AERON_DIR_GROUP: who besides the driver's user may use the aeron directory (docs/security.md,
     * "Files"); all zero, the default, is the owner only. The group writes the files (clients write
     * the CnC's to-driver buffer and counters and append to publication logs). */
    aa_fs_access_t dir_access;
    aa_threading_mode_t threading_mode;
    char conductor_idle_strategy[128];
    char sender_idle_strategy[128];
    char receiver_idle_strategy[128];
    char shared_network_idle_strategy[128];
    char shared_idle_strategy[128];

    int64_t term_buffer_length;
    int64_t ipc_term_buffer_length;
    bool term_buffer_sparse_file;
    int64_t mtu_length;
    int64_t ipc_mtu_length;
    int64_t publication_term_window_length;
    int64_t ipc_publication_term_window_length;
    int64_t file_page_size;
    bool perform_storage_checks;
    int64_t low_file_store_warning_threshold;

    int64_t to_driver_buffer_length;     /* capacity + trailer */
    int64_t to_clients_buffer_length;    /* capacity + trailer */
    int64_t counters_values_buffer_length;
    int64_t error_buffer_length;

    int64_t client_liveness_timeout_ns;
    int64_t publication_linger_timeout_ns;
    int64_t publication_unblock_timeout_ns;
    int64_t publication_connection_timeout_ns;
    int64_t image_liveness_timeout_ns;
    int64_t timer_interval_ns;
    int64_t counters_free_to_reuse_timeout_ns;
    int64_t untethered_window_limit_timeout_ns;
    int64_t untethered_resting_timeout_ns;
    int64_t untethered_linger_timeout_ns;   /* 0: unset, the window-limit timeout (aeron-wave3.md 5) */
    int64_t mdc_destination_timeout_ns;
    int32_t mdc_max_destinations;        /* dynamic MDC destinations per endpoint (docs/security.md) */
    int32_t sender_max_receivers;        /* receivers a network publication honours NAKs from */
    int64_t driver_timeout_ms;
    bool tether_subscriptions;
    bool rejoin_stream;
    bool reliable_stream;
    bool spies_simulate_connection;
    int32_t publication_reserved_session_id_low;
    int32_t publication_reserved_session_id_high;
    int64_t conductor_cycle_threshold_ns;
    int64_t sender_cycle_threshold_ns;
    int64_t receiver_cycle_threshold_ns;

    /* Reliable UDP (reference 4, 11). */
    int64_t status_message_timeout_ns;   /* receiver: SM at least this often */
    int64_t rcv_initial_window_length;   /* receiver window (min with term/2; rcv-wnd= per channel) */
    /* What a receive channel endpoint takes from the network (docs/security.md, Network: receivers):
     * images per endpoint and per stream (0: no limit), the longest term of a SETUP (0: the larger
     * of the configured term lengths, aa_driver_context_receiver_max_term_length). */
    int32_t receiver_max_images;
    int32_t receiver_max_sessions_per_stream;
    int64_t receiver_max_term_length;
    int64_t nak_unicast_delay_ns;        /* receiver: first NAK this long after a gap appears */
    int32_t nak_unicast_retry_delay_ratio;
    int64_t retransmit_unicast_delay_ns; /* sender: resend this long after a NAK */
    int64_t retransmit_unicast_linger_ns; /* sender: ignore NAKs for the same range this long */
    int32_t send_to_status_poll_ratio;   /* sender: read control frames every this many busy cycles */
    /* cc=cubic defaults (reference 6; a channel's cc=cubic,<options> overrides them) */
    bool cubic_congestion_control_measure_rtt;      /* send RTT measurement frames */
    bool cubic_congestion_control_tcp_mode;         /* TCP-friendly growth below w_max */
    int64_t cubic_congestion_control_initial_rtt_ns; /* RTT until one is measured */

    /* Multicast (reference 4.3, 4.4, 5, 11). */
    int64_t nak_multicast_max_backoff_ns; /* group images: NAK delays drawn from [0, this) */
    int32_t nak_multicast_group_size;    /* group images: the expected receivers, shaping the draw */
    int32_t max_resend;                  /* group publications without max-resend=: retransmit pool size */
    char multicast_flow_control_strategy[128]; /* multicast channels without fc=: a registered strategy */

    int64_t socket_so_rcvbuf;            /* UDP channels without so-rcvbuf=; 0 = OS default */
    int64_t socket_so_sndbuf;            /* UDP channels without so-sndbuf=; 0 = OS default */
    int32_t socket_multicast_ttl;        /* UDP channels without ttl=; 0 = OS default */
    char name_resolver_supplier[128];    /* a name resolver of the strategy registry */

    /* Flow control (reference 5, 11): the sender's strategy defaults and the receivers' group tag. */
    char unicast_flow_control_strategy[128];   /* fc= of unicast channels without one ("unicast") */
    int64_t flow_control_receiver_timeout_ns;  /* min/tagged drop a receiver silent this long */
    int32_t flow_control_group_min_size;       /* min/tagged: receivers needed (g:/N per channel) */
    int64_t flow_control_group_tag;            /* tagged: the group's tag (g:<tag> per channel) */
    bool has_receiver_group_tag;               /* receivers send this tag in their SMs (gtag= per channel) */
    int64_t receiver_group_tag;
    char name_resolver_init_args[256];
    /* driver-name (gossip) resolver (resolver/aa_driver_name_resolver.h): on when the interface is set */
    char driver_resolver_name[256];
    char driver_resolver_interface[256];
    char driver_resolver_bootstrap_neighbor[1024];
    char driver_resolver_allowed_networks[2048];   /* CIDR list; empty: every source */
    char driver_resolver_hmac_key_file[1024];      /* shared key of signed frames; empty: off */
    int32_t driver_resolver_cache_max_entries;     /* 0: no cap */
    int32_t driver_resolver_neighbors_max;         /* 0: no cap */
    int64_t driver_resolver_gossip_rate_limit;     /* bytes a second of cache gossip; 0: no limit */

    /* Loss generator (testing, docs/loss-generator.md): parsed rules, off when empty. Stored only;
     * the sender and receiver wrap their transports with it once they exist. */
    aa_loss_generator_params_t udp_receive_loss;
    aa_loss_generator_params_t udp_send_loss;
    int64_t udp_loss_seed;

    /* Driver control (TERMINATE_DRIVER, aa_driver_control.c): "deny", "allow" or "token". */
    char termination_validator[16];
    char termination_token[256];
    /* a file holding the token (docs/security.md, Secrets on the command line): read by
     * aa_driver_context_validate into termination_token */
    char termination_token_file[1024];
    /* The loss report (<aeron_dir>/loss-report.dat, aa_loss_reporter.h): its length, rounded up to
     * file_page_size as Aeron does. */
    int64_t loss_report_buffer_length;
    /* Name resolution (media/aa_udp_channel.h, reference 8): executor threads, the re-resolution
     * check interval (0: off) and whether names that do not resolve yet are registered anyway. */
    int32_t async_executor_threads;
    int64_t reresolution_check_interval_ns;
    bool name_resolution_pending_allowed;
    int64_t name_resolver_time_threshold_ns;

    /* The clocks every timer of the driver reads (aa_clock.h): the system's unless set
     * (aa_driver_context_set_clock), e.g. to a test clock so tests move time instead of sleeping. */
    aa_clock_t clock;
}
aa_driver_context_t;

/* Fills defaults, then applies every AERON_* environment variable that is set. */
int aa_driver_context_init(aa_driver_context_t *ctx);
/* Sets one field by env name (AERON_TERM_BUFFER_LENGTH) or property name (aeron.term.buffer.length);
 * the error names the field, the bad value and the accepted form. */
int aa_driver_context_set(aa_driver_context_t *ctx, const char *name, const char *value);
/* The value an option holds, by either name, as it would be set (aa_options_get). */
int aa_driver_context_get(const aa_driver_context_t *ctx, const char *name, char *value, size_t length);
/* The driver's option table (util/aa_options.h). */
const aa_options_table_t *aa_driver_context_options(void);
/* Checks cross-field rules (term lengths powers of two, mtu, buffer sizes). */
int aa_driver_context_validate(aa_driver_context_t *ctx);
/* AERON_UNTETHERED_LINGER_TIMEOUT, or the window-limit timeout where it is unset (aeron-wave3.md 5). */
int64_t aa_driver_context_untethered_linger_timeout_ns(const aa_driver_context_t *ctx);

/* The longest term a SETUP may ask an image for: AERON_RECEIVER_MAX_TERM_LENGTH, or when 0 the larger
 * of the network and IPC term lengths (at most Aeron's 1 GiB). */
int32_t aa_driver_context_receiver_max_term_length(const aa_driver_context_t *ctx);

/* The setting a refused aeron directory's error names as the way to choose another. */
#define AA_DRIVER_DIR_OPTION "aeron.dir (AERON_DIR)"

/* The access of the aeron directory's files that clients only read (the lock, the options file,
 * the loss report, the name resolutions): the group of AERON_DIR_GROUP reads them, never writes. */
static inline aa_fs_access_t aa_driver_read_access(const aa_driver_context_t *ctx)
{
    aa_fs_access_t access = ctx->dir_access;
    access.group_writes = false;
    return access;
}

/* TERMINATE_DRIVER validation (aa_driver_control.c) */
typedef enum aa_termination_validator_enum
{
    AA_TERMINATION_DENY = 0,
    AA_TERMINATION_ALLOW = 1,
    AA_TERMINATION_TOKEN = 2
}
aa_termination_validator_t;

/* Checks AERON_DRIVER_TERMINATION_VALIDATOR and _TOKEN together (part of validate). */
int aa_driver_context_check_termination(const aa_driver_context_t *ctx);
/* AERON_DRIVER_TERMINATION_TOKEN_FILE, when set, into termination_token (refused when a different
 * token is set too). */
int aa_driver_context_load_termination_token(aa_driver_context_t *ctx);
aa_termination_validator_t aa_driver_context_termination_validator(const aa_driver_context_t *ctx);
/* Writes every option with the value this context holds as `property=value` lines (the termination
 * token as "(set)"); returns 0, or -1 with the error set. */
int aa_driver_context_write_options(const aa_driver_context_t *ctx, FILE *out);

#endif
