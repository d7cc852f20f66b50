/* tools/model/record_table_json.c: the record table (format/record_table.def)
 * as one JSON document (ktrace-dump --record-table, ktrace.record_table()):
 * every record type, and each of its fields with its offset, wire type, how
 * the tools show it, the format minor that added it and what it is.
 * scripts/record_docs.py makes the tables of docs/format.md and the JSON
 * schema's records from it, and checks them; a reader in another language
 * can be made from it.
 */
#include "tools/model/record_json.h"

#include "format/record_table.h"
#include "tools/model/json_writer.h"

static const char *wire_name(uint8_t w)
{
	static const char *const names[] = { NULL, "u8", "u16", "u32", "u64", "i32", "u32x3", "str", "none" };
	return w < sizeof names / sizeof names[0] && names[w] ? names[w] : "unknown";
}

static const char *show_name(uint8_t s)
{
	static const char *const names[] = { NULL, "number", "integer", "address", "digest", "enum", "flags",
					     "string", "shape", "hidden", "derived" };
	return s < sizeof names / sizeof names[0] && names[s] ? names[s] : "unknown";
}

/* "1.<minor>" */
static void since(struct json_writer *w, unsigned minor)
{
	char v[16];

	snprintf(v, sizeof v, "1.%u", minor);
	ktrace_json_str(w, "since", v);
}

static void put_field(struct json_writer *w, const struct ktrace_field *fd)
{
	static const char *const absent[] = { "never", "null", "omitted" };

	ktrace_json_break(w, 4);
	ktrace_json_object(w, NULL);
	ktrace_json_str(w, "name", fd->name);
	if (fd->member_name)
		ktrace_json_str(w, "member", fd->member_name);
	if (ktrace_wire_size(fd->wire)) {
		ktrace_json_u64(w, "offset", fd->offset);
		ktrace_json_u64(w, "bytes", ktrace_wire_size(fd->wire));
	}
	ktrace_json_str(w, "wire", wire_name(fd->wire));
	ktrace_json_str(w, "show", show_name(fd->show));
	since(w, fd->since);
	if (fd->valid)
		ktrace_json_str(w, "when_absent", absent[fd->absent < 3 ? fd->absent : 0]);
	ktrace_json_str(w, "doc", fd->doc);
	ktrace_json_end(w);
}

int ktrace_record_table_json(FILE *f)
{
	struct json_writer w;
	char format[16];
	size_t n;
	const struct ktrace_record_desc *d = ktrace_record_descs(&n);

	ktrace_json_init(&w, f, JSON_COMPACT);
	ktrace_json_object(&w, NULL);
	snprintf(format, sizeof format, "%u.%u", KTRACE_FORMAT_MAJOR, KTRACE_FORMAT_MINOR);
	ktrace_json_str(&w, "format", format);
	ktrace_json_u64(&w, "prefix_bytes", KTRACE_RECORD_PREFIX_SIZE);
	ktrace_json_array(&w, "records");
	for (size_t i = 0; i < n; i++) {
		ktrace_json_break(&w, 2);
		ktrace_json_object(&w, NULL);
		ktrace_json_u64(&w, "type", d[i].type);
		ktrace_json_str(&w, "name", d[i].name);
		ktrace_json_str(&w, "upper", d[i].upper);
		since(&w, d[i].since);
		ktrace_json_bool(&w, "generic", d[i].generic);
		ktrace_json_u64(&w, "fixed_bytes", d[i].fixed);
		ktrace_json_u64(&w, "oldest_fixed_bytes", d[i].oldest);
		ktrace_json_str(&w, "doc", d[i].doc);
		ktrace_json_array(&w, "fields");
		for (uint16_t k = 0; k < d[i].nfields; k++)
			put_field(&w, &d[i].fields[k]);
		ktrace_json_end(&w);
		ktrace_json_end(&w);
	}
	ktrace_json_break(&w, 0);
	ktrace_json_end(&w);
	ktrace_json_end(&w);
	fputc('\n', f);
	return 0;
}
