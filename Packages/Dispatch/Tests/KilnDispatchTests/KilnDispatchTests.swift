// Tests for KilnDispatch arrive with its implementation (see Packages/Dispatch/README.md).
