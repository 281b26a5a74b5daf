/*
 * runtime_int.h -- shared inside src/runtime only: the built-in adapters
 * and small helpers the adapters share.
 */
#ifndef HD_RUNTIME_INT_H
#define HD_RUNTIME_INT_H

#include <stddef.h>
#include <stdint.h>

#include <huddle/runtime.h>

extern const hd_runtime_adapter hd_runtime__scripted;
extern const hd_runtime_adapter hd_runtime__exec;

/* `timed out after 1.5 s` into out. */
void hd_runtime__timeout_msg(char *out, size_t outlen, int64_t ms);

#endif
