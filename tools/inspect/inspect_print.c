/* tools/inspect/inspect_print.c: text, JSON and summary output of ktrace-inspect. */
#include "tools/inspect/inspect_print.h"

#include <string.h>

#include "format/ktrace_format.h"
#include "tools/model/json_writer.h"
#include "tools/model/value.h"

static const char *image_kind_name(int kind)
{
	switch (kind) {
	case KTRACE_IMAGE_CUBIN: return "cubin";
	case KTRACE_IMAGE_FATBIN: return "fatbin";
	case KTRACE_IMAGE_FATBIN_WRAPPER: return "fatbin-wrapper";
	case KTRACE_IMAGE_PTX: return "ptx";
	case KTRACE_IMAGE_HOST_ELF: return "host-elf";
	default: return "unknown";
	}
}

static const char *layout_name(uint32_t src)
{
	switch (src) {
	case KTRACE_LAYOUT_NVINFO: return "nvinfo";
	case KTRACE_LAYOUT_PTX: return "ptx";
	case KTRACE_LAYOUT_DRIVER: return "driver";
	default: return "none";
	}
}

/* What the kernel writes through a parameter: "read_only(ptx)", "written(ttir)",
 * "unknown"; "-" for one too small to hold a pointer. */
static const char *writes_text(const struct ktrace_meta_param *p, char *buf, size_t cap)
{
	if (p->size < 8)
		return "-";
	if (p->written == KTRACE_WRITTEN_UNKNOWN)
		return "unknown";
	snprintf(buf, cap, "%s(%s)", ktrace_param_written_name(p->written), ktrace_written_source_name(p->written_source));
	return buf;
}

void ktrace_inspect_print_text(FILE *f, const char *path, const struct ktrace_meta_image *img)
{
	fprintf(f, "== %s: %s, %u kernel%s\n", path, image_kind_name(img->kind), img->nkernels,
		img->nkernels == 1 ? "" : "s");
	for (uint32_t w = 0; w < img->nwarnings; w++)
		fprintf(f, "warning: %s\n", img->warnings[w]);
	for (uint32_t i = 0; i < img->nkernels; i++) {
		const struct ktrace_meta_kernel *k = &img->kernels[i];
		fprintf(f, "\n%s\n", k->name);
		if (k->demangled[0])
			fprintf(f, "  %s\n", k->demangled);
		fprintf(f, "  ");
		if (k->sm)
			fprintf(f, "sm_%u, ", k->sm);
		fprintf(f, "layout %s, %u parameter%s, %u bytes", layout_name(k->layout_source),
			k->nparams, k->nparams == 1 ? "" : "s", k->param_bytes);
		if (k->reqntid[0])
			fprintf(f, ", reqntid %ux%ux%u", k->reqntid[0], k->reqntid[1], k->reqntid[2]);
		if (k->max_threads)
			fprintf(f, ", max threads %u", k->max_threads);
		if (k->cuda_api_version)
			fprintf(f, ", CUDA API %u.%u", k->cuda_api_version / 10, k->cuda_api_version % 10);
		fputc('\n', f);
		if (!k->nparams)
			continue;
		fprintf(f, "  %4s %6s %6s  %-8s %-16s %-20s %-15s %s\n", "#", "offset", "size", "kind", "writes", "name",
			"source", "type");
		for (uint32_t j = 0; j < k->nparams; j++) {
			const struct ktrace_meta_param *p = &k->params[j];
			char fl[64], wr[32];
			ktrace_param_flag_names(p->flags, " ", fl, sizeof fl);
			fprintf(f, "  %4u %6u %6u  %-8s %-16s %-20s %-15s %s%s%s%s\n", p->ordinal, p->offset, p->size,
				ktrace_param_kind_name(p->kind), writes_text(p, wr, sizeof wr), p->name,
				ktrace_name_source_name(p->name_source), p->type[0] ? p->type : "-", fl[0] ? "  [" : "",
				fl, fl[0] ? "]" : "");
		}
	}
}

