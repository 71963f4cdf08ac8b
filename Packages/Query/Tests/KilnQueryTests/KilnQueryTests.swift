// Tests for KilnQuery arrive with its implementation (see Packages/Query/README.md).
