import Foundation
import Synchronization

/// Everything the soak counts, safe from any thread.
final class SoakStats: Sendable {
  struct Snapshot {
    var operations = 0
    var operationsByKind: [String: Int] = [:]
    var errors: [String: Int] = [:]
    var corrupt: [String] = []
    var corruptCount = 0
    var hangs: [String] = []
    var writerKills = 0
    var writerCrashes = 0
    var lostAckedWrites = 0
    var diskFullPhases = 0
    var stormPhases = 0
  }

  private let state = Mutex(Snapshot())

  func finished(_ kind: String) {
    state.withLock {
      $0.operations += 1
      $0.operationsByKind[kind, default: 0] += 1
    }
  }

  func error(_ category: String) {
    state.withLock { $0.errors[category, default: 0] += 1 }
  }

  /// A read that returned a value nobody wrote (torn, mixed, invented or out of order).
  func corrupt(_ description: String) {
    state.withLock {
      $0.corruptCount += 1
      if $0.corrupt.count < 20 { $0.corrupt.append(description) }
    }
  }

  func hang(_ description: String) {
    state.withLock { $0.hangs.append(description) }
  }

  func update(_ change: (inout Snapshot) -> Void) {
    state.withLock { change(&$0) }
  }

  var snapshot: Snapshot {
    state.withLock { $0 }
  }
}

/// The operations running now, each with its start, so a watchdog can find the ones that
/// passed their deadline.
final class InFlight: Sendable {
  private struct Operation {
    var kind: String
    var start: ContinuousClock.Instant
    var reportedAsHang = false
  }

  private let operations = Mutex<(next: Int, running: [Int: Operation])>((0, [:]))

  func begin(_ kind: String) -> Int {
    operations.withLock { state in
      state.next += 1
      state.running[state.next] = Operation(kind: kind, start: .now)
      return state.next
    }
  }

  func end(_ id: Int) {
    _ = operations.withLock { $0.running.removeValue(forKey: id) }
  }

  var count: Int {
    operations.withLock { $0.running.count }
  }

  /// The operations older than `deadline` not reported before, now marked as reported.
  func overdue(deadline: Duration) -> [String] {
    let now = ContinuousClock.now
    return operations.withLock { state in
      var late: [String] = []
      for (id, operation) in state.running where !operation.reportedAsHang && now - operation.start > deadline {
        state.running[id]!.reportedAsHang = true
        late.append("\(operation.kind) #\(id) running for more than \(deadline)")
      }
      return late
    }
  }
}

/// The process's memory and file descriptors, from /proc (Linux).
struct ProcessMetrics: CustomStringConvertible {
  /// Resident set size now, in KiB (`VmRSS`).
  var residentKiB: Int
  /// The high-water mark of the resident set size, in KiB (`VmHWM`).
  var highWaterKiB: Int
  /// Open file descriptors.
  var fileDescriptors: Int

  static func now() -> ProcessMetrics {
    var rss = -1
    var hwm = -1
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) {
      for line in status.split(separator: "\n") {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 2, let value = Int(fields[1]) else { continue }
        if fields[0] == "VmRSS:" { rss = value }
        if fields[0] == "VmHWM:" { hwm = value }
      }
    }
    // Listing the folder opens one descriptor of its own.
    let descriptors = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 0) - 1
    return ProcessMetrics(residentKiB: rss, highWaterKiB: hwm, fileDescriptors: descriptors)
  }

  var description: String {
    "RSS \(mebibytes(residentKiB)) (high-water \(mebibytes(highWaterKiB))), \(fileDescriptors) fds"
  }
}

func mebibytes(_ kibibytes: Int) -> String {
  String(format: "%.1f MiB", Double(kibibytes) / 1_024)
}
