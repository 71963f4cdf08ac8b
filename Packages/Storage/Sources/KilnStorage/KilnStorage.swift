// KilnStorage — memory, disk, serializable, SQLite and UserDefaults stores, and tiers.
//
// Every store conforms to KilnCore's `KeyValueStore` (or `Storage`), so any of them can
// back a query pipeline, the network layer's response cache or a repository. See
// KilnStorage.docc/ChoosingAStore.md for which to use when.

@_exported public import KilnCore
