/// Why a ``SQLiteStore`` call failed.
public enum SQLiteStoreError: Error, Sendable, CustomStringConvertible {
  /// The table name is not a plain SQL identifier (letters, digits and `_`, at most 64
  /// characters, not starting with a digit).
  case invalidTableName(String)

  /// The database file could not be opened or created.
  case openFailed(path: String, code: Int32, message: String)

  /// The file exists but is not an SQLite database (or is damaged beyond reading). It is
  /// left untouched.
  case notADatabase(path: String)

  /// Another connection (possibly another process) held the database lock for longer than
  /// the store's busy timeout; nothing was written.
  case busy(message: String)

  /// The database could not be switched to WAL mode (SQLite kept `journalMode`, for
  /// example `memory` for an in-memory database): the store would lose its guarantees
  /// that reads never wait for writes and that several processes can share the file.
  case walUnavailable(path: String, journalMode: String)

  /// An encoded key or value of `size` bytes is larger than SQLite's length limit
  /// (`SQLITE_LIMIT_LENGTH`, one billion bytes unless the library was built otherwise);
  /// nothing was written.
  case entryTooLarge(size: Int, limit: Int)

  /// SQLite reported an error: its extended result code and message.
  case sqlite(code: Int32, message: String)

  /// The store was closed with ``SQLiteStore/close()``.
  case closed

  /// The key codec could not encode the key.
  case keyEncodingFailed(any Error)

  /// The value codec could not encode the value; nothing was written.
  case valueEncodingFailed(any Error)

  public var description: String {
    switch self {
    case .invalidTableName(let name): "SQLite store: \(String(reflecting: name)) is not a valid table name"
    case .openFailed(let path, let code, let message): "SQLite store: cannot open \(path): \(message) (\(code))"
    case .notADatabase(let path): "SQLite store: \(path) is not an SQLite database"
    case .busy(let message): "SQLite store: the database stayed locked: \(message)"
    case .walUnavailable(let path, let mode): "SQLite store: \(path) stays in journal mode \(mode), not WAL"
    case .entryTooLarge(let size, let limit): "SQLite store: \(size) bytes exceed SQLite's limit of \(limit)"
    case .sqlite(let code, let message): "SQLite store: \(message) (\(code))"
    case .closed: "SQLite store: the store is closed"
    case .keyEncodingFailed(let error): "SQLite store: the key could not be encoded: \(error)"
    case .valueEncodingFailed(let error): "SQLite store: the value could not be encoded: \(error)"
    }
  }
}
