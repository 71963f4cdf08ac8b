// kiln-soak — the demo's stack under load and faults for minutes on end.
//
//   Scripts/soak.sh [minutes]          (builds, gives it a small tmpfs to fill, runs it)
//   kiln-soak [--minutes M] [--concurrency N] [--full-dir PATH] [--report-every SECONDS]
//             [--deadline SECONDS] [--rss-tolerance MIB] [--fd-tolerance COUNT]
//             [--transport urlsession|asynchttpclient]   (the handlers' transport; URLSession by
//                                        default, asynchttpclient needs `--traits AsyncHTTPClient`)
//             [--only net,repo.next,…]   (only the operations whose kind starts so)
//             [--server URL]             (an external `kiln-soak serve`, to tell whose memory grows)
//   kiln-soak serve                      (only the server: prints its URL, then its memory)
//   kiln-soak writer <sqlite file> <disk folder> <first sequence> <keys>   (the child)
//
// Workers run operations against the loopback server and the stores without pause:
// requests through KilnNetwork's handler (HTTP cache on disk, retries, de-duplication),
// pages of KilnRepository lists (next, previous, refresh, observe), reads and writes of
// MemoryCache, DiskCache, TieredCache and SQLiteStore, and reads of the stores a writer
// child shares. Meanwhile the server answers 5xx, drops connections, trickles and stalls
// bodies; the writer child is killed with SIGKILL and restarted; the file system under the
// HTTP cache fills up. Every value read is checked against what could have been written,
// and every operation has a deadline. It prints figures periodically and a verdict at the
// end, and exits 1 on a hang, a corrupt read, a lost acknowledged write, a writer crash, or
// growth of memory or file descriptors after warm-up beyond the tolerance.

import Foundation
import KilnNetwork
import KilnStorage
import Synchronization
import _KilnTestServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// A reader that goes away (`kiln-soak | head`) must not kill the run: see `log`.
signal(SIGPIPE, SIG_IGN)

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "writer" {
  await WriterChild.run(Array(CommandLine.arguments.dropFirst(2)))
}

// Diagnosis: `kiln-soak serve` runs only the server, prints its URL and then its own memory
// every 15 s, so that `--server URL` can tell the client's growth from the server's.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "serve" {
  let server = try await SoakAPI().start()
  log("\(server.baseURL)")
  while true {
    try await Task.sleep(for: .seconds(15))
    log("server: \(ProcessMetrics.now())")
  }
}

// MARK: - Options

struct Options {
  var minutes = 1.0
  var concurrency = 1_024
  var fullDirectory: URL?
  var reportEvery: Duration = .seconds(30)
  var deadline: Duration = .seconds(30)
  var rssToleranceMiB = 64
  var fdTolerance = 32
  /// When set, only the operations whose kind starts with one of these prefixes run.
  var only: [String]?
  /// An external server (`kiln-soak serve`) instead of the embedded one; no storms then.
  var server: URL?
  /// The transport of the stack's handlers.
  var transport = SoakTransport.Kind.urlsession

  init(_ arguments: [String]) {
    var arguments = arguments[...]
    func value() -> String {
      guard let value = arguments.popFirst() else { usage() }
      return value
    }
    func number<Number: LosslessStringConvertible>() -> Number {
      guard let number = Number(value()) else { usage() }
      return number
    }
    while let argument = arguments.popFirst() {
      switch argument {
      case "--minutes": minutes = number()
      case "--concurrency": concurrency = number()
      case "--full-dir": fullDirectory = URL(fileURLWithPath: value())
      case "--report-every": reportEvery = .seconds(number() as Double)
      case "--deadline": deadline = .seconds(number() as Double)
      case "--rss-tolerance": rssToleranceMiB = number()
      case "--fd-tolerance": fdTolerance = number()
      case "--only": only = value().split(separator: ",").map(String.init)
      case "--server": server = URL(string: value())
      case "--transport":
        guard let kind = SoakTransport.Kind(rawValue: value()) else { usage() }
        transport = kind
      default: usage()
      }
    }
  }
}

func usage() -> Never {
  try? FileHandle.standardError.write(
    contentsOf: Data(
      ("usage: kiln-soak [--minutes M] [--concurrency N] [--full-dir PATH] [--report-every S] [--deadline S] "
        + "[--rss-tolerance MIB] [--fd-tolerance COUNT] [--only KIND,KIND…] [--server URL] "
        + "[--transport urlsession|asynchttpclient]\n").utf8))
  exit(2)
}

