/* test/fuzz/corpus_replay.c: runs a libFuzzer target's checked-in corpus as an
 * ordinary test program, so `make test` (gcc) and `make check-asan` (ASan and
 * UBSan) run every seed and every input a fuzzing session kept or that once
 * failed, without clang's libFuzzer.
 *
 * Linked with one target: its LLVMFuzzerTestOneInput and its fuzz_corpus, the
 * folders of its corpus relative to the repository root (the working
 * directory of the tests).  With arguments, those folders or files instead.
 * Exit 0 when every input ran (a crash ends the program), 1 when a folder is
 * missing or empty.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern const char *const fuzz_corpus[]; /* NULL-terminated */

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	buf = malloc((size_t)n + 1); /* an exact-size copy (+1 for n = 0), as libFuzzer hands out */
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

/* Every regular file of dir (or dir itself when it is a file); the count run, or -1. */
static long run_path(const char *dir)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	long count = 0;

	if (stat(dir, &st))
		return -1;
	if (!S_ISDIR(st.st_mode))
		return run_file(dir) ? -1 : 1;
	if (!(d = opendir(dir)))
		return -1;
	while ((e = readdir(d))) {
		char path[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (run_file(path)) {
			closedir(d);
			return -1;
		}
		count++;
	}
	closedir(d);
	return count;
}

int main(int argc, char **argv)
{
	long total = 0;
	int bad = 0;

	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			long n = run_path(argv[i]);
			bad |= n <= 0;
			total += n > 0 ? n : 0;
		}
	} else {
		for (const char *const *dir = fuzz_corpus; *dir; dir++) {
			long n = run_path(*dir);
			if (n <= 0)
				fprintf(stderr, "%s: %s\n", *dir, n < 0 ? "cannot be read" : "no inputs");
			bad |= n <= 0;
			total += n > 0 ? n : 0;
		}
	}
	printf("%s: %ld inputs ran%s\n", argv[0], total, bad ? "; a folder is missing or empty" : "");
	return bad;
}