static void json_kernel(struct json_writer *w, const struct ktrace_meta_kernel *k)
{
	ktrace_json_break(w, 2);
	ktrace_json_object(w, NULL);
	ktrace_json_str(w, "name", k->name);
	ktrace_json_str(w, "demangled", k->demangled);
	ktrace_json_u64(w, "sm", k->sm);
	ktrace_json_str(w, "layout_source", layout_name(k->layout_source));
	ktrace_json_u64(w, "param_bytes", k->param_bytes);
	ktrace_json_dim3(w, "reqntid", k->reqntid);
	KTRACE_JSON_MEMBERS(w, JSON_U64("max_threads", k->max_threads),
			    JSON_U64("cuda_api_version", k->cuda_api_version));
	ktrace_json_array(w, "params");
	for (uint32_t j = 0; j < k->nparams; j++) {
		const struct ktrace_meta_param *p = &k->params[j];
		char fl[64];

		ktrace_json_object(w, NULL);
		KTRACE_JSON_MEMBERS(w, JSON_U64("ordinal", p->ordinal), JSON_U64("offset", p->offset),
				    JSON_U64("size", p->size));
		ktrace_json_str(w, "kind", ktrace_param_kind_name(p->kind));
		ktrace_json_str(w, "name", p->name);
		ktrace_json_str(w, "name_source", ktrace_name_source_name(p->name_source));
		ktrace_json_str(w, "type", p->type);
		ktrace_json_str(w, "written", ktrace_param_written_name(p->written));
		ktrace_json_str(w, "written_source", ktrace_written_source_name(p->written_source));
		KTRACE_JSON_MEMBERS(w, JSON_U64("space", p->space), JSON_U64("log_align", p->log_align));
		/* flags as ktrace-dump names them (docs/json.md) */
		ktrace_json_names(w, "flags", ktrace_param_flag_names(p->flags, ",", fl, sizeof fl));
		ktrace_json_end(w);
	}
	ktrace_json_end(w);
	ktrace_json_end(w);
}

void ktrace_inspect_print_json(FILE *f, const char *path, const struct ktrace_meta_image *img, int comma)
{
	struct json_writer w;

	if (comma)
		fputs(",\n", f);
	ktrace_json_init(&w, f, JSON_SPACED);
	ktrace_json_object(&w, NULL);
	ktrace_json_str(&w, "file", path);
	ktrace_json_str(&w, "kind", image_kind_name(img->kind));
	ktrace_json_array(&w, "warnings");
	for (uint32_t i = 0; i < img->nwarnings; i++)
		ktrace_json_str(&w, NULL, img->warnings[i]);
	ktrace_json_end(&w);
	ktrace_json_array(&w, "kernels");
	for (uint32_t i = 0; i < img->nkernels; i++)
		json_kernel(&w, &img->kernels[i]);
	if (img->nkernels)
		ktrace_json_break(&w, 0);
	ktrace_json_end(&w);
	ktrace_json_end(&w);
}

/* What --summary counts of an image. */
struct image_counts {
	uint64_t nparams, bysrc[8], bykind[4];
	uint64_t pointers_by_written[3]; /* pointer parameters by enum ktrace_param_written */
	uint32_t nolayout;
	uint32_t sms[32], smn[32], nsm; /* kernels per SASS architecture (0: PTX), in first-seen order */
};

static void count_image(const struct ktrace_meta_image *img, struct image_counts *c)
{
	memset(c, 0, sizeof *c);
	for (uint32_t i = 0; i < img->nkernels; i++) {
		const struct ktrace_meta_kernel *k = &img->kernels[i];
		uint32_t s;

		for (s = 0; s < c->nsm && c->sms[s] != k->sm; s++)
			;
		if (s == c->nsm && c->nsm < 32)
			c->sms[c->nsm++] = k->sm;
		if (s < c->nsm)
			c->smn[s]++;
		if (k->layout_source == KTRACE_LAYOUT_NONE)
			c->nolayout++;
		c->nparams += k->nparams;
		for (uint32_t j = 0; j < k->nparams; j++) {
			uint8_t src = k->params[j].name_source & 7;
			/* generated names count once, whether or not the demangled name gave a type */
			c->bysrc[src == KTRACE_NAME_DEMANGLED ? KTRACE_NAME_NONE : src]++;
			c->bykind[k->params[j].kind & 3]++;
			if (k->params[j].kind == KTRACE_PARAM_POINTER && k->params[j].written < 3)
				c->pointers_by_written[k->params[j].written]++;
		}
	}
}