/// Prints a line at once, even into a pipe. A closed pipe (EPIPE; SIGPIPE is ignored) loses
/// the line but not the run: `write(contentsOf:)` throws where `write(_:)` would trap, and the
/// exit status still carries the verdict.
func log(_ line: String) {
  try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
guard SoakTransport.isAvailable(options.transport) else {
  try? FileHandle.standardError.write(
    contentsOf: Data(
      ("kiln-soak: --transport \(options.transport.rawValue) needs the AsyncHTTPClient trait, which this build "
        + "lacks: build with `swift build --traits AsyncHTTPClient --product kiln-soak` (Scripts/soak.sh does so "
        + "when given --transport asynchttpclient)\n").utf8))
  exit(2)
}

// MARK: - The stack

let startMetrics = ProcessMetrics.now()
let stats = SoakStats()
let api = SoakAPI()
let embedded = options.server == nil ? try await api.start() : nil
let baseURL = options.server ?? embedded!.baseURL
let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-soak-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
if let full = options.fullDirectory {
  for leftover in (try? FileManager.default.contentsOfDirectory(atPath: full.path)) ?? [] {
    try? FileManager.default.removeItem(atPath: full.appendingPathComponent(leftover).path)
  }
}
let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
// One transport for the run, shut down at its end (see "Quiesce and judge").
let transport = SoakTransport(options.transport, timeout: .seconds(10))
let stack = try SoakStack(
  stats: stats, api: options.server == nil ? api : nil, baseURL: baseURL, workspace: workspace,
  fullDirectory: options.fullDirectory, transport: transport,
  writerExecutable: executable)
let operations = stack.operations.filter { operation in
  options.only.map { prefixes in prefixes.contains { operation.kind.hasPrefix($0) } } ?? (operation.weight > 0)
}.map { operation in (kind: operation.kind, weight: max(1, operation.weight), run: operation.run) }
guard !operations.isEmpty else { usage() }
let totalWeight = operations.reduce(0) { $0 + $1.weight }

let clock = ContinuousClock()
let start = clock.now
let end = start + .seconds(options.minutes * 60)
let warmUp = start + min(.seconds(60), .seconds(options.minutes * 60 * 0.2))

log(
  """
  kiln-soak: \(String(format: "%g", options.minutes)) min, \(options.concurrency) concurrent workers, \
  deadline \(options.deadline) per operation, server \(baseURL)
    transport \(transport.name)
    workspace \(workspace.path)
    full-disk fault: \(options.fullDirectory.map { "fills \($0.path) (HTTP cache and the \"full\" DiskCache live there)" } ?? "off (no --full-dir)")
    tolerance after warm-up: +\(options.rssToleranceMiB) MiB RSS, +\(options.fdTolerance) fds
    start: \(startMetrics)
  """)

// MARK: - Workers

let inFlight = InFlight()
let workersDone = Atomic<Bool>(false)
let workers = Task {
  await withTaskGroup(of: Void.self) { group in
    for _ in 0..<options.concurrency {
      group.addTask {
        while clock.now < end {
          var roll = Int.random(in: 0..<totalWeight)
          let operation = operations.first { operation in
            defer { roll -= operation.weight }
            return roll < operation.weight
          }!
          let id = inFlight.begin(operation.kind)
          await operation.run(stack)
          inFlight.end(id)
          stats.finished(operation.kind)
        }
      }
    }
  }
  workersDone.store(true, ordering: .sequentiallyConsistent)
}

// MARK: - Faults

/// Fills the file system of `folder` until it is full; returns the bytes written.
func fill(_ folder: URL) -> Int {
  let descriptor = open(folder.appendingPathComponent("ballast").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  guard descriptor >= 0 else { return 0 }
  defer { close(descriptor) }
  let chunk = [UInt8](repeating: 0xAB, count: 16 * 1_024)
  var total = 0
  while true {
    let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
    if written <= 0 { return total }
    total += written
  }
}

let faults = Task {
  while clock.now < end {
    try? await Task.sleep(for: .milliseconds(Int.random(in: 2_000...6_000)))
    let storm = Bool.random()
    let diskFull = options.fullDirectory != nil && (!storm || Bool.random())
    if storm {
      api.setRates(.storm)
      stats.update { $0.stormPhases += 1 }
    }
    if diskFull, let folder = options.fullDirectory {
      _ = fill(folder)
      stats.update { $0.diskFullPhases += 1 }
    }
    try? await Task.sleep(for: .milliseconds(Int.random(in: 1_000...4_000)))
    api.setRates(.calm)
    if diskFull, let folder = options.fullDirectory {
      unlink(folder.appendingPathComponent("ballast").path)
    }
  }
}

let writerDone = Atomic<Bool>(false)
_ = Task {
  await stack.writer.run(until: end) { await stack.verifyAcknowledged($0) }
  writerDone.store(true, ordering: .sequentiallyConsistent)
}

// MARK: - Monitor

func report(_ label: String) {
  let snapshot = stats.snapshot
  let elapsed = Double(start.duration(to: clock.now).components.seconds)
  let rate = elapsed > 0 ? Double(snapshot.operations) / elapsed : 0
  let errors = snapshot.errors.values.reduce(0, +)
  log(
    "[\(label)] ops \(snapshot.operations) (\(String(format: "%.0f", rate))/s), in flight \(inFlight.count), "
      + "errors \(errors), corrupt \(snapshot.corruptCount), hangs \(snapshot.hangs.count), "
      + "writer kills \(snapshot.writerKills), requests \(api.answered.load(ordering: .relaxed)), "
      + "\(ProcessMetrics.now())")
}

var warmUpMetrics: ProcessMetrics?
var warmUpInstant: ContinuousClock.Instant?
var nextReport = start + options.reportEvery
let giveUp = end + options.deadline + .seconds(10)
while !workersDone.load(ordering: .sequentiallyConsistent) && clock.now < giveUp {
  try? await Task.sleep(for: .milliseconds(250))
  for hang in inFlight.overdue(deadline: options.deadline) {
    stats.hang(hang)
    log("HANG: \(hang)")
  }
  if warmUpMetrics == nil, clock.now >= warmUp {
    warmUpMetrics = ProcessMetrics.now()
    warmUpInstant = clock.now
    log("[warm-up done] \(warmUpMetrics!)")
  }
  if clock.now >= nextReport {
    report("\(Int(Double(start.duration(to: clock.now).components.seconds)))s")
    nextReport = nextReport + options.reportEvery
  }
}

// MARK: - Quiesce and judge

let stillRunning = inFlight.count
await faults.value
api.setRates(.calm)
if let folder = options.fullDirectory { unlink(folder.appendingPathComponent("ballast").path) }
if stillRunning == 0 {
  // The supervisor's last check reads the stores: it gets the deadline too.
  let writerDeadline = clock.now + options.deadline
  while !writerDone.load(ordering: .sequentiallyConsistent) && clock.now < writerDeadline {
    try? await Task.sleep(for: .milliseconds(50))
  }
  if !writerDone.load(ordering: .sequentiallyConsistent) {
    stats.hang("the writer supervisor's last kill and check did not finish")
  }
  // Background revalidations of the HTTP cache may still run: give them the deadline.
  let revalidationDeadline = clock.now + options.deadline
  while stack.httpCache.revalidationsInFlight > 0 && clock.now < revalidationDeadline {
    try? await Task.sleep(for: .milliseconds(50))
  }
  if stack.httpCache.revalidationsInFlight > 0 {
    stats.hang("\(stack.httpCache.revalidationsInFlight) HTTP cache revalidations still running")
  }
}
let endMetrics = ProcessMetrics.now()
let endInstant = clock.now

// After the end's figures, so that the client's connections closing cannot hide a leak of
// descriptors. Requests still running (hangs) fail; the shutdown itself gets the deadline.
let transportShutdown = Mutex<(done: Bool, error: String?)>((false, nil))
_ = Task {
  do {
    try await transport.shutdown()
    transportShutdown.withLock { $0.done = true }
  } catch {
    transportShutdown.withLock { $0 = (true, "\(error)") }
  }
}
let shutdownDeadline = clock.now + options.deadline
while !transportShutdown.withLock({ $0.done }) && clock.now < shutdownDeadline {
  try? await Task.sleep(for: .milliseconds(50))
}
let shutdownFailure: String? = transportShutdown.withLock { state in
  guard state.done else { return "the transport's shutdown did not finish within \(options.deadline)" }
  return state.error.map { "the transport's shutdown failed: \($0)" }
}

let snapshot = stats.snapshot

/// Temporary files left in the disk caches' folders (a failed write must remove its own).
func temporaryFiles(under folder: URL) -> Int {
  guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return 0 }
  var count = 0
  while let name = walker.nextObject() as? String {
    if (name as NSString).lastPathComponent.hasPrefix(".kiln-tmp-") { count += 1 }
  }
  return count
}
let leftovers =
  stillRunning == 0
  ? temporaryFiles(under: workspace) + (options.fullDirectory.map { temporaryFiles(under: $0) } ?? 0) : 0

log("\nkiln-soak: done after \(start.duration(to: clock.now))")
log("  operations: \(snapshot.operations)")
for (kind, count) in snapshot.operationsByKind.sorted(by: { $0.key < $1.key }) {
  log("    \(kind): \(count)")
}
log("  errors by type: \(snapshot.errors.values.reduce(0, +))")
for (category, count) in snapshot.errors.sorted(by: { $0.value > $1.value }) {
  log("    \(count)\t\(category)")
}
log(
  "  faults: \(snapshot.stormPhases) server storms, \(snapshot.diskFullPhases) disk-full phases, "
    + "\(snapshot.writerKills) writer kills (SIGKILL), \(api.answered.load(ordering: .relaxed)) requests answered")
log("  corrupt reads: \(snapshot.corruptCount)")
for description in snapshot.corrupt { log("    \(description)") }
log("  lost acknowledged writes: \(snapshot.lostAckedWrites)")
log("  writer crashes: \(snapshot.writerCrashes)")
log("  hangs (over \(options.deadline)): \(snapshot.hangs.count)")
for hang in snapshot.hangs.prefix(20) { log("    \(hang)") }
log("  temporary files left behind: \(leftovers)")
log("  memory and descriptors:")
log("    start:   \(startMetrics)")
log("    warm-up: \(warmUpMetrics.map(\.description) ?? "not reached")")
log("    end:     \(endMetrics)")
if let warm = warmUpMetrics, let warmedAt = warmUpInstant {
  // The verdict compares the end with the warm-up's end; the rate is for comparing runs.
  let minutes = Double(warmedAt.duration(to: endInstant).components.seconds) / 60
  let growthMiB = Double(endMetrics.residentKiB - warm.residentKiB) / 1_024
  log(
    "    after warm-up: RSS \(String(format: "%+.1f", growthMiB)) MiB in \(String(format: "%.1f", minutes)) min "
      + "(\(String(format: "%+.2f", minutes > 0 ? growthMiB / minutes : 0)) MiB/min), "
      + "fds \(String(format: "%+d", endMetrics.fileDescriptors - warm.fileDescriptors))")
}
log("  transport shutdown: \(shutdownFailure ?? "done")")

var failures: [String] = []
if !snapshot.hangs.isEmpty { failures.append("\(snapshot.hangs.count) hangs") }
if stillRunning > 0 { failures.append("\(stillRunning) operations never finished") }
if snapshot.corruptCount > 0 { failures.append("\(snapshot.corruptCount) corrupt reads") }
if snapshot.lostAckedWrites > 0 { failures.append("\(snapshot.lostAckedWrites) lost acknowledged writes") }
if snapshot.writerCrashes > 0 { failures.append("the writer crashed \(snapshot.writerCrashes) times") }
if leftovers > 0 { failures.append("\(leftovers) temporary files left behind") }
if let warm = warmUpMetrics {
  let growth = endMetrics.residentKiB - warm.residentKiB
  if growth > options.rssToleranceMiB * 1_024 {
    failures.append("RSS grew \(mebibytes(growth)) after warm-up (tolerance \(options.rssToleranceMiB) MiB)")
  }
  let descriptorGrowth = endMetrics.fileDescriptors - warm.fileDescriptors
  if descriptorGrowth > options.fdTolerance {
    failures.append("\(descriptorGrowth) more fds after warm-up (tolerance \(options.fdTolerance))")
  }
}
if snapshot.operations == 0 { failures.append("no operation finished") }
if let shutdownFailure { failures.append(shutdownFailure) }

if failures.isEmpty {
  let growth = warmUpMetrics.map {
    " (after warm-up: RSS \(mebibytes(endMetrics.residentKiB - $0.residentKiB)), "
      + "fds \(endMetrics.fileDescriptors - $0.fileDescriptors))"
  }
  log(
    "VERDICT: PASS — no hang, no corrupt read, no lost write, memory and fds within tolerance\(growth ?? "")")
  // The server is not stopped: stalled answers still waiting on it would write to a stopped
  // event loop. Exiting ends it.
  try? FileManager.default.removeItem(at: workspace)
  exit(0)
} else {
  log("VERDICT: FAIL — \(failures.joined(separator: "; "))")
  log("  (workspace kept: \(workspace.path))")
  exit(1)
}
