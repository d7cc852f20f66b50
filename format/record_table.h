/* format/record_table.h: every record type of the trace format, declared once.
 *
 * Owns the description of each record's fixed fields and strings (the X-macro
 * table in format/record_table.def): where each field lies, its wire type, the
 * struct member it decodes into, the name every tool gives it (ktrace-dump's
 * JSON, the JSON schema, docs/format.md, the Python reader), how it is shown
 * (a number, an address, a digest, an enum's name, a flag list) and the format
 * minor that added it.  From it come the generic encoder and decoder of a
 * record's fixed part (ktrace_table_encode/_decode, used by the records that
 * have nothing else: ktrace_format.c), the JSON emitter of tools/, the schema
 * and format tables (scripts/record_docs.py, checked by make test) and the
 * Python reader's generic records.  Records with variable parts (parameters,
 * regions, graph nodes...) keep their own code for those parts, and a test
 * holds their hand-written fixed part to the table (test/unit/record_table_test.c).
 * Calls libc only.
 */
#ifndef KTRACE_RECORD_TABLE_H
#define KTRACE_RECORD_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"

/* How a field lies in the record. */
enum ktrace_wire {
	KT_WIRE_U8 = 1,
	KT_WIRE_U16,
	KT_WIRE_U32,
	KT_WIRE_U64,
	KT_WIRE_I32,
	KT_WIRE_U32X3, /* three u32: a grid, block or cluster shape */
	KT_WIRE_STR,   /* u16 length and bytes, after the fixed part, in table order */
	KT_WIRE_NONE,  /* not in the record: derived by the tools (KT_SHOW_HOOK) */
};

/* How tools show a field (and the JSON schema types it). */
enum ktrace_show {
	KT_SHOW_NUM = 1,   /* a JSON number (unsigned) */
	KT_SHOW_INT,       /* a JSON number (signed) */
	KT_SHOW_HEX,       /* an address or handle: "0x..." */
	KT_SHOW_DIGEST,    /* a digest: 16 hex digits, or null when `valid` says it is not */
	KT_SHOW_ENUM,      /* the value's name (names(value)) */
	KT_SHOW_FLAGS,     /* the names of the bits set (names(bit); unknown bits as "0x...") */
	KT_SHOW_STR,       /* a string */
	KT_SHOW_SHAPE,     /* [x, y, z] */
	KT_SHOW_HIDDEN,    /* reserved or a count of a variable part: not shown on its own */
	KT_SHOW_HOOK,      /* derived by the tools; `hook` says which (tools/dump/dump_json.c) */
};

/* What a derived field is (KT_SHOW_HOOK): a value the tools compute, or a
 * record's variable part, which format/ decodes and the tools show. */
enum ktrace_hook {
	KT_HOOK_NONE = 0,
	KT_HOOK_FORMAT_VERSION, /* HEADER: the file's format version, "1.11" */
	KT_HOOK_DATA_HEX,       /* MODULE_IMAGE: the bytes as hex */
	KT_HOOK_KERNEL_STRINGS, /* KERNEL: "name" and "demangled" */
	KT_HOOK_PARAMS,         /* KERNEL: the parameter table */
	KT_HOOK_KERNEL_NAME,    /* the kernel's printed name (its KERNEL record) */
	KT_HOOK_KERNEL_MANGLED, /* the kernel's symbol */
	KT_HOOK_UNVERIFIABLE,   /* LAUNCH: why the record alone cannot be verified */
	KT_HOOK_GRAPH_REF,      /* LAUNCH, MEMCPY, MEMSET: the graph reference */
	KT_HOOK_RANGE_REF,      /* LAUNCH, MEMCPY, MEMSET: the range reference and its path */
	KT_HOOK_PARAM_BYTES,    /* LAUNCH: the parameter bytes as hex */
	KT_HOOK_ARGS,           /* LAUNCH: each parameter, named, with its value */
	KT_HOOK_REGIONS,        /* LAUNCH: the pointer regions */
	KT_HOOK_COUNTERS,       /* COUNTERS: the counters by name */
	KT_HOOK_REPLAY_REPORT,  /* REPLAY: the report's fields */
	KT_HOOK_GRAPH_HASHED,   /* GRAPH: flag HASHED as a boolean */
	KT_HOOK_GRAPH_NODES,    /* GRAPH: the node entries */
	KT_HOOK_GRAPH_EDGES,    /* GRAPH: the edges */
	KT_HOOK_RANGE_SOURCE,   /* RANGE: the source locations (flag SOURCE) */
	KT_HOOK_PY_FRAMES,      /* PYSTACK: the frames */
	KT_HOOK_DURATION,       /* GPUTIME: end_ns - start_ns */
	KT_HOOK_COUNT,
};

