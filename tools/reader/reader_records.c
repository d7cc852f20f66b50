/* tools/reader/reader_records.c: libktrace-reader.so's generic records, for Python's
 * Trace.records() (python/ktrace/_reader.py): every record of one type of a
 * file as ktrace-dump --json prints it, and the record table as
 * ktrace-dump --record-table prints it.  A record type the Python module has
 * no class for is read the same way: its fields and their names come from
 * the record table (format/record_table.def), through the tools' one JSON
 * emitter (dump_json.c).  Launches carry no kernel names here (Trace.launches
 * do).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/record_table.h"
#include "format/trace_reader.h"
#include "tools/model/record_json.h"
#include "tools/model/ranges.h"

#define KTPY_API __attribute__((visibility("default")))

/* The records of one type into f; 0, or -1 with err (the file, or the type, at fault). */
static int records_of(const char *path, uint16_t type, FILE *f, char *err, size_t errlen)
{
	struct ktrace_reader *r = ktrace_reader_open(path, err, errlen);
	struct ktrace_ranges ranges;
	struct record_ctx c = { .out = f, .file = path, .ranges = &ranges };
	enum ktrace_read_status st;
	const void *rec;
	size_t len;

	if (!r)
		return -1;
	memset(&ranges, 0, sizeof ranges);
	c.format_major = ktrace_reader_major(r);
	c.format_minor = ktrace_reader_minor(r);
	c.exactness_known = c.format_major > 1 || c.format_minor >= 2;
	while ((st = ktrace_reader_next(r, &rec, &len)) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;
		struct ktrace_rec_range rg;

		if (ktrace_decode_prefix(rec, len, &p))
			continue;
		if (p.type == KTRACE_REC_RANGE && !ktrace_decode_range(rec, len, &rg))
			ktrace_ranges_add(&ranges, &rg);
		if (p.type == type)
			ktrace_record_json(&c, &p, rec, len, NULL);
	}
	if (st != KTRACE_READ_EOF)
		snprintf(err, errlen, "%s", ktrace_reader_error(r));
	ktrace_ranges_free(&ranges);
	ktrace_reader_close(r);
	return st == KTRACE_READ_EOF ? 0 : -1;
}

/* Every record of the type named `type` ("gputime", as ktrace-dump --json's
 * "type") in the file at path, as JSON Lines in *out (free with ktpy_free).
 * Returns 0; -1 with a message in err when the type is not one, or the file
 * cannot be read to its end (*out then holds what came before). */
KTPY_API int ktpy_records_json(const char *path, const char *type, char **out, size_t *outlen, char *err,
			       size_t errlen)
{
	size_t n;
	const struct ktrace_record_desc *d = ktrace_record_descs(&n);
	FILE *f;
	int rc;

	*out = NULL;
	*outlen = 0;
	while (n && strcmp(d->name, type)) {
		d++;
		n--;
	}
	if (!n) {
		snprintf(err, errlen, "no record type named '%s' (ktrace-dump --record-table lists them)", type);
		return -1;
	}
	f = open_memstream(out, outlen);
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = records_of(path, d->type, f, err, errlen);
	if (fclose(f))
		rc = -1;
	return rc;
}

/* The record table as ktrace-dump --record-table prints it (free with ktpy_free). */
KTPY_API char *ktpy_record_table(void)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	ktrace_record_table_json(f);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

KTPY_API void ktpy_free(void *p)
{
	free(p);
}
