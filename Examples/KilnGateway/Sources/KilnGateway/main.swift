// kiln-gateway: the origin service and the gateway service of Kiln's gateway example.
//
//   KilnGateway origin  --port 8080 [--work-ms 20] [--max-age 60]
//   KilnGateway gateway --port 8081 --origin http://127.0.0.1:8080 --cache shared|off
//                       [--postgres URL] [--table NAME] [--instance NAME]
//
// --port 0 takes a free port; each prints "… listening on 127.0.0.1:PORT" once it serves. Both
// stop gracefully on SIGTERM or SIGINT. run.sh (beside Package.swift) starts everything and
// measures it.
import Foundation

do {
  let options = try Options(CommandLine.arguments)
  switch options.command {
  case "origin": try await Origin(options: options).run()
  case "gateway": try await Gateway(options: options).run()
  default: throw UsageError("unknown command \(options.command): origin or gateway")
  }
} catch let error as UsageError {
  FileHandle.standardError.write(Data("usage: \(error)\n".utf8))
  exit(2)
}

/// Writes one line to standard output at once (print buffers when it is a file, and run.sh
/// waits for the "listening" line in one).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
