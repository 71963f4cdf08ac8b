// KilnQuery — composable query decorators and coordinators (Bricks and beyond).
//
// Not implemented yet: see Packages/Query/README.md for what is coming.

@_exported public import KilnCore
