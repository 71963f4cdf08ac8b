import CLibFuzzer
import Foundation

/// Structured values carved out of a fuzzer's raw input, front to back; every read succeeds
/// (past the end it returns zeros and empty values), so any input is a valid test case.
public struct FuzzInput {
  private let bytes: [UInt8]
  private var position = 0

  /// Wraps libFuzzer's input.
  public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
    bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
  }

  /// Wraps bytes.
  public init(_ bytes: [UInt8]) {
    self.bytes = bytes
  }

  /// Whether every byte has been read.
  public var isAtEnd: Bool { position >= bytes.count }

  /// The next byte, or 0.
  public mutating func byte() -> UInt8 {
    guard position < bytes.count else { return 0 }
    defer { position += 1 }
    return bytes[position]
  }

  /// The next `count` bytes (fewer at the end).
  public mutating func bytes(_ count: Int) -> [UInt8] {
    let end = min(bytes.count, position + max(0, count))
    defer { position = end }
    return Array(bytes[min(position, end)..<end])
  }

  /// A little-endian integer of the next eight bytes.
  public mutating func uint64() -> UInt64 {
    bytes(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
  }

  /// A chunk whose length is the next byte: short strings and fields.
  public mutating func chunk() -> [UInt8] {
    bytes(Int(byte()))
  }

  /// A chunk decoded as UTF-8 (invalid sequences repaired).
  public mutating func string() -> String {
    String(decoding: chunk(), as: UTF8.self)
  }

  /// Every byte left.
  public mutating func rest() -> [UInt8] {
    bytes(bytes.count - position)
  }
}

/// Stops the process with `message` when `condition` is false: libFuzzer reports the crash
/// and saves the input that caused it.
public func fuzzCheck(
  _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
  line: UInt = #line
) {
  if !condition() {
    fatalError("invariant violated: \(message())", file: file, line: line)
  }
}

/// Runs libFuzzer over the fuzzer's `LLVMFuzzerTestOneInput` with the process's arguments and
/// exits with its status.
///
/// Each fuzzer's `main.swift` calls it: SwiftPM gives an executable's entry point its own
/// name, so libFuzzer's `main` is never linked and its driver is started from Swift.
public func runFuzzer() -> Never {
  var argc = CommandLine.argc
  var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
  exit(LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput))
}
