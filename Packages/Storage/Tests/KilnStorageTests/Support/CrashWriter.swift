import KilnTesting

/// The crash suite's child: `KilnStorageCrashWriter`, built next to the test bundle (or
/// wherever `$KILN_CRASH_WRITER` points).
enum CrashWriter {
  static func locate() throws -> String {
    try TestExecutable.locate("KilnStorageCrashWriter", environmentVariable: "KILN_CRASH_WRITER")
  }
}
