import Testing

@testable import KilnRepository

/// Who the broadcaster delivers to as subscribers come and go out of order: it keeps its inboxes
/// in one array, each leaving subscriber's place taken by the last one.
@Suite("Broadcaster", .timeLimit(.minutes(1)))
struct BroadcasterTests {
  func snapshot(_ value: Int) -> LoadingSnapshot<Int> {
    LoadingSnapshot(state: .loading(content: value), origin: nil)
  }

  @Test(
    "subscribers leaving from the middle: the others get every snapshot, the leavers none; the newest tag stays the newest"
  )
  func subscribersLeavingOutOfOrder() async {
    let broadcaster = Broadcaster<Int, Int>()
    let emptied = Counter()
    broadcaster.onEmpty { emptied.increment() }
    broadcaster.emit(snapshot(0))
    let inboxes = (0..<5).map { broadcaster.subscribe(tag: $0) }
    // Each gets the replay first.
    for inbox in inboxes { #expect(await inbox.next()?.state.content == 0) }

    inboxes[1].finish()
    inboxes[3].finish()
    #expect(broadcaster.subscriberCount == 3)
    #expect(broadcaster.latestTag == 4)
    broadcaster.emit(snapshot(1))
    broadcaster.emit(snapshot(2))
    for index in [0, 2, 4] {
      #expect(await inboxes[index].next()?.state.content == 1)
      #expect(await inboxes[index].next()?.state.content == 2)
    }
    #expect(inboxes[1].slotCount == 0)
    #expect(inboxes[3].slotCount == 0)

    // The newest leaves: the newest of those left is 2. A new subscriber is newer still.
    inboxes[4].finish()
    #expect(broadcaster.latestTag == 2)
    let late = broadcaster.subscribe(tag: 9)
    #expect(broadcaster.latestTag == 9)
    #expect(await late.next()?.state.content == 2)  // the replay

    // Finishing twice removes once; the last one leaving calls onEmpty once.
    inboxes[0].finish()
    inboxes[0].finish()
    #expect(broadcaster.subscriberCount == 2)
    inboxes[2].finish()
    #expect(emptied.value == 0)
    late.finish()
    #expect(broadcaster.subscriberCount == 0)
    #expect(emptied.value == 1)
    #expect(broadcaster.latestTag == nil)
  }

  @Test(
    "1,000 subscribers coming and going while snapshots are emitted: each one still there gets every snapshot in order")
  func churnDuringEmits() async {
    let broadcaster = Broadcaster<Int, Int>()
    broadcaster.emit(snapshot(0))
    let stayers = (0..<100).map { broadcaster.subscribe(tag: $0) }
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        for round in 0..<1_000 {
          let inbox = broadcaster.subscribe(tag: 1_000 + round)
          await Task.yield()
          inbox.finish()
        }
      }
      group.addTask {
        for value in 1...50 {
          broadcaster.emit(snapshot(value))
          await Task.yield()
        }
      }
    }
    #expect(broadcaster.subscriberCount == 100)
    for inbox in stayers {
      var seen: [Int] = []
      await inbox.readContents(into: &seen, through: 50)
      #expect(seen == Array(0...50))
    }
  }
}
