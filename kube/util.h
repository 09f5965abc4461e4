/* Small helpers every module of the three binaries repeats otherwise: the "*err" message
 * convention, the monotonic clock, Go duration text (time.ParseDuration and
 * time.Duration.String for whole milliseconds) and strconv-style bool and integer parsing. */
#ifndef KUBE_UTIL_H
#define KUBE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Error messages: when err != NULL, *err becomes a malloc'd printf-formatted message (NULL when
 * out of memory), freeing the message it held. Returns -1, so that an error path reads
 * `return kube_errf(err, "...", ...);`. */
int kube_errf(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, except that a message already in *err wins: the first error of a sequence of steps
 * is the one reported (the others are usually consequences of it). Returns -1. */
int kube_errf_first(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t kube_mono_ns(void);

/* time.ParseDuration ("1h2m3.5s", "500ms", "-1s", "0"; units ns us µs ms s m h), truncated to
 * whole milliseconds. 0, or -1 on a malformed or out-of-range text (*ms untouched). */
int kube_duration_parse_ms(const char *s, int64_t *ms);
/* time.Duration.String of ms milliseconds ("0s", "500ms", "1.5s", "2h0m0s", "-1s") into buf. */
#define KUBE_DURATION_BUF 48 /* enough for any int64 */
void kube_duration_format_ms(int64_t ms, char *buf, size_t n);

/* strconv.ParseBool: 1 t T TRUE true True, 0 f F FALSE false False. 0, or -1 (*out untouched). */
int kube_parse_bool(const char *s, bool *out);
/* A base-10 integer in [lo, hi] with nothing after it (leading white space is skipped, as by
 * strtoll). 0, or -1 (*out untouched). */
int kube_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

#endif
