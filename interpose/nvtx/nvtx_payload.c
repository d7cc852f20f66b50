/* interpose/nvtx/nvtx_payload.c: source locations from NVTX payloads.
 *
 * NVTX's payload extension lets a range carry structured data: the program
 * registers a schema (named entries at offsets of a binary blob) with
 * nvtxPayloadSchemaRegister and attaches blobs to a range's event attributes
 * (payload type NVTX_PAYLOAD_TYPE_EXT, an array of nvtxPayloadData_t).
 * XLA's GPU runtime does so for its kernel and module ranges: a schema with
 * a registered string named "Source locations" (and "Common source
 * locations" for a module), the Python frames the HLO instruction came from.
 * An extension finds its tool through the same NVTX_INJECTION64_PATH,
 * calling the library's InitializeInjectionNvtxExtension with its slots
 * (NVIDIA/NVTX, nvtxExtInit.h); ktrace fills the payload module's schema
 * registration and leaves every other extension call a no-op.
 *
 * Owns that entry point and the table of the schemas that have such an
 * entry (registered rarely, read at every range push that has a payload:
 * published with release stores, read without a lock).  Calls libc.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <strings.h>
#include <string.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "interpose/nvtx/nvtx.h"
#include "interpose/nvtx/nvtx_internal.h"

#define KT_SCHEMAS 64       /* schemas with source entries kept (later ones are not read) */
#define KT_SCHEMA_SOURCES 2 /* source entries read per schema */

struct kt_schema {
	uint64_t id;
	uint32_t n;                          /* source entries */
	uint64_t offset[KT_SCHEMA_SOURCES];  /* of each, in the blob */
};

static struct kt_schema schemas[KT_SCHEMAS];
static atomic_uint nschemas;             /* published entries of schemas[] */
static atomic_ullong next_id = NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START;

/* A schema entry that holds source locations: a registered string whose
 * name says so. */
static int source_entry(const nvtxPayloadSchemaEntry_t *e)
{
	return e->type == NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE && e->name &&
	       strcasestr(e->name, "source");
}

static uint64_t NVTX_API schema_register(nvtxDomainHandle_t d, const nvtxPayloadSchemaAttr_t *a)
{
	struct kt_schema s = { 0 };

	(void)d;
	if (!a)
		return 0;
	s.id = (a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID) && a->schemaId ? a->schemaId
											: atomic_fetch_add(&next_id, 1);
	if (!(a->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES) || !a->entries)
		return s.id;
	for (size_t i = 0; i < a->numEntries && s.n < KT_SCHEMA_SOURCES; i++)
		if (source_entry(&a->entries[i]))
			s.offset[s.n++] = a->entries[i].offset;
	if (s.n) {
		kt_nvtx_lock();
		unsigned k = atomic_load_explicit(&nschemas, memory_order_relaxed);
		if (k < KT_SCHEMAS) {
			schemas[k] = s;
			atomic_store_explicit(&nschemas, k + 1, memory_order_release);
		}
		kt_nvtx_unlock();
	}
	return s.id;
}

static const struct kt_schema *schema_of(uint64_t id)
{
	unsigned n = atomic_load_explicit(&nschemas, memory_order_acquire);

	for (unsigned i = 0; i < n; i++)
		if (schemas[i].id == id)
			return &schemas[i];
	return NULL;
}

void kt_nvtx_payload_source(const struct nvtxEventAttributes_v2 *a, struct kt_nvtx_text *t)
{
	const nvtxPayloadData_t *pd;

	if (!a || a->size < offsetof(nvtxEventAttributes_t, message) || a->payloadType != NVTX_PAYLOAD_TYPE_EXT ||
	    !a->payload.ullValue || !atomic_load_explicit(&nschemas, memory_order_relaxed))
		return;
	pd = (const nvtxPayloadData_t *)(uintptr_t)a->payload.ullValue;
	for (int32_t i = 0; i < a->reserved0 && i < 8; i++) {
		const struct kt_schema *s = schema_of(pd[i].schemaId);

		for (uint32_t k = 0; s && pd[i].payload && k < s->n; k++) {
			const struct kt_nvtx_regstr *r;

			if (s->offset[k] > pd[i].size || pd[i].size - s->offset[k] < sizeof(void *))
				continue; /* outside the blob (an offset near 2^64 included) */
			memcpy(&r, (const char *)pd[i].payload + s->offset[k], sizeof r);
			if (r && r->source_len) {
				t->source = r->buf;
				t->source_len = r->source_len;
				t->flags |= r->source_cut;
				return;
			}
		}
	}
}

KTRACE_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info)
{
	if (!info || !ktrace_nvtx_attached())
		return 0;
	if (info->moduleId != NVTX_EXT_PAYLOAD_MODULEID)
		return 1; /* attached, nothing filled: the extension's calls are no-ops */
	for (size_t i = 0; i < info->segmentsCount; i++) {
		nvtxExtModuleSegment_t *g = &info->segments[i];

		if (g->functionSlots && g->slotCount > NVTX3EXT_CBID_nvtxPayloadSchemaRegister)
			g->functionSlots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister] = (intptr_t)schema_register;
	}
	return 1;
}
