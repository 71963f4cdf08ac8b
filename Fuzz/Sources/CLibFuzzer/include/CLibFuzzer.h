// libFuzzer's entry point for programs that keep their own `main` (SwiftPM names an
// executable's entry point after its module, so libFuzzer's `main` is not used).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

// Defined by each fuzzer in Swift with `@_cdecl("LLVMFuzzerTestOneInput")`.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
