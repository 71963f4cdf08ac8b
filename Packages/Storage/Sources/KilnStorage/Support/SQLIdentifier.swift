/// Whether `name` is a plain SQL identifier that a store may put in its statements, in double
/// quotes, without escaping: 1 to `maximumLength` ASCII letters, digits and `_`, not starting
/// with a digit. Table names given by users are checked with it (SQLite, PostgreSQL).
func isPlainSQLIdentifier(_ name: String, maximumLength: Int) -> Bool {
  let bytes = Array(name.utf8)
  guard (1...maximumLength).contains(bytes.count), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[0]) else {
    return false
  }
  return bytes.allSatisfy { byte in
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
      || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
  }
}
