// Tests for KilnNetwork arrive with its implementation (see Packages/Network/README.md).
