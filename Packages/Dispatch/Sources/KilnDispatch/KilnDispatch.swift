// KilnDispatch — Brisk's GCD operators and timers for Swift 6, with async bridges.
//
// Not implemented yet: see Packages/Dispatch/README.md for what is coming.
