/* tools/dump/dump_written.c: --summary's count of the pointer parameters
 * the kernels' code is proven not to write through (format 1.14, KERNEL
 * parameter `written`): over the kernels that launched, and over their
 * launches (a parameter of a kernel launched n times counts n times), the
 * share a hash pipeline could leave without a post-digest.
 */
#include "tools/dump/dump_internal.h"

#include "tools/model/json_writer.h"

/* Pointer parameters of k, and of those the ones proven read-only. */
static void count_kernel(const struct ktrace_rec_kernel *k, uint64_t *pointers, uint64_t *read_only)
{
	struct ktrace_param_desc d;

	*pointers = *read_only = 0;
	for (uint32_t i = 0; i < k->nparams; i++) {
		if (ktrace_kernel_param(k, i, &d) || d.kind != KTRACE_PARAM_POINTER)
			continue;
		(*pointers)++;
		*read_only += d.written == KTRACE_WRITTEN_READ_ONLY;
	}
}

void ktrace_dump_written_count(const struct dump_kernel *k, struct dump_written *w)
{
	uint64_t pointers, read_only;

	count_kernel(&k->k, &pointers, &read_only);
	w->kernels++;
	w->pointers += pointers;
	w->read_only += read_only;
	w->launch_pointers += pointers * k->launches;
	w->launch_read_only += read_only * k->launches;
	if (read_only)
		w->launches_with_read_only += k->launches;
	w->launches += k->launches;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

void ktrace_dump_written_print(FILE *f, const char *file, const struct dump_written *w, int json)
{
	if (!json) {
		fprintf(f, "  pointer parameters proven read-only: %llu of %llu of the kernels' (%.0f%%); "
			   "%llu of %llu in launches (%.0f%%), in %llu of %llu launches\n",
			(unsigned long long)w->read_only, (unsigned long long)w->pointers, pct(w->read_only, w->pointers),
			(unsigned long long)w->launch_read_only, (unsigned long long)w->launch_pointers,
			pct(w->launch_read_only, w->launch_pointers), (unsigned long long)w->launches_with_read_only,
			(unsigned long long)w->launches);
		return;
	}
	struct json_writer jw;
	ktrace_json_init(&jw, f, JSON_COMPACT);
	ktrace_json_object(&jw, NULL);
	ktrace_json_str(&jw, "summary", "read_only");
	ktrace_json_str(&jw, "file", file);
	KTRACE_JSON_MEMBERS(&jw, JSON_U64("kernels", w->kernels), JSON_U64("pointers", w->pointers),
			    JSON_U64("read_only", w->read_only), JSON_U64("launches", w->launches),
			    JSON_U64("launch_pointers", w->launch_pointers),
			    JSON_U64("launch_read_only", w->launch_read_only),
			    JSON_U64("launches_with_read_only", w->launches_with_read_only));
	ktrace_json_end(&jw);
	fputc('\n', f);
}
