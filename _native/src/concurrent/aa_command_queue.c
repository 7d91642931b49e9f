#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "concurrent/aa_command_queue.h"
#include "concurrent/aa_atomic.h"
#include "util/aa_error.h"

int aa_command_queue_init(aa_command_queue_t *queue, size_t capacity)
{
    memset(queue, 0, sizeof(*queue));
    if (!AA_IS_POWER_OF_TWO(capacity))
    {
        AA_SET_ERR(AA_ERROR_CODE_INVALID_ARGUMENT, "command queue capacity %zu must be a power of two", capacity);
        return -1;
    }
    queue->commands = calloc(capacity, sizeof(aa_command_t));
    if (NULL == queue->commands)
    {
        AA_SET_ERR(ENOMEM, "out of memory allocating a command queue of %zu commands", capacity);
        return -1;
    }
    queue->capacity = capacity;
    return 0;
}

void aa_command_queue_close(aa_command_queue_t *queue)
{
    free(queue->commands);
    queue->commands = NULL;
    queue->capacity = 0;
}

bool aa_command_queue_offer(aa_command_queue_t *queue, aa_command_func_t func, const void *args, size_t length)
{
    if (length > AA_COMMAND_ARGS_MAX_LENGTH)
    {
        return false;
    }
    uint64_t tail = queue->tail;
    if (tail - queue->head_cache >= queue->capacity)
    {
        queue->head_cache = __atomic_load_n(&queue->head, __ATOMIC_ACQUIRE);
        if (tail - queue->head_cache >= queue->capacity)
        {
            return false;
        }
    }
    aa_command_t *command = &queue->commands[tail & (queue->capacity - 1)];
    command->func = func;
    if (length > 0)
    {
        memcpy(command->args, args, length);
    }
    __atomic_store_n(&queue->tail, tail + 1, __ATOMIC_RELEASE);
    return true;
}

int aa_command_queue_drain(aa_command_queue_t *queue, void *agent, int limit)
{
    uint64_t head = queue->head;
    uint64_t tail = __atomic_load_n(&queue->tail, __ATOMIC_ACQUIRE);
    int count = 0;
    while (head < tail && count < limit)
    {
        aa_command_t *command = &queue->commands[head & (queue->capacity - 1)];
        command->func(agent, command->args);
        head++;
        count++;
        __atomic_store_n(&queue->head, head, __ATOMIC_RELEASE);
    }
    return count;
}

size_t aa_command_queue_size(aa_command_queue_t *queue)
{
    uint64_t head = __atomic_load_n(&queue->head, __ATOMIC_ACQUIRE);
    uint64_t tail = __atomic_load_n(&queue->tail, __ATOMIC_ACQUIRE);
    return (size_t)(tail - head);
}
