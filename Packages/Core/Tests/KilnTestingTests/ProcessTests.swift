import Foundation
import KilnTesting
import Testing

@Suite("ChildProcess and TestExecutable", .timeLimit(.minutes(1)))
struct ProcessTests {
  @Test("reads a child's output line by line, then its end, and its exit status")
  func readsLines() throws {
    let child = try ChildProcess(
      executable: "/bin/sh", arguments: ["-c", "echo first; printf 'second\\nthird\\n'; exit 3"])
    #expect(try child.readLine() == "first")
    #expect(try child.remainingLines() == ["second", "third"])
    #expect(try child.readLine() == nil)
    #expect(child.wait() == 3)
  }

  @Test("a line that does not come in time is a timeout, not a hang")
  func timesOut() throws {
    let child = try ChildProcess(executable: "/bin/sleep", arguments: ["30"])
    let started = ContinuousClock.now
    #expect(throws: ChildProcessTimeout(timeout: .milliseconds(200))) {
      try child.readLine(timeout: .milliseconds(200))
    }
    #expect(ContinuousClock.now - started < .seconds(20))
    child.kill()
    #expect(child.wait() == SIGKILL)
  }

  @Test("kill ends a running child at once")
  func kills() throws {
    let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo ready; exec sleep 30"])
    #expect(try child.readLine() == "ready")
    let started = ContinuousClock.now
    child.kill()
    #expect(ContinuousClock.now - started < .seconds(10))
    #expect(try child.remainingLines() == [])
    #expect(child.wait() == SIGKILL)
  }

  @Test("standard error is captured when asked for")
  func capturesStandardError() throws {
    let child = try ChildProcess(
      executable: "/bin/sh", arguments: ["-c", "echo oops >&2; exit 1"], capturesStandardError: true)
    #expect(child.wait() == 1)
    #expect(child.standardError() == "oops\n")
  }

  @Test("locating a missing executable names it and every folder searched")
  func missingExecutable() {
    #expect {
      try TestExecutable.locate("NoSuchKilnExecutable")
    } throws: { error in
      guard case .notFound(let name, let searched) = error as? TestExecutableError else { return false }
      return name == "NoSuchKilnExecutable" && !searched.isEmpty
        && "\(error)".contains("NoSuchKilnExecutable was not found")
    }
  }

  @Test("an environment variable can point at the executable")
  func environmentOverride() throws {
    let variable = "KILN_TEST_EXECUTABLE_\(UInt32.random(in: 0...UInt32.max))"
    setenv(variable, "/bin/sh", 1)
    defer { unsetenv(variable) }
    #expect(try TestExecutable.locate("anything", environmentVariable: variable) == "/bin/sh")
  }

  @Test("a CheckedValue survives coding and tells a torn or mixed value from a written one")
  func checkedValue() throws {
    let value = CheckedValue(key: "k3", sequence: 41, payloadLengths: 40..<6_040)
    #expect(value.isIntact(for: "k3"))
    #expect(!value.isIntact(for: "k4"))
    #expect((40..<6_040).contains(value.payload.count - "k3#41:".count))
    let decoded = try JSONDecoder().decode(CheckedValue.self, from: JSONEncoder().encode(value))
    #expect(decoded == value && decoded.isIntact)

    var torn = value
    torn.payload.removeLast()
    #expect(!torn.isIntact)
    var mixed = value
    mixed.sequence = 42
    #expect(!mixed.isIntact)
    #expect(CheckedValue(key: "k3", sequence: 42) != value)
  }
}
