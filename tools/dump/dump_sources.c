/* tools/dump/dump_sources.c: --summary's account of the bytes the checksum
 * kernel read, by where each region's pointer came from (a pointer
 * parameter, a word of a by-value struct whose layout is known, a word
 * guessed by its value: docs/format.md, "Pointer words"), and of the digests
 * ktrace did not measure (carried pre-digests, read-only post-digests).
 */
#include "tools/dump/dump_internal.h"

#include "tools/model/json_writer.h"

static const char *const source_name[DUMP_SOURCES] = { "pointer", "struct", "guessed" };

void ktrace_dump_sources_add(struct dump_sources *d, const struct ktrace_region *g, unsigned measured)
{
	int src = (g->flags & KTRACE_REGIONF_GUESSED) ? 2 : (g->flags & KTRACE_REGIONF_IN_STRUCT) ? 1 : 0;

	d->regions[src]++;
	d->bytes[src] += g->hash_len * (uint64_t)measured;
	d->pre_carried += (g->flags & KTRACE_REGIONF_PRE) && (g->flags & KTRACE_REGIONF_PRE_CARRIED);
	d->post_carried += (g->flags & KTRACE_REGIONF_POST) && (g->flags & KTRACE_REGIONF_POST_CARRIED);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

void ktrace_dump_sources_print(FILE *f, const char *file, const struct dump_sources *d, int json)
{
	uint64_t all = d->bytes[0] + d->bytes[1] + d->bytes[2];

	if (!json) {
		fputs("  hashed bytes by pointer source:", f);
		for (int i = 0; i < DUMP_SOURCES; i++)
			fprintf(f, "%s %s %llu (%.1f%%, %llu region%s)", i ? "," : "", source_name[i],
				(unsigned long long)d->bytes[i], pct(d->bytes[i], all), (unsigned long long)d->regions[i],
				d->regions[i] == 1 ? "" : "s");
		fprintf(f, "; digests not measured: %llu pre carried, %llu post read-only\n",
			(unsigned long long)d->pre_carried, (unsigned long long)d->post_carried);
		return;
	}
	struct json_writer jw;
	ktrace_json_init(&jw, f, JSON_COMPACT);
	ktrace_json_object(&jw, NULL);
	ktrace_json_str(&jw, "summary", "sources");
	ktrace_json_str(&jw, "file", file);
	for (int i = 0; i < DUMP_SOURCES; i++) {
		ktrace_json_object(&jw, source_name[i]);
		KTRACE_JSON_MEMBERS(&jw, JSON_U64("hashed_bytes", d->bytes[i]), JSON_U64("regions", d->regions[i]));
		ktrace_json_end(&jw);
	}
	KTRACE_JSON_MEMBERS(&jw, JSON_U64("pre_carried", d->pre_carried), JSON_U64("post_carried", d->post_carried));
	ktrace_json_end(&jw);
	fputc('\n', f);
}
