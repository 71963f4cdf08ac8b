// Tests for KilnStorage arrive with its implementation (see Packages/Storage/README.md).
