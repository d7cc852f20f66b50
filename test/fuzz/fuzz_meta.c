/* test/fuzz/fuzz_meta.c: libFuzzer target for meta/'s image parser.
 *
 * Every input goes through ktrace_meta_classify, ktrace_meta_image_size and
 * ktrace_meta_parse (cubin, fatbin, wrapper, PTX or host ELF, whatever the
 * bytes say), for a device sm taken from the input's length, with no caches
 * and no followed pointers (a PTX image's entries' bodies are read for
 * what they write through their parameters, ptx_writes.c).  The same bytes
 * are also read as Triton TTIR of a kernel `k` (ttir_writes.c), whose
 * classification of any argument must be one of the three values, and as a
 * parameter's type (pointer_words.c, aten_closure.c).  DWARF
 * (libdw, not ours) is read only when KTRACE_FUZZ_DWARF is set.  Build and run: `make fuzz-meta`, then
 *   build/fuzz/fuzz_meta -max_total_time=600 build/fuzz/meta-corpus test/fuzz/corpus/meta
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meta/kernel_meta.h"
#include "meta/meta_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The checked-in corpus, for test/fuzz/corpus_replay.c (fuzz_meta_replay). */
extern const char *const fuzz_corpus[];
const char *const fuzz_corpus[] = { "test/fuzz/corpus/meta", "test/fuzz/corpus/meta-min", NULL };

/* The bytes as a parameter's type (demangled C++ and the rest,
 * pointer_words.c; ATen's closures and ReduceOp, aten_closure.c): the runs
 * it names lie inside a parameter of the size taken from the input, and
 * each calculator's tensor count is at most 16. */
static void pointer_words_check(const uint8_t *data, size_t size)
{
	char *type = malloc(size + 1);
	struct ktrace_ptr_words w;
	uint32_t psize = 8 + 8 * (uint32_t)(size % 200);

	if (!type)
		return;
	memcpy(type, data, size);
	type[size] = 0;
	if (ktrace_meta_pointer_words(type, psize, (uint8_t)(size % 6), &w))
		for (uint32_t r = 0; r < w.nruns; r++)
			if ((uint64_t)w.run[r].offset + 8ull * w.run[r].count > psize)
				abort();
	for (uint32_t k = 0; k < KTRACE_ATEN_CALC_HINTS; k++)
		if (w.calc_nargs[k] > 16 || (w.calc_nargs[k] && !w.aten_calculators))
			abort();
	free(type);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t sms[] = {0, 80, 86, 90, 100, 120, 130};
	static int dwarf = -1;
	if (dwarf < 0)
		dwarf = getenv("KTRACE_FUZZ_DWARF") != NULL;
	/* an exact-size copy, so that any overread is caught */
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	(void)ktrace_meta_classify(copy, size);
	size_t isz = ktrace_meta_image_size(copy, size);
	if (isz > size)
		abort(); /* never beyond the limit */
	struct ktrace_meta_opts o = {.device_sm = sms[size % 7], .use_dwarf = dwarf, .source_path = "fuzz"};
	struct ktrace_meta_image *img = NULL;
	char err[256];
	if (ktrace_meta_parse(copy, size, &o, &img, err, sizeof err) == 0) {
		for (uint32_t i = 0; i < img->nkernels; i++) {
			const struct ktrace_meta_kernel *k = &img->kernels[i];
			if (!k->name || !k->demangled || (k->nparams && !k->params))
				abort();
			for (uint32_t j = 0; j < k->nparams; j++)
				if (!k->params[j].name || !k->params[j].type || k->params[j].ordinal != j ||
				    k->params[j].written > KTRACE_WRITTEN_WRITTEN)
					abort();
			if (ktrace_meta_find(img, k->name) == NULL)
				abort();
		}
		ktrace_meta_free(img);
	} else if (img != NULL || !err[0]) {
		abort(); /* failures leave nothing and say why */
	}
	uint8_t written[8];
	uint32_t nargs = 1 + (uint32_t)(size % 8);
	(void)kt_ttir_writes((const char *)copy, size, "k", nargs, written);
	for (uint32_t i = 0; i < nargs; i++)
		if (written[i] > KTRACE_WRITTEN_WRITTEN)
			abort();
	free(copy);
	pointer_words_check(data, size);
	return 0;
}