/* What a field shows when its `valid` function says it holds no value. */
enum ktrace_absent {
	KT_ABSENT_NEVER = 0, /* always a value (no `valid` function) */
	KT_ABSENT_NULL,      /* null */
	KT_ABSENT_OMIT,      /* left out */
};

struct ktrace_field {
	const char *name;     /* as every tool names it */
	const char *member_name; /* the decoded struct's member, as docs/format.md's tables name it */
	uint16_t offset;      /* from the record's first byte (fixed fields) */
	uint8_t wire;         /* enum ktrace_wire */
	uint8_t show;         /* enum ktrace_show */
	uint8_t since;        /* the format minor that added it (1.N) */
	uint8_t hook;         /* enum ktrace_hook, for KT_SHOW_HOOK */
	uint16_t member;      /* offsetof the decoded struct's member */
	const char *(*names)(uint32_t value); /* ENUM: a value's name; FLAGS: a bit's name (NULL: unknown) */
	int (*valid)(const void *decoded);    /* whether the field holds a value (NULL: always) */
	uint8_t absent;       /* enum ktrace_absent: what it shows when it does not */
	const char *doc;      /* what it is (docs/format.md) */
};

/* Any record decoded (ktrace_record_desc()->decode fills the type's member). */
#define KTRACE_ANY_MEMBER(UPPER, lower, ...) struct ktrace_rec_##lower lower;
union ktrace_any_record { KTRACE_RECORDS(KTRACE_ANY_MEMBER) };
#undef KTRACE_ANY_MEMBER

struct ktrace_record_desc {
	uint16_t type;        /* enum ktrace_record_type */
	uint8_t since;        /* the format minor that added the type */
	uint8_t generic;      /* 1: the fixed part and strings are the whole record (table codec) */
	const char *name;     /* "alloc", as ktrace-dump's JSON "type" */
	const char *upper;    /* "ALLOC", as docs/format.md */
	uint16_t fixed;       /* bytes before the strings or the variable part */
	uint16_t oldest;      /* the fixed part's size in the oldest minor that wrote the type */
	uint16_t nfields;
	const struct ktrace_field *fields; /* in the order tools show them */
	const char *doc;
	/* ktrace_decode_<lower>: the record into its member of a union ktrace_any_record */
	int (*decode)(const void *rec, size_t len, union ktrace_any_record *out);
};

/* The description of a record type; NULL for a type the table does not know. */
const struct ktrace_record_desc *ktrace_record_desc(uint16_t type);
/* Every record type, in type order: *n set to their count. */
const struct ktrace_record_desc *ktrace_record_descs(size_t *n);
/* The field named `name` of d; NULL when none. */
const struct ktrace_field *ktrace_record_field(const struct ktrace_record_desc *d, const char *name);

/* A generic record (d->generic): its size for struct s (strings included),
 * and the record written into buf (size bytes, as ktrace_encode_* do: seq
 * and time_ns left 0).  Returns the size, or the size needed when cap is too
 * small (nothing written then). */
size_t ktrace_table_encode(const struct ktrace_record_desc *d, void *buf, size_t cap, const void *s);
/* Decode a generic record of len bytes into struct s: fields past a shorter,
 * older record's end (since > the record's minor) read 0.  Returns 0, or -1
 * when the record is malformed. */
int ktrace_table_decode(const struct ktrace_record_desc *d, const void *rec, size_t len, void *s);

/* For the codecs of records with variable parts (format/): the prefix and
 * the fixed fields of struct s written into a record of size bytes at buf
 * (zeroed first: padding and reserved fields 0); and the fixed fields of the
 * record of len bytes at rec read into s, returning the size of its fixed
 * part (d->fixed, or d->oldest for a record of an older minor exactly that
 * long: the later fields read 0), or 0 when the record is not of d's type,
 * shorter than min, or malformed. */
void ktrace_table_put_fixed(const struct ktrace_record_desc *d, void *buf, size_t size, const void *s);
size_t ktrace_table_get_fixed(const struct ktrace_record_desc *d, const void *rec, size_t len, size_t min, void *s);

/* A fixed field's value in a decoded struct, widened (U32X3: element i). */
uint64_t ktrace_field_value(const struct ktrace_field *f, const void *s, unsigned i);
/* A string field's value in a decoded struct. */
struct ktrace_str ktrace_field_str(const struct ktrace_field *f, const void *s);
/* Bytes a wire type takes in the fixed part (0 for STR and NONE). */
unsigned ktrace_wire_size(uint8_t wire);

#endif
