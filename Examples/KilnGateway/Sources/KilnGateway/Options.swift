/// The command line: `kiln-gateway origin|gateway --name value …`.
struct Options {
  let command: String
  private var values: [String: String] = [:]

  init(_ arguments: [String]) throws(UsageError) {
    guard arguments.count >= 2 else { throw UsageError("missing command: origin or gateway") }
    command = arguments[1]
    var index = 2
    while index < arguments.count {
      let name = arguments[index]
      guard name.hasPrefix("--"), index + 1 < arguments.count else {
        throw UsageError("expected --name value at \(name)")
      }
      values[String(name.dropFirst(2))] = arguments[index + 1]
      index += 2
    }
  }

  func string(_ name: String, default fallback: String? = nil) throws(UsageError) -> String {
    guard let value = values[name] ?? fallback else { throw UsageError("--\(name) is required") }
    return value
  }

  func int(_ name: String, default fallback: Int) throws(UsageError) -> Int {
    guard let text = values[name] else { return fallback }
    guard let value = Int(text), value >= 0 else { throw UsageError("--\(name) takes a whole number, not \(text)") }
    return value
  }
}

struct UsageError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
