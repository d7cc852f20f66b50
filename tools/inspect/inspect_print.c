/* tools/inspect/inspect_print.c: text, JSON and summary output of ktrace-inspect. */
#include "tools/inspect/inspect_print.h"

#include <string.h>

#include "format/ktrace_format.h"

const char *ktrace_inspect_image_kind_name(int kind)
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

const char *ktrace_inspect_layout_name(uint32_t src)
{
	switch (src) {
	case KTRACE_LAYOUT_NVINFO: return "nvinfo";
	case KTRACE_LAYOUT_PTX: return "ptx";
	case KTRACE_LAYOUT_DRIVER: return "driver";
	default: return "none";
	}
}

static void flags_text(char *buf, size_t cap, uint32_t flags)
{
	buf[0] = 0;
	if (flags & KTRACE_PARAMF_CONST)
		strncat(buf, " const", cap - strlen(buf) - 1);
	if (flags & KTRACE_PARAMF_SCRATCH)
		strncat(buf, " scratch", cap - strlen(buf) - 1);
	if (flags & KTRACE_PARAMF_HIDDEN)
		strncat(buf, " hidden", cap - strlen(buf) - 1);
}

void ktrace_inspect_print_text(FILE *f, const char *path, const struct ktrace_meta_image *img)
{
	fprintf(f, "== %s: %s, %u kernel%s\n", path, ktrace_inspect_image_kind_name(img->kind), img->nkernels,
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
		fprintf(f, "layout %s, %u parameter%s, %u bytes", ktrace_inspect_layout_name(k->layout_source),
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
		fprintf(f, "  %4s %6s %6s  %-8s %-20s %-15s %s\n", "#", "offset", "size", "kind", "name", "source", "type");
		for (uint32_t j = 0; j < k->nparams; j++) {
			const struct ktrace_meta_param *p = &k->params[j];
			char fl[64];
			flags_text(fl, sizeof fl, p->flags);
			fprintf(f, "  %4u %6u %6u  %-8s %-20s %-15s %s%s%s%s\n", p->ordinal, p->offset, p->size,
				ktrace_param_kind_name(p->kind), p->name, ktrace_name_source_name(p->name_source),
				p->type[0] ? p->type : "-", fl[0] ? "  [" : "", fl[0] ? fl + 1 : "", fl[0] ? "]" : "");
		}
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void ktrace_inspect_print_json(FILE *f, const char *path, const struct ktrace_meta_image *img, int comma)
{
	if (comma)
		fputs(",\n", f);
	fputs("{\"file\": ", f);
	json_str(f, path);
	fprintf(f, ", \"kind\": \"%s\", \"warnings\": [", ktrace_inspect_image_kind_name(img->kind));
	for (uint32_t w = 0; w < img->nwarnings; w++) {
		if (w)
			fputs(", ", f);
		json_str(f, img->warnings[w]);
	}
	fputs("], \"kernels\": [", f);
	for (uint32_t i = 0; i < img->nkernels; i++) {
		const struct ktrace_meta_kernel *k = &img->kernels[i];
		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
		json_str(f, k->name);
		fputs(", \"demangled\": ", f);
		json_str(f, k->demangled);
		fprintf(f, ", \"sm\": %u, \"layout_source\": \"%s\", \"param_bytes\": %u, "
			"\"reqntid\": [%u, %u, %u], \"max_threads\": %u, \"cuda_api_version\": %u, \"params\": [",
			k->sm, ktrace_inspect_layout_name(k->layout_source), k->param_bytes, k->reqntid[0],
			k->reqntid[1], k->reqntid[2], k->max_threads, k->cuda_api_version);
		for (uint32_t j = 0; j < k->nparams; j++) {
			const struct ktrace_meta_param *p = &k->params[j];
			fprintf(f, "%s{\"ordinal\": %u, \"offset\": %u, \"size\": %u, \"kind\": \"%s\", \"name\": ",
				j ? ", " : "", p->ordinal, p->offset, p->size, ktrace_param_kind_name(p->kind));
			json_str(f, p->name);
			fprintf(f, ", \"name_source\": \"%s\", \"type\": ", ktrace_name_source_name(p->name_source));
			json_str(f, p->type);
			/* flags as ktrace-dump names them (docs/json.md) */
			fprintf(f, ", \"space\": %u, \"log_align\": %u, \"flags\": [%s%s%s%s%s]}", p->space, p->log_align,
				p->flags & KTRACE_PARAMF_CONST ? "\"const\"" : "",
				p->flags & KTRACE_PARAMF_CONST && p->flags & (KTRACE_PARAMF_SCRATCH | KTRACE_PARAMF_HIDDEN) ?
					", " : "",
				p->flags & KTRACE_PARAMF_SCRATCH ? "\"scratch\"" : "",
				p->flags & KTRACE_PARAMF_SCRATCH && p->flags & KTRACE_PARAMF_HIDDEN ? ", " : "",
				p->flags & KTRACE_PARAMF_HIDDEN ? "\"hidden\"" : "");
		}
		fputs("]}", f);
	}
	fputs(img->nkernels ? "\n]}" : "]}", f);
}

void ktrace_inspect_print_summary(FILE *f, const char *path, const struct ktrace_meta_image *img,
				  double parse_ms, int json)
{
	uint64_t nparams = 0, bysrc[8] = {0}, bykind[4] = {0};
	uint32_t nolayout = 0;
	uint32_t sms[32] = {0}, smn[32] = {0}, nsm = 0;
	for (uint32_t i = 0; i < img->nkernels; i++) {
		const struct ktrace_meta_kernel *k = &img->kernels[i];
		uint32_t s;
		for (s = 0; s < nsm && sms[s] != k->sm; s++)
			;
		if (s == nsm && nsm < 32)
			sms[nsm++] = k->sm;
		if (s < nsm)
			smn[s]++;
		if (k->layout_source == KTRACE_LAYOUT_NONE)
			nolayout++;
		nparams += k->nparams;
		for (uint32_t j = 0; j < k->nparams; j++) {
			uint8_t src = k->params[j].name_source & 7;
			/* generated names count once, whether or not the demangled name gave a type */
			bysrc[src == KTRACE_NAME_DEMANGLED ? KTRACE_NAME_NONE : src]++;
			bykind[k->params[j].kind & 3]++;
		}
	}
	if (json) {
		fputs("{\"file\": ", f);
		json_str(f, path);
		fprintf(f, ", \"kind\": \"%s\", \"kernels\": %u, \"kernels_without_layout\": %u, \"params\": %llu, "
			"\"pointer\": %llu, \"scalar\": %llu, \"struct\": %llu, \"names\": {",
			ktrace_inspect_image_kind_name(img->kind), img->nkernels, nolayout,
			(unsigned long long)nparams, (unsigned long long)bykind[KTRACE_PARAM_POINTER],
			(unsigned long long)bykind[KTRACE_PARAM_SCALAR], (unsigned long long)bykind[KTRACE_PARAM_STRUCT]);
		for (int s = 0; s < 7; s++)
			if (s != KTRACE_NAME_DEMANGLED)
				fprintf(f, "%s\"%s\": %llu", s ? ", " : "", ktrace_name_source_name((uint8_t)s),
					(unsigned long long)bysrc[s]);
		fputs("}, \"kernels_by_sm\": {", f);
		for (uint32_t s = 0; s < nsm; s++)
			fprintf(f, "%s\"%u\": %u", s ? ", " : "", sms[s], smn[s]);
		fprintf(f, "}, \"warnings\": %u, \"parse_ms\": %.3f}\n", img->nwarnings, parse_ms);
		return;
	}
	fprintf(f, "%s: %s, %u kernel%s (%u without layout), %llu parameter%s (pointer %llu, scalar %llu, struct %llu); "
		   "names:", path, ktrace_inspect_image_kind_name(img->kind), img->nkernels, img->nkernels == 1 ? "" : "s",
		nolayout, (unsigned long long)nparams, nparams == 1 ? "" : "s",
		(unsigned long long)bykind[KTRACE_PARAM_POINTER], (unsigned long long)bykind[KTRACE_PARAM_SCALAR],
		(unsigned long long)bykind[KTRACE_PARAM_STRUCT]);
	for (int s = 0; s < 7; s++)
		if (bysrc[s])
			fprintf(f, " %s %llu", ktrace_name_source_name((uint8_t)s), (unsigned long long)bysrc[s]);
	fputs("; kernels by sm:", f);
	for (uint32_t s = 0; s < nsm; s++)
		if (sms[s])
			fprintf(f, " sm_%u %u", sms[s], smn[s]);
		else
			fprintf(f, " ptx %u", smn[s]);
	fprintf(f, "; %u warnings; parsed in %.1f ms\n", img->nwarnings, parse_ms);
}
