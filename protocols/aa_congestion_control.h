/*
 * Receiver congestion control (reference section 6), sans I/O: what window an image advertises in
 * its status messages. A strategy is an entry of the strategy registry (util/aa_registry.h, kind
 * AA_STRATEGY_KIND_CONGESTION_CONTROL) whose table is an aa_congestion_control_strategy_table_t,
 * chosen with cc=<name>[,<options>] on a subscription channel ("static" without cc=).
 *
 * The table holds what the driver calls today: the window of a new image, asked by the conductor
 * when it creates the image (never on the receiver's duty cycle). A strategy that changes the window
 * while the stream flows (cubic, with RTT measurement) adds its callbacks here together with the
 * receiver code that calls them (issue 14).
 *
 * Built in: "static": the window is min(rcv-wnd or the driver's initial window, term length / 2),
 * fixed for the life of the image; it takes no options.
 */
#ifndef AA_CONGESTION_CONTROL_H
#define AA_CONGESTION_CONTROL_H

#include <stdint.h>

/* What a strategy may use to size the window of one image. */
typedef struct aa_congestion_control_params_stct
{
    const char *cc_options;         /* the options after "name," (or an alias's); NULL: none */
    void *clientd;                  /* the registry entry's clientd */
    int32_t session_id;
    int32_t stream_id;
    int32_t term_length;
    int32_t mtu_length;             /* the sender's, from SETUP */
    int32_t initial_window_length;  /* rcv-wnd, or the driver's aeron.rcv.initial.window.length */
    int32_t socket_rcvbuf_length;   /* the receive socket's buffer, 0 when unknown */
}
aa_congestion_control_params_t;

typedef struct aa_congestion_control_strategy_table_stct
{
    /* Sets *window_length for a new image; returns 0, or -1 with AA_SET_ERR (options it does not
     * take, a window it cannot give), which rejects the image and logs the error. */
    int (*initial_window_length)(const aa_congestion_control_params_t *params, int32_t *window_length);
}
aa_congestion_control_strategy_table_t;

typedef struct aa_congestion_control_choice_stct
{
    const char *name;
    const aa_congestion_control_strategy_table_t *table;
    void *clientd;
    const char *options;
}
aa_congestion_control_choice_t;

/* Registers the built-in strategies (once). */
int aa_congestion_control_register_builtins(void);

/* Chooses the strategy named by a channel's cc= value (NULL: "static"). Returns 0, or -1 with
 * AA_ERROR_CODE_INVALID_CHANNEL naming the value and every registered name. */
int aa_congestion_control_select(const char *cc, aa_congestion_control_choice_t *choice);

/* The window of a new image under the chosen strategy (params' cc_options and clientd come from it). */
int aa_congestion_control_initial_window_length(
    const aa_congestion_control_choice_t *choice, const aa_congestion_control_params_t *params, int32_t *window_length);

#endif
