/* format/le_bytes.h: little-endian integers at any byte address, for
 * format/'s own encoders and decoders and the writer's record prefix; private
 * to format/ (nothing outside it writes record bytes by offset).
 *
 * On a little-endian host a field is one unaligned move (memcpy); elsewhere
 * it is assembled byte by byte.  Either way the bytes are the same.  Calls
 * libc (memcpy) only.
 */
#ifndef KTRACE_LE_BYTES_H
#define KTRACE_LE_BYTES_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define KT_HOST_LE 1
#else
#define KT_HOST_LE 0
#endif

static inline void le16(uint8_t *p, uint16_t v)
{
	if (KT_HOST_LE) {
		memcpy(p, &v, 2);
		return;
	}
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void le32(uint8_t *p, uint32_t v)
{
	if (KT_HOST_LE) {
		memcpy(p, &v, 4);
		return;
	}
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void le64(uint8_t *p, uint64_t v)
{
	if (KT_HOST_LE) {
		memcpy(p, &v, 8);
		return;
	}
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	if (KT_HOST_LE) {
		memcpy(&v, p, 2);
		return v;
	}
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	if (KT_HOST_LE) {
		memcpy(&v, p, 4);
		return v;
	}
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	if (KT_HOST_LE) {
		memcpy(&v, p, 8);
		return v;
	}
	return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32);
}

#endif
