import CKilnSQLite
import Dispatch
import Foundation

/// `SQLITE_TRANSIENT`: SQLite copies bound bytes (the C macro does not import).
private let transient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)

/// A prepared statement in use: bind, step, read columns; reset when done.
struct SQLiteStatement {
  let handle: OpaquePointer
  let connection: SQLiteConnection

  /// Binds a blob of any size: 64-bit lengths, so 2 GiB and more is an error, not a trap.
  ///
  /// - Throws: ``SQLiteStoreError/entryTooLarge(size:limit:)`` past the length limit.
  func bind(_ bytes: some ContiguousBytes, at index: Int32) throws(SQLiteStoreError) {
    let (code, size) = bytes.withUnsafeBytes { buffer in
      let code =
        buffer.count == 0
        ? sqlite3_bind_zeroblob(handle, index, 0)
        : sqlite3_bind_blob64(handle, index, buffer.baseAddress, sqlite3_uint64(buffer.count), transient)
      return (code, buffer.count)
    }
    if code == SQLITE_TOOBIG { throw .entryTooLarge(size: size, limit: connection.lengthLimit) }
    if code != SQLITE_OK { throw connection.lastError(code) }
  }

  func bind(_ value: Double, at index: Int32) throws(SQLiteStoreError) {
    let code = sqlite3_bind_double(handle, index, value)
    if code != SQLITE_OK { throw connection.lastError(code) }
  }

  func bind(_ value: Int64, at index: Int32) throws(SQLiteStoreError) {
    let code = sqlite3_bind_int64(handle, index, value)
    if code != SQLITE_OK { throw connection.lastError(code) }
  }

  func bind(text: String, at index: Int32) throws(SQLiteStoreError) {
    let code = sqlite3_bind_text64(handle, index, text, sqlite3_uint64(text.utf8.count), transient, UInt8(SQLITE_UTF8))
    if code == SQLITE_TOOBIG { throw .entryTooLarge(size: text.utf8.count, limit: connection.lengthLimit) }
    if code != SQLITE_OK { throw connection.lastError(code) }
  }

  func bindNull(at index: Int32) throws(SQLiteStoreError) {
    let code = sqlite3_bind_null(handle, index)
    if code != SQLITE_OK { throw connection.lastError(code) }
  }

  /// Steps once: `true` for a row, `false` when done.
  func step() throws(SQLiteStoreError) -> Bool {
    let code = sqlite3_step(handle)
    switch code {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default: throw connection.lastError(code)
    }
  }

  func reset() {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
  }

  func data(at column: Int32) -> Data {
    let count = Int(sqlite3_column_bytes(handle, column))
    guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return Data() }
    return Data(bytes: pointer, count: count)
  }

  func double(at column: Int32) -> Double? {
    sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_double(handle, column)
  }

  func int(at column: Int32) -> Int {
    Int(sqlite3_column_int64(handle, column))
  }

  func isNull(at column: Int32) -> Bool {
    sqlite3_column_type(handle, column) == SQLITE_NULL
  }

  func int64(at column: Int32) -> Int64 {
    sqlite3_column_int64(handle, column)
  }

  func text(at column: Int32) -> String? {
    sqlite3_column_text(handle, column).map { String(cString: $0) }
  }
}
