public import Foundation

/// The body of a target's request and its content type.
///
/// ```swift
/// .body(.json(NewItem(title: "Milk")))                    // application/json; charset=utf-8
/// .body(.json(["title": "Milk", "done": false]))          // from a dictionary
/// .body(.form(["user": "ada", "password": "p&ss"]))       // application/x-www-form-urlencoded
/// .body(.data(png, contentType: "image/png"))
/// .body(.multipart(MultipartFormData([.field("title", "Milk"), .file("photo", url: photoURL)])))
/// .body(.file(videoURL, contentType: "video/mp4"))        // streamed by the transport
/// ```
///
/// Encoding happens when the request is built; a failure is
/// ``NetworkError/encodingFailed(_:)``, never a crash.
public struct HTTPBody: Sendable {
  /// The `Content-Type` sent with JSON bodies: `application/json; charset=utf-8`.
  public static let jsonContentType = "application/json; charset=utf-8"
  /// The `Content-Type` sent with form bodies: `application/x-www-form-urlencoded; charset=utf-8`.
  public static let formContentType = "application/x-www-form-urlencoded; charset=utf-8"

  private let encode: @Sendable () throws(NetworkError) -> (body: HTTPRequest.Body, contentType: String?)

  private init(_ encode: @escaping @Sendable () throws(NetworkError) -> (body: HTTPRequest.Body, contentType: String?))
  {
    self.encode = encode
  }

  /// The bytes (or file) to send and their content type.
  ///
  /// - Returns: The body and its `Content-Type`, `nil` when none applies.
  /// - Throws: ``NetworkError/encodingFailed(_:)`` when the content cannot be encoded.
  public func encoded() throws(NetworkError) -> (body: HTTPRequest.Body, contentType: String?) {
    try encode()
  }

  /// A JSON body encoded from `value`.
  ///
  /// - Parameters:
  ///   - value: The value to encode.
  ///   - encoder: The encoder; a plain `JSONEncoder` by default.
  public static func json<Value: Encodable & Sendable>(
    _ value: Value,
    encoder: @autoclosure @escaping @Sendable () -> JSONEncoder = JSONEncoder()
  ) -> HTTPBody {
    HTTPBody { () throws(NetworkError) in
      do {
        return (.data(try encoder().encode(value)), jsonContentType)
      } catch {
        throw .encodingFailed("\(error)")
      }
    }
  }

  /// A JSON body from a dictionary of JSON values (strings, numbers, booleans, `NSNull`,
  /// arrays and dictionaries of them), with sorted keys.
  ///
  /// - Parameter dictionary: The JSON object.
  public static func json(_ dictionary: [String: any Sendable]) -> HTTPBody {
    HTTPBody { () throws(NetworkError) in
      guard JSONSerialization.isValidJSONObject(dictionary) else {
        throw .encodingFailed("the dictionary holds values that are not JSON")
      }
      do {
        return (.data(try JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys])), jsonContentType)
      } catch {
        throw .encodingFailed("\(error)")
      }
    }
  }

  /// A URL-encoded form body (`application/x-www-form-urlencoded; charset=utf-8`): names and
  /// values percent-encoded like a query, in order.
  ///
  /// - Parameter parameters: The form fields.
  public static func form(_ parameters: QueryParameters) -> HTTPBody {
    HTTPBody { () throws(NetworkError) in
      (.data(Data(parameters.percentEncoded.utf8)), formContentType)
    }
  }

  /// Raw bytes with a content type.
  ///
  /// - Parameters:
  ///   - data: The bytes.
  ///   - contentType: The `Content-Type`, or `nil` to send none.
  public static func data(_ data: Data, contentType: String?) -> HTTPBody {
    HTTPBody { () throws(NetworkError) in (.data(data), contentType) }
  }

  /// A `multipart/form-data` body.
  ///
  /// - Parameter form: The parts and boundary.
  public static func multipart(_ form: MultipartFormData) -> HTTPBody {
    HTTPBody { () throws(NetworkError) in
      (.data(try form.encoded()), form.contentType)
    }
  }

  /// The contents of a local file, streamed by transports that can.
  ///
  /// - Parameters:
  ///   - url: A `file:` URL.
  ///   - contentType: The `Content-Type`; `application/octet-stream` by default.
  public static func file(_ url: URL, contentType: String? = "application/octet-stream") -> HTTPBody {
    HTTPBody { () throws(NetworkError) in
      guard url.isFileURL else { throw .encodingFailed("\(url.absoluteString) is not a file URL") }
      return (.file(url), contentType)
    }
  }
}
