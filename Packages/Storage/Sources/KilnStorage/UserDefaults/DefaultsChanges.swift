import Foundation
import _KilnSynchronization

/// What a Kiln store keeps in one preference.
enum DefaultsValue: Sendable, Equatable {
  /// A ``UserDefaultsStore`` entry.
  case data(Data)
  /// A ``UserDefaultsListStore`` list.
  case list([Data])
}

/// What to do with a preference, decided from its current value.
enum DefaultsDecision: Sendable {
  /// Leave it as it is.
  case keep
  /// Store this value.
  case set(DefaultsValue)
  /// Remove the preference.
  case remove
}

/// Orders the changes that Kiln's stores make to each preference in this process, without
/// holding a lock while `UserDefaults` runs.
///
/// `UserDefaults` posts `didChangeNotification` (and KVO) synchronously on Apple platforms:
/// a lock held around `set` or `removeObject` would run observers — user code — under it,
/// and deadlock one that writes back. So a change is *decided* under the lock, from the
/// latest change begun on that preference (or, with none running, from what the defaults
/// hold), and *applied* after it is released. Applications may land out of order; each one
/// checks afterwards whether a later change began meanwhile and, if so, applies the latest
/// again. Once every change begun in this process has returned, the preference holds the
/// latest one: no read-modify-write (an append) loses another, and a conditional removal
/// (of an expired entry) never removes a value written after it decided.
///
/// Changes made by other processes, by code writing the defaults directly, or through
/// another `UserDefaults` object of the same suite are not ordered.
final class DefaultsChanges: Sendable {
  /// The instance every store of the process shares.
  static let shared = DefaultsChanges()

  private struct Preference: Hashable {
    var defaults: ObjectIdentifier
    var name: String
  }

  /// The changes running on one preference.
  private struct Running {
    /// Changes begun, numbering them.
    var begun: UInt64 = 0
    /// Changes that have not returned yet.
    var count = 0
    /// The value of the latest change begun; `nil` for a removal.
    var latest: DefaultsValue?
  }

  /// Only preferences with changes running: bounded by the threads writing.
  private let running = KilnMutex<[Preference: Running]>([:])

  /// Decides a change of the preference `name` under the lock and applies it after.
  ///
  /// - Parameters:
  ///   - name: The preference.
  ///   - defaults: The defaults holding it.
  ///   - decide: Given the preference's current value — that of the latest change begun in
  ///     this process and still running, else what `defaults` holds (`nil` when nothing or
  ///     something else) — decides the change. Runs under the lock: it must be short, and
  ///     must neither call user code (no codec) nor write `defaults`.
  /// - Returns: Whether a change was made.
  @discardableResult
  func change(
    _ name: String,
    in defaults: UserDefaults,
    decide: (_ current: DefaultsValue?) -> DefaultsDecision
  ) -> Bool {
    let preference = Preference(defaults: ObjectIdentifier(defaults), name: name)
    let decided: (number: UInt64, value: DefaultsValue?)? = running.withLock { running in
      // Reading the defaults here calls no user code (only writes notify observers).
      let current = running[preference].map(\.latest) ?? Self.read(name, from: defaults)
      let value: DefaultsValue?
      switch decide(current) {
      case .keep: return nil
      case .set(let new): value = new
      case .remove: value = nil
      }
      var changes = running[preference] ?? Running()
      changes.begun += 1
      changes.count += 1
      changes.latest = value
      running[preference] = changes
      return (changes.begun, value)
    }
    guard var (applied, value) = decided else { return false }
    while true {
      Self.write(value, name, to: defaults)
      let later: (number: UInt64, value: DefaultsValue?)? = running.withLock { running in
        guard var changes = running[preference] else { preconditionFailure("a running change was forgotten") }
        if changes.begun != applied { return (changes.begun, changes.latest) }
        changes.count -= 1
        running[preference] = changes.count == 0 ? nil : changes
        return nil
      }
      guard let later else { return true }
      // A later change began while this one was applied, and may have landed first.
      (applied, value) = later
    }
  }

  /// The value of preference `name` in `defaults`, as a Kiln store wrote it.
  private static func read(_ name: String, from defaults: UserDefaults) -> DefaultsValue? {
    switch defaults.object(forKey: name) {
    case let data as Data: .data(data)
    case let list as [Any]: .list(list.compactMap { $0 as? Data })
    default: nil
    }
  }

  private static func write(_ value: DefaultsValue?, _ name: String, to defaults: UserDefaults) {
    switch value {
    case .data(let data): defaults.set(data, forKey: name)
    case .list(let list): defaults.set(list, forKey: name)
    case nil: defaults.removeObject(forKey: name)
    }
  }
}
