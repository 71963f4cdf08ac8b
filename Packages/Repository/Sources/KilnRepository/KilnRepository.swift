// KilnRepository — single source of truth with observable loading states and pagination.
//
// Not implemented yet: see Packages/Repository/README.md for what is coming.

@_exported public import KilnCore
