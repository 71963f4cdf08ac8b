// Tests for KilnRepository arrive with its implementation (see Packages/Repository/README.md).
