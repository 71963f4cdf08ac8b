import Foundation

/// Finds the binary of an executable target that SwiftPM built beside the running tests.
///
/// Tests that need a real second process — a writer killed with `SIGKILL` to prove a cache
/// is crash-safe, a program whose main thread must be the real one — put it in an
/// executable target, make the test target depend on it (so `swift build --build-tests`
/// builds it), and find it here:
///
/// ```swift
/// let writer = try TestExecutable.locate("MyCacheCrashWriter")
/// let child = try ChildProcess(executable: writer, arguments: ["write", directory.path])
/// ```
public enum TestExecutable {
  /// The path of the executable named `name`.
  ///
  /// Looks in `$<environmentVariable>` first when one is given, then in the folder of the
  /// running test binary and of every loaded `.xctest` bundle, where SwiftPM puts the
  /// products of a build.
  ///
  /// - Parameters:
  ///   - name: The executable target's name.
  ///   - environmentVariable: A variable that may point at the executable instead.
  /// - Returns: The executable's path.
  /// - Throws: ``TestExecutableError/notFound(name:searched:)`` naming every folder searched.
  public static func locate(_ name: String, environmentVariable: String? = nil) throws(TestExecutableError) -> String {
    if let environmentVariable, let path = ProcessInfo.processInfo.environment[environmentVariable] {
      return path
    }
    var folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
      folders.append(bundle.bundleURL.deletingLastPathComponent())
    }
    for folder in folders {
      let path = folder.appendingPathComponent(name).path
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw .notFound(name: name, searched: folders.map(\.path))
  }
}

/// Why ``TestExecutable/locate(_:environmentVariable:)`` found nothing.
public enum TestExecutableError: Error, Hashable, CustomStringConvertible {
  /// No executable `name` in any of the `searched` folders.
  case notFound(name: String, searched: [String])

  public var description: String {
    switch self {
    case .notFound(let name, let searched):
      "\(name) was not found beside the test binary (looked in \(searched.joined(separator: ", "))); "
        + "build it with `swift build --build-tests`"
    }
  }
}
