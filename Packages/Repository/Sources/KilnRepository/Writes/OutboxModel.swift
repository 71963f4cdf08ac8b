public import Observation

/// An ``Outbox`` as a UI shows it: the changes waiting, whether sending is paused, and what
/// happened last, observable (Observation) on the main actor.
///
/// ```swift
/// @State var sync = OutboxModel(outbox)
///
/// var body: some View {
///   if !sync.entries.isEmpty {
///     Label("\(sync.entries.count) changes not sent yet", systemImage: sync.isPaused ? "wifi.slash" : "arrow.up")
///   }
/// }
/// ```
///
/// It follows the outbox from its creation until it is deinitialised or the outbox closes.
@Observable @MainActor
public final class OutboxModel {
  /// The changes waiting, oldest first, with their attempts, last error and state.
  public private(set) var entries: [OutboxEntrySummary] = []
  /// Whether every scope waits because the origin is unreachable.
  public private(set) var isPaused = false
  /// The last thing that happened to an entry.
  public private(set) var lastEvent: OutboxEvent?
  /// The changes the origin refused for good since the model was made, newest last.
  public private(set) var rejections: [OutboxEvent] = []

  /// The outbox followed.
  @ObservationIgnored public let outbox: Outbox
  @ObservationIgnored private var tasks: [Task<Void, Never>] = []

  /// Follows `outbox`.
  public init(_ outbox: Outbox) {
    self.outbox = outbox
    let entries = outbox.entryUpdates()
    let events = outbox.events()
    tasks = [
      Task { [weak self] in
        for await list in entries {
          guard let self else { return }
          self.entries = list
        }
      },
      Task { [weak self] in
        // Events from here on arrive after this reading, so the last one wins.
        let paused = await outbox.isPaused
        self?.isPaused = paused
        for await event in events {
          guard let self else { return }
          self.record(event)
        }
      },
    ]
  }

  isolated deinit {
    for task in tasks { task.cancel() }
  }

  private func record(_ event: OutboxEvent) {
    lastEvent = event
    switch event {
    case .paused: isPaused = true
    case .resumed: isPaused = false
    case .rejected: rejections.append(event)
    default: break
    }
  }

  /// Sends again now (see ``Outbox/resume()``): a "retry now" button.
  public func resume() async {
    await outbox.resume()
  }
}
