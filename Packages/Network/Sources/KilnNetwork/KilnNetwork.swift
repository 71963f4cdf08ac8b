// KilnNetwork — typed targets, a network handler, transports, retries and an HTTP cache.
//
// Folders: HTTP/ (value types), Transport/ (the protocol, URLSession, AsyncHTTPClient with its
// trait, stubs), Targets/, Handler/, Pipeline/ (the request chain and its stages), Retry/,
// Authentication/, ResponseCache/, Watches/, HTTPCache/ (RFC 9111 / RFC 5861) and OpenAPI/
// (with the OpenAPI trait). See Packages/Network/README.md.

@_exported public import KilnCore
// KilnQuery is re-exported from Retry/RetryPolicy.swift, whose public API uses it.
