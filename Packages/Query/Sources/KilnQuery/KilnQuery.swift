// KilnQuery — composable query decorators and coordinators (Bricks and beyond).
//
// Decorators are small generic value types returned by extension methods on `Query`
// (`Decorators/`, `Retry/`, `Sharing/`); coordinators with state are actors
// (`Coordinators/`). Shared in-flight loads live in `Internal/` (`Flight`, `FlightSlot`);
// `Race` (for operations that must return on time) is in `_KilnSynchronization`. Users
// `import KilnQuery` alone: it re-exports KilnCore.

@_exported public import KilnCore
