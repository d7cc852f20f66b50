/* tools/model/record_table_json.c: the record table
 * (format/record_table.def) as one JSON document: every record type, and each
 * of its fields with its offset, wire type, how the tools show it, the format
 * minor that added it and what it is.  scripts/record_docs.py makes the
 * tables of docs/format.md and the JSON schema's records from it, and checks
 * them; a reader in another language can be made from it.
 */
#include "tools/model/record_json.h"

#include <string.h>

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

static void put_key_str(FILE *f, const char *k, const char *v)
{
	fprintf(f, ",\"%s\":", k);
	ktrace_json_put_string(f, v, strlen(v));
}

static void put_field(FILE *f, const struct ktrace_field *fd, int first)
{
	static const char *const absent[] = { "never", "null", "omitted" };

	fprintf(f, "%s\n    {\"name\":", first ? "" : ",");
	ktrace_json_put_string(f, fd->name, strlen(fd->name));
	if (fd->member_name)
		put_key_str(f, "member", fd->member_name);
	if (ktrace_wire_size(fd->wire))
		fprintf(f, ",\"offset\":%u,\"bytes\":%u", fd->offset, ktrace_wire_size(fd->wire));
	put_key_str(f, "wire", wire_name(fd->wire));
	put_key_str(f, "show", show_name(fd->show));
	fprintf(f, ",\"since\":\"1.%u\"", fd->since);
	if (fd->valid)
		put_key_str(f, "when_absent", absent[fd->absent < 3 ? fd->absent : 0]);
	put_key_str(f, "doc", fd->doc);
	fputc('}', f);
}

int ktrace_record_table_json(FILE *f)
{
	size_t n;
	const struct ktrace_record_desc *d = ktrace_record_descs(&n);

	fprintf(f, "{\"format\":\"%u.%u\",\"prefix_bytes\":%u,\"records\":[", KTRACE_FORMAT_MAJOR,
		KTRACE_FORMAT_MINOR, KTRACE_RECORD_PREFIX_SIZE);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n  {\"type\":%u", i ? "," : "", d[i].type);
		put_key_str(f, "name", d[i].name);
		put_key_str(f, "upper", d[i].upper);
		fprintf(f, ",\"since\":\"1.%u\",\"generic\":%s,\"fixed_bytes\":%u,\"oldest_fixed_bytes\":%u",
			d[i].since, d[i].generic ? "true" : "false", d[i].fixed, d[i].oldest);
		put_key_str(f, "doc", d[i].doc);
		fputs(",\"fields\":[", f);
		for (uint16_t k = 0; k < d[i].nfields; k++)
			put_field(f, &d[i].fields[k], k == 0);
		fputs("]}", f);
	}
	fputs("\n]}\n", f);
	return 0;
}
