/* test/unit/meta_robust_test.c: untrusted images never crash meta/.
 * Truncations and byte flips of real images, hand-made corruptions of
 * .nv.info records, section headers, fatbin containers and compressed
 * entries, non-images, and file errors: each gives a result or one clear
 * message naming the image and what is wrong (under check-asan any read
 * outside the image fails the test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/scratch.h"
#include "test/unit/meta_testutil.h"

#define ADD_CUBIN META_TRITON "/3H6TEFVES2CIR7XPX32JHY4HEAGSY7SRJT2RIJ4V24D7PZYGOBYA/add_kernel.cubin"

/* Parse an exact-size heap copy; returns rc, err filled. */
static int try_parse(const uint8_t *b, size_t len, uint32_t sm, char *err, size_t errlen,
		     struct ktrace_meta_image **out)
{
	uint8_t *c = malloc(len ? len : 1);
	assert_non_null(c);
	memcpy(c, b, len);
	struct ktrace_meta_opts o = {.device_sm = sm, .use_dwarf = 1, .source_path = "img"};
	struct ktrace_meta_image *img = NULL;
	int rc = ktrace_meta_parse(c, len, &o, &img, err, errlen);
	if (rc == 0) {
		assert_non_null(img);
		for (uint32_t i = 0; i < img->nkernels; i++) {
			const struct ktrace_meta_kernel *k = &img->kernels[i];
			assert_non_null(k->name);
			assert_non_null(k->demangled);
			for (uint32_t j = 0; j < k->nparams; j++) {
				assert_non_null(k->params[j].name);
				assert_non_null(k->params[j].type);
			}
		}
	} else {
		assert_int_equal(rc, -1);
		assert_null(img);
		assert_true(err[0] != 0);
		assert_non_null(strstr(err, "img"));  /* names the image */
		assert_null(strchr(err, '\n'));       /* one line */
	}
	(void)ktrace_meta_image_size(c, len);
	free(c);
	if (out)
		*out = img;
	else
		ktrace_meta_free(img);
	return rc;
}

static void mutate_all(const char *path, size_t stride)
{
	size_t len;
	uint8_t *b = meta_slurp(path, &len);
	char err[512];
	for (size_t l = 0; l < len; l += (l < 4096 ? 1 : stride))
		try_parse(b, l, 90, err, sizeof err, NULL);
	/* single-byte changes at pseudo-random places, deterministic */
	uint32_t x = 2463534242u;
	uint8_t *m = malloc(len);
	for (int i = 0; i < 3000; i++) {
		memcpy(m, b, len);
		for (int k = 0; k < 1 + i % 3; k++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			m[x % len] = (uint8_t)(x >> 8);
		}
		try_parse(m, len, i % 2 ? 90 : 0, err, sizeof err, NULL);
	}
	free(m);
	free(b);
}

static void test_mutate_triton_cubin(void **s)
{
	(void)s;
	mutate_all(ADD_CUBIN, 7);
}

static void test_mutate_built(void **s)
{
	(void)s;
	static const char *const files[] = {"kernels_mode_size.fatbin", "kernels_mode_speed.fatbin",
					    "handwritten_sm90.cubin", "kernels_sm90.ptx"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char buf[512];
		const char *p = meta_cubin(files[i], buf, sizeof buf);
		META_NEED(p, files[i]);
		mutate_all(p, 97);
	}
}

/* Find a section by name in a 64-bit ELF image (test-side reader). */
static uint8_t *section(uint8_t *b, const char *name, uint64_t *size, uint8_t **shdr)
{
	uint64_t shoff = *(uint64_t *)(b + 0x28);
	uint16_t shentsize = *(uint16_t *)(b + 0x3a), shnum = *(uint16_t *)(b + 0x3c), shstrndx = *(uint16_t *)(b + 0x3e);
	uint8_t *strsh = b + shoff + (uint64_t)shstrndx * shentsize;
	uint64_t stroff = *(uint64_t *)(strsh + 24);
	for (uint16_t i = 0; i < shnum; i++) {
		uint8_t *sh = b + shoff + (uint64_t)i * shentsize;
		if (!strcmp((char *)b + stroff + *(uint32_t *)sh, name)) {
			*size = *(uint64_t *)(sh + 32);
			if (shdr)
				*shdr = sh;
			return b + *(uint64_t *)(sh + 24);
		}
	}
	fail_msg("no section %s", name);
	return NULL;
}

