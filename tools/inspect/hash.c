/* tools/inspect/hash.c: ktrace-hash, the KT64V1 digest of files.
 *
 *   ktrace-hash [FILE...]     prints "<16 hex digits>  <file>" per file
 *   ktrace-hash -h|--help|--version
 *
 * Options and files may come in any order ("--" ends the options).
 *
 * FILE "-" (or no FILE) reads standard input.  The digest is the one ktrace
 * records for a GPU buffer holding the same bytes (docs/format.md, "Digest"),
 * computed with the streaming CPU reference.  Exit 0, or 2 if any file could
 * not be read (one line on stderr per file at fault).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hashkern/ktrace_digest.h"
#include "tools/cli/cli_options.h"

#define BUF_SIZE (1u << 20)

static uint8_t buf[BUF_SIZE];

static void usage(FILE *f)
{
	fputs("usage: ktrace-hash [FILE...]\n"
	      "Print the ktrace KT64V1 digest of each FILE (\"-\" or none: standard input),\n"
	      "the digest ktrace records for a GPU buffer holding the same bytes.\n"
	      "\n"
	      "options:\n"
	      "  -h, --help          this text\n"
	      "  --version           print the version\n"
	      "\n"
	      "Exit status: 0, or 2 when a file could not be read.\n",
	      f);
}

/* Digest of everything readable from fd; 0, or -1 with errno set. */
static int digest_fd(int fd, uint64_t *out)
{
	struct ktrace_digest_state s;

	ktrace_digest_init(&s);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		ktrace_digest_update(&s, buf, (size_t)n);
	}
	*out = ktrace_digest_final(&s);
	return 0;
}

static int hash_one(const char *path)
{
	int is_stdin = strcmp(path, "-") == 0;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	uint64_t d;
	int rc;

	if (fd < 0) {
		fprintf(stderr, "ktrace-hash: %s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	rc = digest_fd(fd, &d);
	if (rc < 0)
		fprintf(stderr, "ktrace-hash: %s: cannot read: %s\n", path, strerror(errno));
	else
		printf("%016" PRIx64 "  %s\n", d, path);
	if (!is_stdin)
		close(fd);
	return rc;
}

/* The files given (none: standard input). */
static int hash_files(void *ctx, int argc, char **argv)
{
	int failed = 0;

	(void)ctx;
	if (!argc)
		failed |= hash_one("-") < 0;
	for (int i = 0; i < argc; i++)
		failed |= hash_one(argv[i]) < 0;
	return failed ? 2 : 0;
}

static const struct option *const hash_option_tables[] = { ktrace_cli_help_options, NULL };
static const struct ktrace_cli_tool hash_tool = {
	.name = "ktrace-hash", .version = "ktrace-hash " KTRACE_VERSION " (digest KT64V1)", .usage = usage,
	.shortopts = ":h", .options = hash_option_tables, .run = hash_files,
};

int main(int argc, char **argv)
{

	return ktrace_cli_main(&hash_tool, NULL, argc, argv);
}
