/*
 * Whether the process that wrote a CnC file still runs. The CnC header records the driver's pid
 * (reference 9.2), and our drivers also record their pid namespace (aa_cnc.h), because a pid means
 * something only in its own namespace: a driver in another container that shares /dev/shm has a
 * pid that may name nothing, or another process, here.
 */
#ifndef AA_PROCESS_H
#define AA_PROCESS_H

#include <stdint.h>

#define AA_PROCESS_DEAD 0
#define AA_PROCESS_ALIVE 1
#define AA_PROCESS_UNKNOWN (-1)

/* The id of this process's pid namespace (the inode of /proc/self/ns/pid), or 0 if it cannot be read. */
uint64_t aa_process_pid_namespace(void);

/* Whether `pid`, recorded by a process in pid namespace `pid_namespace`, still runs: DEAD when the
 * namespace is ours (and known) and no such process exists, or only its unreaped zombie does;
 * ALIVE when it exists; UNKNOWN when it cannot be checked (another or an unknown namespace, or no
 * pid recorded). ALIVE says only that some process has that pid: pids are reused. */
int aa_process_liveness(int64_t pid, uint64_t pid_namespace);

#endif
