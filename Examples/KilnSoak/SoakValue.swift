import KilnTesting

/// A value the soak writes and reads back: its payload is a function of its key and
/// sequence number, and a checksum covers all three, so a reader can tell a value that was
/// written from a torn, mixed or invented one. KilnTesting's, shared with the crash tests'
/// writer.
typealias SoakValue = CheckedValue
