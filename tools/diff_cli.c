/* tools/diff_cli.c: the diff options and report dispatch shared by ktrace-diff
 * and `ktrace check`.
 */
#include "tools/diff.h"

#include <string.h>

/* "--name VALUE" or "--name=VALUE": returns the value or NULL. */
static const char *opt_value(const char *name, int argc, char **argv, int *i, int *matched)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	*matched = 0;
	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=') {
		*matched = 1;
		return a + n + 1;
	}
	if (a[n] != '\0')
		return NULL;
	*matched = 1;
	if (*i + 1 >= argc)
		return NULL;
	(*i)++;
	return argv[*i];
}

int ktrace_diff_cli_arg(struct diff_cli *c, int argc, char **argv, int *i, char *err, size_t errlen)
{
	const char *a = argv[*i];
	static const struct {
		const char *name;
		size_t off;
	} flags[] = {
		{ "--all", offsetof(struct diff_cli, o.all) },
		{ "--strict", offsetof(struct diff_cli, o.strict) },
		{ "--partial", offsetof(struct diff_cli, o.allow_truncated) },
		{ "--json", offsetof(struct diff_cli, json) },
		{ "--github", offsetof(struct diff_cli, github) },
		{ "--quiet", offsetof(struct diff_cli, quiet) },
	};
	for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
		if (!strcmp(a, flags[k].name)) {
			*(int *)((char *)c + flags[k].off) = 1;
			(*i)++;
			return 1;
		}
	static const char *const valued[] = { "--junit", "--markdown" };
	for (size_t k = 0; k < 2; k++) {
		int matched;
		const char *v = opt_value(valued[k], argc, argv, i, &matched);
		if (!matched)
			continue;
		if (!v || !*v) {
			snprintf(err, errlen, "%s needs a file name", valued[k]);
			return -1;
		}
		if (k == 0)
			c->junit = v;
		else
			c->markdown = v;
		(*i)++;
		return 1;
	}
	return 0;
}

void ktrace_diff_cli_help(FILE *f)
{
	fputs("  --all             report every divergence (default: the first) and count all kernels\n"
	      "  --json            print the report as JSON instead of text\n"
	      "  --junit FILE      also write a JUnit XML report: a test case per kernel name\n"
	      "  --github          also print GitHub Actions annotations (::error ...); on stderr with --json\n"
	      "  --markdown FILE   also append a Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)\n"
	      "  --strict          launches found in one run only, or not hashed, also fail\n"
	      "  --partial         accept truncated traces (crashed runs): compare what was written\n"
	      "  --quiet           print no text report (exit code and report files only)\n",
	      f);
}

int ktrace_diff_cli_report(const struct diff_cli *c, const struct diff_result *const *rs, size_t n, FILE *out,
			   char *err, size_t errlen)
{
	if (c->json && !c->quiet) {
		if (n > 1)
			fprintf(out, "[\n");
		for (size_t i = 0; i < n; i++) {
			ktrace_diff_report_json(out, rs[i], &c->o, n > 1 ? 2 : 0);
			fprintf(out, "%s\n", n > 1 && i + 1 < n ? "," : "");
		}
		if (n > 1)
			fprintf(out, "]\n");
	} else if (!c->quiet) {
		for (size_t i = 0; i < n; i++) {
			if (i)
				fprintf(out, "\n");
			ktrace_diff_report_text(out, rs[i], &c->o);
		}
	}
	if (c->github)
		for (size_t i = 0; i < n; i++)
			ktrace_diff_report_github(c->json ? stderr : out, rs[i], &c->o);
	fflush(out);
	if (c->junit && ktrace_diff_report_junit(c->junit, rs, n, err, errlen))
		return -1;
	if (c->markdown && ktrace_diff_report_markdown(c->markdown, rs, n, err, errlen))
		return -1;
	return 0;
}
