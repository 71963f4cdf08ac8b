// KilnRepositoryTesting — test support for repositories built on KilnRepository.
//
// `ControlledFetcher` and `ControlledPaginationFetcher` hold each call until the test answers
// it (both on `Internal/ControlledCalls`); `LoadingStateRecorder` keeps every state a
// subscription sees. Their waits are bounded (`Internal/BoundedWait`): a wait that runs out
// records a Swift Testing issue and returns, instead of hanging until the suite's time limit.
// Depends on KilnRepository and KilnTesting (whose `AsyncCounter` and `Recorder` it builds on).
