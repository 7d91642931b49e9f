/*
 * A single-producer single-consumer queue of commands between driver agents (conductor -> sender,
 * conductor -> receiver, receiver -> conductor). A command is a function and a small argument
 * block copied into a preallocated slot, so offering allocates nothing; the consumer calls the
 * function with its own agent state and the arguments during its duty cycle.
 *
 * One thread offers and one thread drains (they may be the same thread, as in the SHARED mode).
 * The producer writes the slot, then release-stores the tail; the consumer acquires the tail, runs
 * the command, then release-stores the head.
 */
#ifndef AA_COMMAND_QUEUE_H
#define AA_COMMAND_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Room for a command's arguments: enough for a socket address and a dozen fields. */
#define AA_COMMAND_ARGS_MAX_LENGTH 240
#define AA_COMMAND_QUEUE_CAPACITY_DEFAULT 1024

typedef void (*aa_command_func_t)(void *agent, const void *args);

typedef struct aa_command_stct
{
    aa_command_func_t func;
    _Alignas(16) uint8_t args[AA_COMMAND_ARGS_MAX_LENGTH];
}
aa_command_t;

typedef struct aa_command_queue_stct
{
    _Alignas(64) volatile uint64_t head;
    _Alignas(64) volatile uint64_t tail;
    _Alignas(64) uint64_t head_cache;
    uint64_t capacity;
    aa_command_t *commands;
}
aa_command_queue_t;

/* capacity: a power of two. */
int aa_command_queue_init(aa_command_queue_t *queue, size_t capacity);
void aa_command_queue_close(aa_command_queue_t *queue);

/* Producer: copies length bytes of args (<= AA_COMMAND_ARGS_MAX_LENGTH) into the next slot.
 * Returns false when the queue is full (or the arguments too long). */
bool aa_command_queue_offer(aa_command_queue_t *queue, aa_command_func_t func, const void *args, size_t length);

/* Consumer: runs up to limit commands with agent as their first argument; returns how many ran. */
int aa_command_queue_drain(aa_command_queue_t *queue, void *agent, int limit);

/* Commands offered but not yet run (approximate when read by the producer). */
size_t aa_command_queue_size(aa_command_queue_t *queue);

#endif
