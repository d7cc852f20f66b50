/* tools/cli/run_python.c: the Python side of `ktrace run` and `ktrace check`
 * (ktrace_cli.h): ktrace's Python start-up hook (python/pyhook/
 * sitecustomize.py, installed as <libdir>/ktrace-pyhook/sitecustomize.py)
 * first on PYTHONPATH, and the variables it and the library read:
 * KTRACE_TORCH_OPS=1 (PyTorch's op ranges) and KTRACE_PYSTACK (Python
 * stacks; common/pystack_spec.h).  docs/ranges.md.
 */
#include "tools/cli/ktrace_cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/pystack_spec.h"
#include "tools/cli/cli_options.h"

int ktrace_check_python_stack(const char *v, char *err, size_t errlen)
{
	struct ktrace_pystack_spec s;
	char why[300];

	if (ktrace_pystack_spec_parse(v, &s, why, sizeof why))
		return ktrace_cli_bad_value(err, errlen, "--python-stack", v, why);
	ktrace_pystack_spec_free(&s);
	return 0;
}

/* dir first on PYTHONPATH (once). */
static int pythonpath_first(const char *dir, char *err, size_t errlen)
{
	const char *old = getenv("PYTHONPATH");
	size_t n = strlen(dir), m = old ? strlen(old) : 0;
	char *v;
	int rc;

	if (old && !strncmp(old, dir, n) && (old[n] == ':' || !old[n]))
		return 0;
	if (!(v = malloc(n + m + 2))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(v, n + m + 2, "%s%s%s", dir, m ? ":" : "", m ? old : "");
	rc = ktrace_set_env("PYTHONPATH", v, err, errlen);
	free(v);
	return rc;
}

int ktrace_set_python_env(const struct ktrace_run_opts *o, int torch_ops, const char *lib, char *err,
			  size_t errlen)
{
	char dir[PATH_MAX], hook[PATH_MAX + 32];
	const char *slash = strrchr(lib, '/');

	if (!torch_ops && !o->python_stack)
		return 0;
	if ((o->python_stack && ktrace_set_env("KTRACE_PYSTACK", o->python_stack, err, errlen)) ||
	    (torch_ops && ktrace_set_env("KTRACE_TORCH_OPS", "1", err, errlen)))
		return -1;
	snprintf(dir, sizeof dir, "%.*s/ktrace-pyhook", slash ? (int)(slash - lib) : 1, slash ? lib : ".");
	snprintf(hook, sizeof hook, "%s/sitecustomize.py", dir);
	if (access(hook, R_OK) != 0) {
		if (!o->quiet)
			fprintf(stderr, "ktrace: note: no Python start-up hook at %s: no PyTorch op ranges, no Python "
					"stacks (the library still records NVTX ranges)\n", hook);
		return 0;
	}
	return pythonpath_first(dir, err, errlen);
}
