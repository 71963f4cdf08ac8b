// Hardware SHA-256 compression for KilnStorage's key digests: the x86-64 SHA extensions
// (SHA-NI), after Intel's reference ("Intel SHA Extensions", Gulley et al., 2013). Chosen at
// run time by CPUID; anything else returns 0 and the Swift caller compresses in software.

#include "CKilnChecksum.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))

#include <cpuid.h>
#include <immintrin.h>

// 0 not yet known, 1 absent, 2 present. Relaxed atomics: every thread computes the same.
static int shaState = 0;

static int hasSHA(void) {
  int state = __atomic_load_n(&shaState, __ATOMIC_RELAXED);
  if (state == 0) {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    int present = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSSE3) && (ecx & bit_SSE4_1)) {
      unsigned int eax7 = 0, ebx7 = 0, ecx7 = 0, edx7 = 0;
      present = __get_cpuid_count(7, 0, &eax7, &ebx7, &ecx7, &edx7) && (ebx7 & (1u << 29));
    }
    state = present ? 2 : 1;
    __atomic_store_n(&shaState, state, __ATOMIC_RELAXED);
  }
  return state == 2;
}

static const uint32_t roundConstants[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// Four rounds (group g): add the round constants to the message words `current`, run two
// double rounds, and meanwhile schedule later words.
#define ROUNDS(g, current)                                                            \
  message = _mm_add_epi32(current, _mm_loadu_si128((const __m128i *)&roundConstants[4 * (g)])); \
  state1 = _mm_sha256rnds2_epu32(state1, state0, message);                           \
  message = _mm_shuffle_epi32(message, 0x0E);                                        \
  state0 = _mm_sha256rnds2_epu32(state0, state1, message)

// The words of group g+1 from those of groups g-3 (already through msg1), g-1 and g.
#define SCHEDULE2(next, current, previous)            \
  next = _mm_add_epi32(next, _mm_alignr_epi8(current, previous, 4)); \
  next = _mm_sha256msg2_epu32(next, current)

__attribute__((target("sha,ssse3,sse4.1"))) static void compressSHA(uint32_t state[8], const uint8_t *data,
                                                                   size_t blocks) {
  const __m128i byteSwap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i state0, state1, message, m0, m1, m2, m3, saved0, saved1, temporary;

  // a b c d / e f g h into the ABEF / CDGH order the instructions take.
  temporary = _mm_loadu_si128((const __m128i *)&state[0]);
  state1 = _mm_loadu_si128((const __m128i *)&state[4]);
  temporary = _mm_shuffle_epi32(temporary, 0xB1);
  state1 = _mm_shuffle_epi32(state1, 0x1B);
  state0 = _mm_alignr_epi8(temporary, state1, 8);
  state1 = _mm_blend_epi16(state1, temporary, 0xF0);

  while (blocks > 0) {
    saved0 = state0;
    saved1 = state1;
    m0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 0)), byteSwap);
    m1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16)), byteSwap);
    m2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 32)), byteSwap);
    m3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 48)), byteSwap);

    ROUNDS(0, m0);
    ROUNDS(1, m1);
    m0 = _mm_sha256msg1_epu32(m0, m1);
    ROUNDS(2, m2);
    m1 = _mm_sha256msg1_epu32(m1, m2);
    ROUNDS(3, m3);
    SCHEDULE2(m0, m3, m2);
    m2 = _mm_sha256msg1_epu32(m2, m3);
    ROUNDS(4, m0);
    SCHEDULE2(m1, m0, m3);
    m3 = _mm_sha256msg1_epu32(m3, m0);
    ROUNDS(5, m1);
    SCHEDULE2(m2, m1, m0);
    m0 = _mm_sha256msg1_epu32(m0, m1);
    ROUNDS(6, m2);
    SCHEDULE2(m3, m2, m1);
    m1 = _mm_sha256msg1_epu32(m1, m2);
    ROUNDS(7, m3);
    SCHEDULE2(m0, m3, m2);
    m2 = _mm_sha256msg1_epu32(m2, m3);
    ROUNDS(8, m0);
    SCHEDULE2(m1, m0, m3);
    m3 = _mm_sha256msg1_epu32(m3, m0);
    ROUNDS(9, m1);
    SCHEDULE2(m2, m1, m0);
    m0 = _mm_sha256msg1_epu32(m0, m1);
    ROUNDS(10, m2);
    SCHEDULE2(m3, m2, m1);
    m1 = _mm_sha256msg1_epu32(m1, m2);
    ROUNDS(11, m3);
    SCHEDULE2(m0, m3, m2);
    m2 = _mm_sha256msg1_epu32(m2, m3);
    ROUNDS(12, m0);
    SCHEDULE2(m1, m0, m3);
    m3 = _mm_sha256msg1_epu32(m3, m0);
    ROUNDS(13, m1);
    SCHEDULE2(m2, m1, m0);
    ROUNDS(14, m2);
    SCHEDULE2(m3, m2, m1);
    ROUNDS(15, m3);

    state0 = _mm_add_epi32(state0, saved0);
    state1 = _mm_add_epi32(state1, saved1);
    data += 64;
    blocks -= 1;
  }

  // Back to a b c d / e f g h.
  temporary = _mm_shuffle_epi32(state0, 0x1B);
  state1 = _mm_shuffle_epi32(state1, 0xB1);
  state0 = _mm_blend_epi16(temporary, state1, 0xF0);
  state1 = _mm_alignr_epi8(state1, temporary, 8);
  _mm_storeu_si128((__m128i *)&state[0], state0);
  _mm_storeu_si128((__m128i *)&state[4], state1);
}

int kiln_sha256_hardware(uint32_t state[8], const void *blocks, size_t count) {
  if (!hasSHA()) return 0;
  compressSHA(state, (const uint8_t *)blocks, count);
  return 1;
}

#else

int kiln_sha256_hardware(uint32_t state[8], const void *blocks, size_t count) {
  (void)state;
  (void)blocks;
  (void)count;
  return 0;
}

#endif
