/// How Kiln compares errors, which are not `Equatable`: by dynamic type and, when the error
/// is `Equatable`, by `==`, else by its reflected description.
enum ErrorIdentity {
  static func same(_ lhs: any Error, _ rhs: any Error) -> Bool {
    guard type(of: lhs) == type(of: rhs) else { return false }
    if let equal = DynamicEquality.equal(lhs, rhs) { return equal }
    return String(reflecting: lhs) == String(reflecting: rhs)
  }
}

/// `==` for values whose static type is not known to be `Equatable`.
enum DynamicEquality {
  /// `lhs == rhs` when the dynamic type of `lhs` is `Equatable`, else `nil`.
  static func equal<Value>(_ lhs: Value, _ rhs: Value) -> Bool? {
    guard let lhs = lhs as? any Equatable else { return nil }
    return lhs.isEqual(toAny: rhs)
  }
}

extension Equatable {
  fileprivate func isEqual(toAny other: Any) -> Bool {
    guard let other = other as? Self else { return false }
    return self == other
  }
}
