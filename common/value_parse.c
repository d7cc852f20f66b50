/* common/value_parse.c: sizes, launch ranges, sampling rates, bools and regular expressions, parsed
 * the same way for the KTRACE_* variables and the tools' options
 * (value_parse.h says what each accepts).  Values are untrusted: each is
 * checked to its end, and every number for overflow.
 */
#include "common/value_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SIZE_EXPECTED "expected a byte count such as 1048576, 64K, 256M or 2G"
#define SIZE_TOO_LARGE "too large (more than 2^64-1 bytes)"
#define RANGE_EXPECTED "expected A:B (A <= n < B), A:, :B or N"
#define RATE_EXPECTED "expected N (one launch in N) or 0 (none)"
#define RATE_TOO_LARGE "too large (at most 1048576)"

static int say(char *why, size_t whylen, const char *text)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", text);
	return -1;
}

/* Decimal digits at *sp (no sign, no space), advancing *sp past them: 0, or
 * -1 with why: none (no digit there) or too_large (above 2^64-1). */
static int parse_digits(const char **sp, uint64_t *out, const char *none, const char *too_large, char *why,
			size_t whylen)
{
	const char *s = *sp;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return say(why, whylen, none);
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return say(why, whylen, too_large);
		v = v * 10 + d;
	}
	*sp = s;
	*out = v;
	return 0;
}

/* The binary unit at *sp: K, M, G, T (then an optional "i"), and an optional
 * "B"; returns the shift, advancing *sp past the unit. */
static int parse_unit(const char **sp)
{
	const char *s = *sp;
	int shift = 0;

	switch (toupper((unsigned char)*s)) {
	case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default: break;
	}
	if (shift) {
		s++;
		if (*s == 'i' || *s == 'I')
			s++;
	}
	if (*s == 'B' || *s == 'b')
		s++;
	*sp = s;
	return shift;
}

int ktrace_parse_size(const char *s, uint64_t *out, char *why, size_t whylen)
{
	uint64_t v;
	int shift;

	if (parse_digits(&s, &v, SIZE_EXPECTED, SIZE_TOO_LARGE, why, whylen))
		return -1;
	shift = parse_unit(&s);
	if (*s)
		return say(why, whylen, SIZE_EXPECTED);
	if (v > (UINT64_MAX >> shift))
		return say(why, whylen, SIZE_TOO_LARGE);
	*out = v << shift;
	return 0;
}

/* One bound of a range: digits running exactly to end. */
static int parse_bound(const char *s, const char *end, uint64_t *out, char *why, size_t whylen)
{
	if (parse_digits(&s, out, RANGE_EXPECTED, "number too large (more than 2^64-1)", why, whylen))
		return -1;
	return s == end ? 0 : say(why, whylen, RANGE_EXPECTED);
}

int ktrace_parse_range(const char *s, uint64_t *lo, uint64_t *hi, char *why, size_t whylen)
{
	const char *colon = strchr(s, ':');
	const char *end = s + strlen(s);
	uint64_t a = 0, b = UINT64_MAX;

	if (!colon) { /* "N": N only */
		if (parse_bound(s, end, &a, why, whylen))
			return -1;
		if (a == UINT64_MAX)
			return say(why, whylen, "number too large (more than 2^64-2)");
		*lo = a;
		*hi = a + 1;
		return 0;
	}
	if (colon > s && parse_bound(s, colon, &a, why, whylen))
		return -1;
	if (colon + 1 < end && parse_bound(colon + 1, end, &b, why, whylen))
		return -1;
	if (a >= b)
		return say(why, whylen, "A must be less than B (A:B is A <= n < B)");
	*lo = a;
	*hi = b;
	return 0;
}

int ktrace_parse_rate(const char *s, uint32_t *out, char *why, size_t whylen)
{
	uint64_t v = 0;

	if (parse_digits(&s, &v, RATE_EXPECTED, RATE_TOO_LARGE, why, whylen))
		return -1;
	if (*s)
		return say(why, whylen, RATE_EXPECTED);
	if (v > KTRACE_RATE_MAX)
		return say(why, whylen, RATE_TOO_LARGE);
	*out = (uint32_t)v;
	return 0;
}

int ktrace_regex_compile(regex_t *re, const char *pattern, char *why, size_t whylen)
{
	char reason[256];
	int rc;

	if (!*pattern)
		return say(why, whylen, "an empty regular expression");
	if (strlen(pattern) > KTRACE_REGEX_MAX_LEN) {
		snprintf(reason, sizeof(reason), "regular expression too long (more than %d bytes)",
			 KTRACE_REGEX_MAX_LEN);
		return say(why, whylen, reason);
	}
	rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc == 0)
		return 0;
	regerror(rc, re, reason, sizeof(reason));
	if (why && whylen)
		snprintf(why, whylen, "not a POSIX extended regular expression (%s)", reason);
	return -1;
}

int ktrace_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}