/* Offset of the first record with attribute attr in an .nv.info section. */
static size_t record(const uint8_t *sec, uint64_t size, uint8_t attr)
{
	size_t off = 0;
	while (off + 4 <= size) {
		if (sec[off + 1] == attr)
			return off;
		off += 4 + (sec[off] == 4 ? *(const uint16_t *)(sec + off + 2) : 0);
	}
	fail_msg("no attribute 0x%02x", attr);
	return 0;
}

static void test_nvinfo_corruptions(void **s)
{
	(void)s;
	size_t len;
	uint8_t *b = meta_slurp(ADD_CUBIN, &len);
	uint8_t *c = malloc(len);
	char err[512];
	uint64_t size;
	struct ktrace_meta_image *img;

	/* a record claiming more bytes than the section has */
	memcpy(c, b, len);
	uint8_t *sec = section(c, ".nv.info.add_kernel", &size, NULL);
	size_t r = record(sec, size, 0x17);
	*(uint16_t *)(sec + r + 2) = 0xfff0;
	assert_int_equal(try_parse(c, len, 0, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, ".nv.info.add_kernel"));
	assert_non_null(strstr(err, "overruns"));

	/* an unknown record format */
	memcpy(c, b, len);
	sec = section(c, ".nv.info.add_kernel", &size, NULL);
	sec[record(sec, size, 0x37)] = 9;
	assert_int_equal(try_parse(c, len, 0, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, "unknown attribute format 9"));

	/* an unknown attribute is skipped by its length: same layout */
	memcpy(c, b, len);
	sec = section(c, ".nv.info.add_kernel", &size, NULL);
	sec[record(sec, size, 0x37) + 1] = 0x7e;
	assert_int_equal(try_parse(c, len, 0, err, sizeof err, &img), 0);
	const struct ktrace_meta_kernel *k = meta_kernel(img, "add_kernel");
	assert_int_equal(k->nparams, 6);
	assert_int_equal(k->params[5].offset, 40);
	ktrace_meta_free(img);

	/* a parameter ordinal missing: the layout is unknown, with a warning */
	memcpy(c, b, len);
	sec = section(c, ".nv.info.add_kernel", &size, NULL);
	r = record(sec, size, 0x17); /* descending: ordinal 5 first */
	*(uint16_t *)(sec + r + 8) = 9;
	assert_int_equal(try_parse(c, len, 0, err, sizeof err, &img), 0);
	k = meta_kernel(img, "add_kernel");
	assert_int_equal(k->layout_source, KTRACE_LAYOUT_NONE);
	assert_int_equal(k->nparams, 0);
	assert_true(img->nwarnings >= 1);
	assert_non_null(strstr(img->warnings[0], "add_kernel"));
	ktrace_meta_free(img);

	/* a section header pointing outside the image */
	memcpy(c, b, len);
	uint8_t *sh;
	section(c, ".nv.info.add_kernel", &size, &sh);
	*(uint64_t *)(sh + 24) = (uint64_t)len + 100;
	assert_int_equal(try_parse(c, len, 0, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, "outside the image"));

	/* not a CUDA ELF */
	memcpy(c, b, len);
	*(uint16_t *)(c + 18) = 62; /* EM_X86_64: a host ELF without .nv_fatbin */
	assert_int_equal(try_parse(c, len, 0, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, "no .nv_fatbin section"));
	free(c);
	free(b);
}

/* Offset of the first entry of sm `arch` in a fatbin (test-side reader). */
static size_t entry_of(const uint8_t *b, size_t len, uint32_t kind, uint32_t arch, uint32_t *hsz, uint64_t *csize)
{
	size_t off = 16;
	(void)len;
	while (off + 64 <= len) {
		uint32_t eh = *(const uint32_t *)(b + off + 4);
		uint64_t sz = *(const uint64_t *)(b + off + 8);
		if (*(const uint16_t *)(b + off) == kind && *(const uint32_t *)(b + off + 28) == arch) {
			*hsz = eh;
			*csize = *(const uint32_t *)(b + off + 16);
			return off;
		}
		off += eh + sz;
	}
	fail_msg("no entry for sm_%u", arch);
	return 0;
}

