/* meta/demangle.c: Itanium C++ names to readable names and parameter types.
 *
 * Uses __cxa_demangle from the C++ runtime, found at run time (already in the
 * process, else dlopen("libstdc++.so.6")), so libktrace.so gains no hard
 * libstdc++ dependency; without it nothing is demangled.  The parameter list
 * of a demangled function name "void k<float>(float const*, int)" is split
 * at top-level commas.
 */
#include "meta/meta_internal.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static pthread_once_t dm_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn dm_fn;

static void dm_init(void)
{
	void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!f) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			f = dlsym(h, "__cxa_demangle");
	}
	dm_fn = (cxa_demangle_fn)f;
}

int kt_is_mangled(const char *name)
{
	return name && name[0] == '_' && name[1] == 'Z';
}

char *ktrace_demangle(const char *mangled)
{
	if (!kt_is_mangled(mangled))
		return NULL;
	pthread_once(&dm_once, dm_init);
	if (!dm_fn)
		return NULL;
	int status = 0;
	char *d = dm_fn(mangled, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
}

static char *trim_dup(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return kt_strndup(s, n);
}

int ktrace_demangle_param_types(const char *mangled, char **types, int max)
{
	char *d = ktrace_demangle(mangled);
	if (!d)
		return -1;
	int n = kt_split_param_types(d, types, max);
	free(d);
	return n;
}

int kt_split_param_types(const char *d, char **types, int max)
{
	size_t n = strlen(d);
	/* the parameter list is the last balanced (...) group, ending the string */
	while (n && isspace((unsigned char)d[n - 1]))
		n--;
	if (!n || d[n - 1] != ')')
		return -1;
	size_t close = n - 1, open = 0;
	int depth = 0, found = 0;
	for (size_t i = close + 1; i-- > 0;) {
		if (d[i] == ')')
			depth++;
		else if (d[i] == '(' && --depth == 0) {
			open = i;
			found = 1;
			break;
		}
	}
	if (!found)
		return -1;
	const char *s = d + open + 1;
	size_t len = close - open - 1;
	int count = 0;
	/* "()" and "(void)" have no parameters */
	char *whole = trim_dup(s, len);
	if (!whole || !*whole || !strcmp(whole, "void")) {
		free(whole);
		return 0;
	}
	free(whole);
	int dp = 0, da = 0, db = 0, dc = 0;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? s[i] : ',';
		switch (c) {
		case '(': dp++; break;
		case ')': dp--; break;
		case '<': da++; break;
		case '>': if (da) da--; break;
		case '[': db++; break;
		case ']': db--; break;
		case '{': dc++; break;
		case '}': dc--; break;
		case ',':
			if (dp == 0 && da == 0 && db == 0 && dc == 0) {
				if (count < max) {
					types[count] = trim_dup(s + start, i - start);
					if (!types[count]) {
						for (int j = 0; j < count; j++)
							free(types[j]);
						return -1;
					}
				}
				count++;
				start = i + 1;
			}
			break;
		default: break;
		}
	}
	return count;
}
