// KilnNetwork — typed targets, a network handler, transports, retries and an HTTP cache.
//
// Being built: today the module holds the HTTP value types (HTTPMethod, HTTPHeaders,
// HTTPRequest, HTTPResponse, HTTPDate) that the transports, the handler and the HTTP cache
// share. See Packages/Network/README.md.

@_exported public import KilnCore

#if AsyncHTTPClient
  // The `AsyncHTTPClient` trait links async-http-client for the coming transport.
  internal import AsyncHTTPClient
#endif
