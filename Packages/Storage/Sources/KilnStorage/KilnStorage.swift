// KilnStorage — memory, disk, serializable, SQLite and PostgreSQL stores.
//
// Not implemented yet: see Packages/Storage/README.md for what is coming.

@_exported public import KilnCore

#if PostgreSQL
  // The `PostgreSQL` trait links postgres-nio for the coming PostgresStore.
  internal import PostgresNIO
#endif
