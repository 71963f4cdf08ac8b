// Hardware CRC-32 (IEEE 802.3, the polynomial of zlib) for KilnStorage's entry files, and
// hardware SHA-256 compression for its key digests.
//
// Internal to KilnStorage: its CRC32 and SHA256 types call these first and do in Swift
// whatever they leave, so a machine without the instructions gets the same results.

#ifndef CKILNCHECKSUM_H
#define CKILNCHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Advances `*state` (the CRC register: the complement of the checksum so far) over the
/// first bytes of `bytes` with the processor's carry-less multiply (x86-64 PCLMULQDQ) or
/// CRC-32 (arm64) instructions, and returns how many bytes it consumed: possibly none (no
/// such instructions, or too few bytes), never more than `count`. The caller processes the
/// rest in software.
size_t kiln_crc32_hardware(uint32_t *state, const void *bytes, size_t count);

/// Compresses `count` 64-byte blocks at `blocks` into the SHA-256 state `state` (the eight
/// words a to h) with the processor's SHA instructions (x86-64 SHA extensions) and returns
/// 1; returns 0, leaving `state` alone, on a processor without them.
int kiln_sha256_hardware(uint32_t state[8], const void *blocks, size_t count);

#ifdef __cplusplus
}
#endif

#endif