static void summary_json(FILE *f, const char *path, const struct ktrace_meta_image *img, double parse_ms,
			 const struct image_counts *c)
{
	struct json_writer w;
	char key[16];

	ktrace_json_init(&w, f, JSON_SPACED);
	ktrace_json_object(&w, NULL);
	ktrace_json_str(&w, "file", path);
	ktrace_json_str(&w, "kind", image_kind_name(img->kind));
	KTRACE_JSON_MEMBERS(&w, JSON_U64("kernels", img->nkernels), JSON_U64("kernels_without_layout", c->nolayout),
			    JSON_U64("params", c->nparams), JSON_U64("pointer", c->bykind[KTRACE_PARAM_POINTER]),
			    JSON_U64("scalar", c->bykind[KTRACE_PARAM_SCALAR]),
			    JSON_U64("struct", c->bykind[KTRACE_PARAM_STRUCT]));
	ktrace_json_object(&w, "names");
	for (int s = 0; s < 7; s++)
		if (s != KTRACE_NAME_DEMANGLED)
			ktrace_json_u64(&w, ktrace_name_source_name((uint8_t)s), c->bysrc[s]);
	ktrace_json_end(&w);
	ktrace_json_object(&w, "pointers_written");
	for (uint8_t s = 0; s < 3; s++)
		ktrace_json_u64(&w, ktrace_param_written_name(s), c->pointers_by_written[s]);
	ktrace_json_end(&w);
	ktrace_json_object(&w, "kernels_by_sm");
	for (uint32_t s = 0; s < c->nsm; s++) {
		snprintf(key, sizeof key, "%u", c->sms[s]);
		ktrace_json_u64(&w, key, c->smn[s]);
	}
	ktrace_json_end(&w);
	ktrace_json_u64(&w, "warnings", img->nwarnings);
	ktrace_json_double(&w, "parse_ms", parse_ms, "%.3f");
	ktrace_json_end(&w);
	fputc('\n', f);
}

void ktrace_inspect_print_totals(FILE *f, const struct ktrace_inspect_totals *t, int json)
{
	const uint64_t *w = t->pointers_by_written;
	uint64_t all = w[0] + w[1] + w[2];

	if (json) {
		struct json_writer jw;

		ktrace_json_init(&jw, f, JSON_SPACED);
		ktrace_json_object(&jw, NULL);
		ktrace_json_str(&jw, "total", "files");
		KTRACE_JSON_MEMBERS(&jw, JSON_U64("files", t->files), JSON_U64("kernels", t->kernels),
				    JSON_U64("pointer", all));
		ktrace_json_object(&jw, "pointers_written");
		for (uint8_t s = 0; s < 3; s++)
			ktrace_json_u64(&jw, ktrace_param_written_name(s), w[s]);
		ktrace_json_end(&jw);
		ktrace_json_end(&jw);
		fputc('\n', f);
		return;
	}
	fprintf(f, "total: %llu files, %llu kernels, %llu pointer parameters: read_only %llu (%.0f%%), written %llu, "
		   "unknown %llu\n", (unsigned long long)t->files, (unsigned long long)t->kernels,
		(unsigned long long)all, (unsigned long long)w[KTRACE_WRITTEN_READ_ONLY],
		all ? 100.0 * (double)w[KTRACE_WRITTEN_READ_ONLY] / (double)all : 0.0,
		(unsigned long long)w[KTRACE_WRITTEN_WRITTEN], (unsigned long long)w[KTRACE_WRITTEN_UNKNOWN]);
}

void ktrace_inspect_print_summary(FILE *f, const char *path, const struct ktrace_meta_image *img,
				  double parse_ms, int json, struct ktrace_inspect_totals *totals)
{
	struct image_counts c;

	count_image(img, &c);
	if (totals) {
		totals->files++;
		totals->kernels += img->nkernels;
		for (int s = 0; s < 3; s++)
			totals->pointers_by_written[s] += c.pointers_by_written[s];
	}
	if (json) {
		summary_json(f, path, img, parse_ms, &c);
		return;
	}
	fprintf(f, "%s: %s, %u kernel%s (%u without layout), %llu parameter%s (pointer %llu, scalar %llu, struct %llu); "
		   "names:", path, image_kind_name(img->kind), img->nkernels, img->nkernels == 1 ? "" : "s",
		c.nolayout, (unsigned long long)c.nparams, c.nparams == 1 ? "" : "s",
		(unsigned long long)c.bykind[KTRACE_PARAM_POINTER], (unsigned long long)c.bykind[KTRACE_PARAM_SCALAR],
		(unsigned long long)c.bykind[KTRACE_PARAM_STRUCT]);
	for (int s = 0; s < 7; s++)
		if (c.bysrc[s])
			fprintf(f, " %s %llu", ktrace_name_source_name((uint8_t)s), (unsigned long long)c.bysrc[s]);
	fprintf(f, "; pointers read_only %llu, written %llu, unknown %llu",
		(unsigned long long)c.pointers_by_written[KTRACE_WRITTEN_READ_ONLY],
		(unsigned long long)c.pointers_by_written[KTRACE_WRITTEN_WRITTEN],
		(unsigned long long)c.pointers_by_written[KTRACE_WRITTEN_UNKNOWN]);
	fputs("; kernels by sm:", f);
	for (uint32_t s = 0; s < c.nsm; s++)
		if (c.sms[s])
			fprintf(f, " sm_%u %u", c.sms[s], c.smn[s]);
		else
			fprintf(f, " ptx %u", c.smn[s]);
	fprintf(f, "; %u warnings; parsed in %.1f ms\n", img->nwarnings, parse_ms);
}
