// Cross-package scenarios arrive as the packages they combine are implemented.