static void corrupt_payload_falls_back(const char *fatbin)
{
	char buf[512], err[512];
	const char *p = meta_cubin(fatbin, buf, sizeof buf);
	META_NEED(p, fatbin);
	size_t len;
	uint8_t *b = meta_slurp(p, &len);
	uint32_t hsz = 0;
	uint64_t csize = 0;
	size_t e = entry_of(b, len, 2, 90, &hsz, &csize);
	assert_true(csize > 64);
	memset(b + e + hsz + 16, 0xff, 48); /* damage the compressed stream */
	struct ktrace_meta_image *img;
	assert_int_equal(try_parse(b, len, 90, err, sizeof err, &img), 0);
	/* the sm_90 entry could not be decompressed: the next choice (the
	 * compute_120 PTX cannot serve sm_90, so the newest ELF) is used, warned */
	assert_true(img->nwarnings >= 1);
	assert_int_equal(img->nkernels, 12);
	assert_int_not_equal(img->kernels[0].sm, 90);
	ktrace_meta_free(img);

	/* the container claims more bytes than the file has */
	uint8_t *t = meta_slurp(p, &len);
	*(uint64_t *)(t + 8) = len;
	assert_int_equal(try_parse(t, len, 90, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, "truncated"));
	/* an entry claims more bytes than its container */
	free(t);
	t = meta_slurp(p, &len);
	*(uint64_t *)(t + 16 + 8) = len * 2;
	assert_int_equal(try_parse(t, len, 90, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, "overruns the container"));
	free(t);
	free(b);
}

static void test_bad_zstd(void **s) { (void)s; corrupt_payload_falls_back("kernels_mode_size.fatbin"); }
static void test_bad_lz4(void **s) { (void)s; corrupt_payload_falls_back("kernels_mode_speed.fatbin"); }

static void test_not_images(void **s)
{
	(void)s;
	char err[512];
	static const char junk[] = "\x01\x02\x03 this is not an image";
	assert_int_equal(try_parse((const uint8_t *)junk, sizeof junk, 0, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, "not a CUDA image"));
	assert_int_equal(ktrace_meta_classify(junk, sizeof junk), KTRACE_IMAGE_UNKNOWN);
	assert_int_equal(ktrace_meta_image_size(junk, sizeof junk), 0);
	struct ktrace_meta_image *img = (void *)1;
	assert_int_equal(ktrace_meta_parse(junk, 0, NULL, &img, err, sizeof err), -1);
	assert_null(img);
	assert_int_equal(ktrace_meta_parse(NULL, 10, NULL, &img, err, sizeof err), -1);
	/* PTX that stops inside a signature */
	static const char ptx[] = ".version 8.0\n.target sm_90\n.visible .entry k(\n\t.param .u64 a,\n\t.param .b8 ";
	assert_int_equal(try_parse((const uint8_t *)ptx, sizeof ptx, 0, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, "cannot read parameter 1 of entry k"));
	static const char ptx2[] = "// comment only\n";
	assert_int_equal(try_parse((const uint8_t *)ptx2, sizeof ptx2, 0, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, "not PTX"));
	/* a fatbin header alone */
	static const uint8_t fb[16] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
	assert_int_equal(try_parse(fb, sizeof fb, 0, err, sizeof err, NULL), -1);
	assert_int_equal(ktrace_meta_image_size(fb, sizeof fb), 0);
	/* the wrapper's pointer is never followed unless live */
	static const uint8_t wr[24] = {0xb1, 0x43, 0x62, 0x46, 1, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(try_parse(wr, sizeof wr, 0, err, sizeof err, NULL), -1);
	assert_int_equal(try_parse(wr, 12, 0, err, sizeof err, NULL), -1);
	assert_non_null(strstr(err, "truncated"));
}

static void test_file_errors(void **s)
{
	(void)s;
	struct ktrace_meta_image *img;
	char err[512];
	assert_int_equal(ktrace_meta_parse_file("/nonexistent/x.cubin", NULL, &img, err, sizeof err), -1);
	assert_string_equal(err, "/nonexistent/x.cubin: cannot open: No such file or directory");
	assert_int_equal(ktrace_meta_parse_file("test", NULL, &img, err, sizeof err), -1);
	assert_string_equal(err, "test: not a regular file");
	char empty[400], want[450];
	int fd = kt_scratch_file(empty, sizeof empty, "meta-empty");
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ktrace_meta_parse_file(empty, NULL, &img, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: empty file", empty);
	assert_string_equal(err, want);
	remove(empty);
	/* a PTX file without a terminating NUL is read as text */
	assert_int_equal(ktrace_meta_parse_file("test/cubins/handwritten.ptx", NULL, &img, err, sizeof err), 0);
	assert_int_equal(img->nkernels, 4);
	ktrace_meta_free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutate_triton_cubin),
		cmocka_unit_test(test_mutate_built),
		cmocka_unit_test(test_nvinfo_corruptions),
		cmocka_unit_test(test_bad_zstd),
		cmocka_unit_test(test_bad_lz4),
		cmocka_unit_test(test_not_images),
		cmocka_unit_test(test_file_errors),
	};
	return cmocka_run_group_tests_name("meta_robust", tests, NULL, NULL);
}
