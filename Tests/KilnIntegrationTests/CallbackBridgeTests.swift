import Dispatch
import Foundation
import KilnDispatch
import KilnQuery
import KilnStorage
import KilnTesting
import Testing

/// A legacy callback API, the kind of code KilnDispatch's bridges move into a pipeline:
/// calls back once, on its own queue, after a moment.
final class LegacyArticleService: Sendable {
  let queue = DispatchQueue(label: "legacy-service")
  let calls = AsyncCounter()
  let failuresBeforeSuccess: Int

  init(failuresBeforeSuccess: Int = 0) {
    self.failuresBeforeSuccess = failuresBeforeSuccess
  }

  func fetch(id: Int, completion: @escaping @Sendable (Article?, (any Error)?) -> Void) {
    calls.increment()
    let call = calls.value
    queue.asyncAfter(deadline: .now() + .milliseconds(5)) { [failuresBeforeSuccess] in
      if call <= failuresBeforeSuccess {
        completion(nil, TestError("legacy \(call)"))
      } else {
        completion(Article(id: id, title: "from the legacy service"), nil)
      }
    }
  }
}

@Suite("Callback APIs in a pipeline", .timeLimit(.minutes(1)))
struct CallbackBridgeTests {
  /// The legacy API as a query: `withCallback` turns its two-argument callback into a value.
  static func query(_ service: LegacyArticleService, id: Int) -> AnyQuery<Article, any Error> {
    AnyQuery<Article, any Error> {
      let (article, error) = try await withCallback { service.fetch(id: id, completion: $0) }
      if let error { throw error }
      guard let article else { throw TestError("no article") }
      return article
    }
  }

  @Test("a callback API bridged into a retrying, caching pipeline, delivered back on a queue")
  func bridgedPipelineDeliveredOnAQueue() async throws {
    let service = LegacyArticleService(failuresBeforeSuccess: 1)
    let cache = MemoryCache<Int, Article>()
    let clock = ManualClock()
    let pipeline = cache.storage(forKey: 7)
      .fallback(
        Self.query(service, id: 7)
          .retry(.constant(maxAttempts: 2, delay: .seconds(1)), clock: clock)
          .store(into: cache.storage(forKey: 7)))

    let delivery = DispatchQueue(label: "delivery")
    delivery.setSpecific(key: Self.deliveryKey, value: "delivery")
    let delivered = Recorder<Bool>()
    let results = Recorder<Result<Article, any Error>>()
    runAsync(deliverOn: delivery) {
      try await pipeline.load()
    } completion: { result in
      delivered.append(DispatchQueue.getSpecific(key: CallbackBridgeTests.deliveryKey) == "delivery")
      results.append(result)
    }
    await clock.waitForSleepers(count: 1)  // the first legacy call failed; backoff armed
    clock.advance(by: .seconds(1))
    await results.waitForCount(1)

    #expect(try results.values.first?.get() == Article(id: 7, title: "from the legacy service"))
    #expect(service.calls.value == 2)
    #expect(cache[7] == Article(id: 7, title: "from the legacy service"))
    #expect(delivered.values == [true], "the completion ran on the queue it was promised")
  }

  /// Marks the delivery queue, so the completion can tell where it runs.
  static let deliveryKey = DispatchSpecificKey<String>()

  @Test("async → sync: a blocking caller on a worker queue waits for the pipeline's callback")
  func blockingCallerWaitsForPipeline() async throws {
    let service = LegacyArticleService()
    let pipeline = Self.query(service, id: 3).serial()
    let worker = DispatchQueue(label: "worker")
    let article: Article? = await withCheckedContinuation { continuation in
      worker.async {
        // A synchronous caller (old code on a worker queue) waits for the callback form.
        let result = <<-{ pipeline.load(completion: $0) }
        continuation.resume(returning: try? result.get())
      }
    }
    #expect(article == Article(id: 3, title: "from the legacy service"))
    #expect(service.calls.value == 1)
  }
}
