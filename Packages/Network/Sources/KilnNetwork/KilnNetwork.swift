// KilnNetwork — typed targets, a network handler, transports, retries and an HTTP cache.
//
// Not implemented yet: see Packages/Network/README.md for what is coming.

@_exported public import KilnCore

#if AsyncHTTPClient
  // The `AsyncHTTPClient` trait links async-http-client for the coming transport.
  internal import AsyncHTTPClient
#endif
