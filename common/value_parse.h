/* common/value_parse.h: the one parser of setting values, shared by
 * libktrace.so (the KTRACE_* variables, interpose/model/config.c) and the tools
 * (ktrace run and check, ktrace-dump), so that a value means the same thing,
 * and is refused for the same reason, wherever it is given.
 *
 *   size    decimal digits with an optional binary unit K, M, G or T (any
 *           case; "KiB", "KB" and a bare "B" are accepted too): "1048576",
 *           "64K", "256M", "2G".  No sign, no spaces, nothing after the unit;
 *           more than 2^64-1 bytes is refused.
 *   range   launch (or operation) numbers: "A:B" is A <= n < B and needs
 *           A < B; "A:" has no end, ":B" starts at 0, ":" is every number,
 *           a single "N" is N:N+1.
 *   rate    a sampling rate: decimal digits N, one in N (1: every one), 0
 *           none; at most KTRACE_RATE_MAX.
 *   bool    0/1, true/false, yes/no, on/off (any case).
 *   regex   a POSIX extended regular expression, compiled once
 *           (REG_EXTENDED | REG_NOSUB); not empty, at most
 *           KTRACE_REGEX_MAX_LEN bytes.
 *
 * Each parser returns 0, or -1 with the reason in why (when why is not
 * NULL): one line without the value, to follow "<setting> '<value>': ".
 */
#ifndef KTRACE_COMMON_VALUE_PARSE_H
#define KTRACE_COMMON_VALUE_PARSE_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

/* The longest regular expression accepted (the library keeps it in a
 * buffer of KTRACE_REGEX_MAX_LEN + 1 bytes). */
#define KTRACE_REGEX_MAX_LEN 1023
#define KTRACE_RATE_MAX 1048576u

int ktrace_parse_size(const char *s, uint64_t *out, char *why, size_t whylen)
	__attribute__((visibility("hidden")));
int ktrace_parse_range(const char *s, uint64_t *lo, uint64_t *hi, char *why, size_t whylen)
	__attribute__((visibility("hidden")));
int ktrace_parse_rate(const char *s, uint32_t *out, char *why, size_t whylen)
	__attribute__((visibility("hidden")));
/* A bool: 0 with *out 0 or 1, or -1 for anything else (no reason: the
 * message says "expected 0 or 1"). */
int ktrace_parse_bool(const char *s, int *out) __attribute__((visibility("hidden")));
/* On success *re holds the compiled expression: free it with regfree(). */
int ktrace_regex_compile(regex_t *re, const char *pattern, char *why, size_t whylen)
	__attribute__((visibility("hidden")));

#endif
