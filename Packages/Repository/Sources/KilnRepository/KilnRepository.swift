// KilnRepository — a single source of truth with observable loading states and pagination.
//
// `State/` holds the values a UI switches on (`LoadingState`, `AdditionalLoadingState`) and
// their combinators; `Flowable/` the repository itself (`Repository`, `Fetcher`, `Cacher`,
// `StoreCacher`, `AnyStoreFlowable`, and the internal `FlowRegistry` of live states); `Pagination/` the page window and paginated
// flowables; `Loaders/` the observable `Loader` and `CachedLoader`. The state of one param
// is coordinated by an actor (`Internal/FlowCoordinator`) and fanned out to subscribers by a
// lock-protected broadcaster (`Internal/Broadcaster`). `import KilnRepository` also imports
// KilnCore and KilnStorage.

@_exported public import KilnCore
@_exported public import KilnStorage
