// KilnRepositoryNetwork — KilnRepository's loaders and writes over KilnNetwork's handler.
//
// `SimpleNetworkLoader` and `HTTPMutator` live here rather than in KilnRepository so that a repository that
// does not load over HTTP builds no networking: KilnRepository depends on KilnCore and
// KilnStorage only. `import KilnRepositoryNetwork` also imports KilnRepository and
// KilnNetwork, whose types a network loader is made of.

@_exported public import KilnNetwork
@_exported public import KilnRepository
