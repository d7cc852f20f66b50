/* meta/demangle.c: Itanium C++ names to readable names and parameter types.
 *
 * Uses __cxa_demangle from the C++ runtime, found at run time (already in the
 * process, else dlopen("libstdc++.so.6")), so libktrace.so gains no hard
 * libstdc++ dependency; without it nothing is demangled.  The parameter list
 * of a demangled function name "void k<float>(float const*, int)" is split
 * at top-level commas.
 *
 * Owns ktrace_demangle, ktrace_demangle_param_types, kt_is_mangled and
 * kt_split_param_types.  Calls __cxa_demangle (through dlsym) and libc.
 */
#include "meta/meta_internal.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn demangler; /* NULL: no C++ runtime found */

static void find_demangler(void)
{
	void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!f) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			f = dlsym(h, "__cxa_demangle");
	}
	demangler = (cxa_demangle_fn)f;
}

int kt_is_mangled(const char *name)
{
	return name && name[0] == '_' && name[1] == 'Z';
}

char *ktrace_demangle(const char *mangled)
{
	if (!kt_is_mangled(mangled))
		return NULL;
	pthread_once(&demangler_once, find_demangler);
	if (!demangler)
		return NULL;
	int status = 0;
	char *d = demangler(mangled, NULL, NULL, &status);
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

/* The parameter list of a demangled function name: the last balanced (...)
 * group, ending the string.  Sets *list and *len to the text inside the
 * parentheses; -1 if there is none. */
static int find_param_list(const char *demangled, const char **list, size_t *len)
{
	size_t n = strlen(demangled);
	while (n && isspace((unsigned char)demangled[n - 1]))
		n--;
	if (!n || demangled[n - 1] != ')')
		return -1;
	size_t close = n - 1;
	int depth = 0;
	for (size_t i = close + 1; i-- > 0;) {
		if (demangled[i] == ')') {
			depth++;
		} else if (demangled[i] == '(' && --depth == 0) {
			*list = demangled + i + 1;
			*len = close - i - 1;
			return 0;
		}
	}
	return -1;
}

int kt_split_param_types(const char *demangled, char **types, int max)
{
	const char *s;
	size_t len;
	if (find_param_list(demangled, &s, &len) != 0)
		return -1;
	int count = 0;
	/* "()" and "(void)" have no parameters */
	char *whole = trim_dup(s, len);
	if (!whole || !*whole || !strcmp(whole, "void")) {
		free(whole);
		return 0;
	}
	free(whole);
	int parens = 0, angles = 0, brackets = 0, braces = 0;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? s[i] : ',';
		switch (c) {
		case '(': parens++; break;
		case ')': parens--; break;
		case '<': angles++; break;
		case '>': if (angles) angles--; break;
		case '[': brackets++; break;
		case ']': brackets--; break;
		case '{': braces++; break;
		case '}': braces--; break;
		case ',':
			if (parens == 0 && angles == 0 && brackets == 0 && braces == 0) {
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
