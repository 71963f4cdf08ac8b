import CKilnSQLite
import Dispatch
import Foundation

/// Runs an actor's jobs on a dedicated serial dispatch queue, so that blocking SQLite calls
/// (waiting for another process's lock, an fsync) never occupy the cooperative pool.
final class DispatchQueueExecutor: SerialExecutor {
  let queue: DispatchQueue

  init(label: String) {
    queue = DispatchQueue(label: label)
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedSerialExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }

  func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }
}
