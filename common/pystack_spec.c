/* common/pystack_spec.c: parsing KTRACE_PYSTACK (pystack_spec.h).  Calls
 * libc and the regex parser of value_parse.c. */
#include "common/pystack_spec.h"

#include <stdio.h>
#include <string.h>

#include "common/value_parse.h"

static int number(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;

	if (!n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9' || x > (UINT64_MAX - (uint64_t)(v[i] - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return 0;
}

/* One "key=value" field of n bytes at f (not kernel=). */
static int field(struct ktrace_pystack_spec *s, const char *f, size_t n, char *why, size_t whylen)
{
	static const char *const keys[] = { "launch=", "fw_seq=", "occurrence=" };
	uint64_t *dst[] = { &s->launch, &s->fw_seq, &s->occurrence };
	int *have[] = { &s->have_launch, &s->have_fw_seq, NULL };

	for (size_t k = 0; k < 3; k++) {
		size_t kl = strlen(keys[k]);

		if (n < kl || memcmp(f, keys[k], kl))
			continue;
		if (number(f + kl, n - kl, dst[k])) {
			snprintf(why, whylen, "%.*s expects a number", (int)(kl - 1), keys[k]);
			return -1;
		}
		if (have[k])
			*have[k] = 1;
		return 0;
	}
	snprintf(why, whylen, "unknown field '%.*s' (launch=N, fw_seq=S, occurrence=K, kernel=REGEX last)",
		 (int)(n > 40 ? 40 : n), f);
	return -1;
}

int ktrace_pystack_spec_parse(const char *v, struct ktrace_pystack_spec *s, char *why, size_t whylen)
{
	const char *p = v;

	memset(s, 0, sizeof *s);
	if (strlen(v) >= sizeof s->text) {
		snprintf(why, whylen, "too long");
		return -1;
	}
	strcpy(s->text, v);
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (!strncmp(p, "kernel=", 7)) {
			if (ktrace_regex_compile(&s->kernel, p + 7, why, whylen))
				return -1;
			s->have_kernel = 1;
			break; /* the regex runs to the end */
		}
		if (field(s, p, n, why, whylen))
			return -1;
		p += n + (comma ? 1 : 0);
	}
	if (!s->have_launch && !s->have_kernel && !s->have_fw_seq) {
		snprintf(why, whylen, "names nothing (launch=N, kernel=REGEX or fw_seq=S)");
		return -1;
	}
	if (s->have_launch && s->have_kernel) {
		ktrace_pystack_spec_free(s);
		snprintf(why, whylen, "launch= and kernel= select the same thing two ways: give one");
		return -1;
	}
	return 0;
}

void ktrace_pystack_spec_free(struct ktrace_pystack_spec *s)
{
	if (s->have_kernel)
		regfree(&s->kernel);
	s->have_kernel = 0;
}
