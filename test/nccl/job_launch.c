/* test/nccl/job_launch.c: a small launcher of a distributed job, for the
 * end-to-end `ktrace check` test of a job (test/nccl/job_e2e_test.c).
 *
 *   job_launch PROG [ARGS...]
 *
 * Starts JOB_LAUNCH_RANKS (2 by default) processes of PROG ARGS, as torchrun
 * would: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
 * MASTER_ADDR, MASTER_PORT and TORCHELASTIC_RUN_ID set, and JOB_ID_FILE, a
 * fresh path in a scratch folder of this invocation (test/scratch.h) through
 * which the ranks share NCCL's unique id (also FAKENCCL_DIR: the fake NCCL's
 * segment lands there).  JOB_COUNTER=FILE: the number in FILE (0 if none) is
 * this run's number, written back plus one, and passed to the ranks as
 * JOB_RUN.  Waits for every rank, removes the scratch folder, and exits 0
 * when every rank exited 0, 1 otherwise (2: usage or setup).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/scratch.h"

static int next_run(void)
{
	const char *counter = getenv("JOB_COUNTER");
	int run = 0;
	FILE *f;

	if (!counter)
		return -1;
	if ((f = fopen(counter, "r"))) {
		if (fscanf(f, "%d", &run) != 1)
			run = 0;
		fclose(f);
	}
	if ((f = fopen(counter, "w"))) {
		fprintf(f, "%d\n", run + 1);
		fclose(f);
	}
	return run;
}

static void remove_dir(const char *dir)
{
	char path[4400];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void set_int(const char *name, long v)
{
	char s[32];

	snprintf(s, sizeof s, "%ld", v);
	setenv(name, s, 1);
}

int main(int argc, char **argv)
{
	const char *nr = getenv("JOB_LAUNCH_RANKS");
	int nranks = nr && *nr ? atoi(nr) : 2, run = next_run(), status = 0;
	char dir[4096], idfile[4200], runid[64];
	pid_t pids[64];

	if (argc < 2 || nranks < 1 || nranks > 64) {
		fprintf(stderr, "usage: job_launch PROG [ARGS...] (JOB_LAUNCH_RANKS 1 to 64)\n");
		return 2;
	}
	if (!kt_scratch_dir(dir, sizeof dir, "jobid")) {
		perror("job_launch: scratch folder");
		return 2;
	}
	snprintf(idfile, sizeof idfile, "%s/unique-id", dir);
	snprintf(runid, sizeof runid, "job-launch-%ld", (long)getpid());
	setenv("JOB_ID_FILE", idfile, 1);
	setenv("FAKENCCL_DIR", dir, 1);
	set_int("WORLD_SIZE", nranks);
	set_int("LOCAL_WORLD_SIZE", nranks);
	setenv("GROUP_RANK", "0", 1);
	setenv("MASTER_ADDR", "127.0.0.1", 1);
	setenv("MASTER_PORT", "29500", 1);
	setenv("TORCHELASTIC_RUN_ID", runid, 1);
	if (run >= 0)
		set_int("JOB_RUN", run);
	fflush(NULL);
	for (int k = 0; k < nranks; k++) {
		pids[k] = fork();
		if (pids[k] < 0) {
			perror("job_launch: fork");
			nranks = k;
			status = 1;
			break;
		}
		if (pids[k] == 0) {
			set_int("RANK", k);
			set_int("LOCAL_RANK", k);
			execv(argv[1], argv + 1);
			perror("job_launch: exec");
			_exit(127);
		}
	}
	for (int k = 0; k < nranks; k++) {
		int st;

		if (waitpid(pids[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "job_launch: rank %d failed\n", k);
			status = 1;
		}
	}
	remove_dir(dir);
	return status;
}
