// Hardware CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320).
//
// x86-64: folding with PCLMULQDQ (carry-less multiplication), after Gopal et al., "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ Instruction" (Intel, 2009), the
// algorithm of zlib-ng and Chromium's zlib: four 128-bit lanes fold 64 bytes per step,
// then fold into one lane, then reduce to 32 bits (Barrett). Chosen at run time by CPUID,
// so the binary still runs on a processor without it.
//
// arm64: the CRC32X/CRC32B instructions (ARMv8 CRC extension; every Apple processor,
// chosen at run time through the auxiliary vector on Linux).
//
// Anything else consumes nothing: the Swift caller computes the whole checksum.

#include "CKilnChecksum.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))

#include <cpuid.h>
#include <emmintrin.h>
#include <wmmintrin.h>

// 0 not yet known, 1 absent, 2 present. Relaxed atomics: every thread computes the same.
static int pclmulState = 0;

static int hasPCLMUL(void) {
  int state = __atomic_load_n(&pclmulState, __ATOMIC_RELAXED);
  if (state == 0) {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    int present = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_PCLMUL) && (edx & bit_SSE2);
    state = present ? 2 : 1;
    __atomic_store_n(&pclmulState, state, __ATOMIC_RELAXED);
  }
  return state == 2;
}

// Folds `count` bytes (at least 64, a multiple of 16) into `crc` (the CRC register).
__attribute__((target("pclmul,sse2"))) static uint32_t foldPCLMUL(uint32_t crc, const uint8_t *buffer,
                                                                  size_t count) {
  // The constants of the bit-reflected domain: x^(4*128+32) and x^(4*128-32) mod P (fold by
  // four lanes), x^(128+32) and x^(128-32) mod P (fold by one), x^64 mod P, then P and
  // floor(x^64 / P) for Barrett's reduction.
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);

  __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;

  x1 = _mm_loadu_si128((const __m128i *)(buffer + 0x00));
  x2 = _mm_loadu_si128((const __m128i *)(buffer + 0x10));
  x3 = _mm_loadu_si128((const __m128i *)(buffer + 0x20));
  x4 = _mm_loadu_si128((const __m128i *)(buffer + 0x30));
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
  buffer += 64;
  count -= 64;

  // Fold four lanes over each further 64 bytes.
  while (count >= 64) {
    x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
    x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
    x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
    x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
    x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
    x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
    x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
    y5 = _mm_loadu_si128((const __m128i *)(buffer + 0x00));
    y6 = _mm_loadu_si128((const __m128i *)(buffer + 0x10));
    y7 = _mm_loadu_si128((const __m128i *)(buffer + 0x20));
    y8 = _mm_loadu_si128((const __m128i *)(buffer + 0x30));
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), y5);
    x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), y6);
    x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), y7);
    x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), y8);
    buffer += 64;
    count -= 64;
  }

  // Fold the four lanes into one.
  x0 = k3k4;
  x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
  x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
  x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
  x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
  x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
  x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
  x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);

  // Fold one lane over each further 16 bytes.
  while (count >= 16) {
    x2 = _mm_loadu_si128((const __m128i *)buffer);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    buffer += 16;
    count -= 16;
  }

  // 128 bits to 64.
  x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
  x1 = _mm_srli_si128(x1, 8);
  x1 = _mm_xor_si128(x1, x2);
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_and_si128(x1, low32);
  x1 = _mm_clmulepi64_si128(x1, k5k0, 0x00);
  x1 = _mm_xor_si128(x1, x2);

  // Barrett's reduction to 32 bits.
  x2 = _mm_and_si128(x1, low32);
  x2 = _mm_clmulepi64_si128(x2, poly, 0x10);
  x2 = _mm_and_si128(x2, low32);
  x2 = _mm_clmulepi64_si128(x2, poly, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x1, 4));
}

size_t kiln_crc32_hardware(uint32_t *state, const void *bytes, size_t count) {
  if (count < 64 || !hasPCLMUL()) return 0;
  size_t folded = count & ~(size_t)15;
  *state = foldPCLMUL(*state, (const uint8_t *)bytes, folded);
  return folded;
}

#elif defined(__aarch64__) && (defined(__APPLE__) || defined(__linux__))

#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

static int hasCRC32(void) {
#if defined(__APPLE__)
  return 1;  // Every Apple arm64 processor implements the CRC extension.
#else
  static int crcState = 0;  // 0 not yet known, 1 absent, 2 present.
  int state = __atomic_load_n(&crcState, __ATOMIC_RELAXED);
  if (state == 0) {
    state = (getauxval(AT_HWCAP) & HWCAP_CRC32) ? 2 : 1;
    __atomic_store_n(&crcState, state, __ATOMIC_RELAXED);
  }
  return state == 2;
#endif
}

__attribute__((target("crc"))) static uint32_t crcARM(uint32_t crc, const uint8_t *buffer, size_t count) {
  while (count >= 8) {
    uint64_t word;
    __builtin_memcpy(&word, buffer, 8);
    crc = __builtin_arm_crc32d(crc, word);
    buffer += 8;
    count -= 8;
  }
  while (count > 0) {
    crc = __builtin_arm_crc32b(crc, *buffer);
    buffer += 1;
    count -= 1;
  }
  return crc;
}

size_t kiln_crc32_hardware(uint32_t *state, const void *bytes, size_t count) {
  if (count == 0 || !hasCRC32()) return 0;
  *state = crcARM(*state, (const uint8_t *)bytes, count);
  return count;
}

#else

size_t kiln_crc32_hardware(uint32_t *state, const void *bytes, size_t count) {
  (void)state;
  (void)bytes;
  (void)count;
  return 0;
}

#endif
