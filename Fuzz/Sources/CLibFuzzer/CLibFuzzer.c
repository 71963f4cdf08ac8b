// Declarations only: libFuzzer itself comes with `-sanitize=fuzzer`.
#include "CLibFuzzer.h"
