/* test/nccl/nccl_missing.c: a program that calls NCCL with no NCCL loaded.
 *
 * Linked with no libnccl: it finds ncclAllReduce, ncclGroupStart and
 * ncclCommInitRank by name in the process (dlsym(RTLD_DEFAULT)), which
 * under LD_PRELOAD=libktrace.so are ktrace's wrappers, and calls each
 * twice.  test/nccl/nccl_test.c checks that each call returns
 * ncclSystemError (2), as "rc NAME CODE" lines say, that one line on stderr
 * says why, and that nothing crashed.  Without ktrace there is nothing to
 * call: "absent" and exit status 0.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

typedef int (*all_reduce_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef int (*group_start_fn)(void);
typedef struct {
	char internal[128];
} unique_id;
typedef int (*init_rank_fn)(void **, int, unique_id, int);

int main(void)
{
	all_reduce_fn all_reduce = (all_reduce_fn)dlsym(RTLD_DEFAULT, "ncclAllReduce");
	group_start_fn group_start = (group_start_fn)dlsym(RTLD_DEFAULT, "ncclGroupStart");
	init_rank_fn init_rank = (init_rank_fn)dlsym(RTLD_DEFAULT, "ncclCommInitRank");
	unique_id id = { { 0 } };
	void *comm = NULL;

	if (!all_reduce || !group_start || !init_rank) {
		puts("absent");
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		printf("rc all_reduce %d\n", all_reduce(NULL, NULL, 0, 7, 0, NULL, NULL));
		printf("rc group_start %d\n", group_start());
		printf("rc init %d\n", init_rank(&comm, 1, id, 0));
	}
	return 0;
}
