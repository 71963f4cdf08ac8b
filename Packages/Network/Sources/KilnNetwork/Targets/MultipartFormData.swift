public import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and files, in order.
///
/// ```swift
/// let form = MultipartFormData([
///   .field("title", "Holiday"),
///   .data("thumbnail", thumbnail, filename: "thumb.jpg", contentType: "image/jpeg"),
///   .file("photo", url: photoURL, contentType: "image/jpeg"),
/// ])
/// let task = NetworkTask.body(.multipart(form))
/// ```
public struct MultipartFormData: Sendable {
  /// One part of the form.
  public struct Part: Sendable {
    enum Content: Sendable {
      case data(Data)
      case file(URL)
    }

    /// The form field name.
    public var name: String
    /// The file name sent with the part, if any.
    public var filename: String?
    /// The part's `Content-Type`, if any.
    public var contentType: String?
    let content: Content

    /// A text field.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The text, sent as UTF-8.
    public static func field(_ name: String, _ value: String) -> Part {
      Part(name: name, filename: nil, contentType: nil, content: .data(Data(value.utf8)))
    }

    /// Bytes, usually a file's contents held in memory.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - data: The bytes.
    ///   - filename: The file name sent, if any.
    ///   - contentType: The part's content type; `application/octet-stream` by default.
    public static func data(
      _ name: String,
      _ data: Data,
      filename: String? = nil,
      contentType: String? = "application/octet-stream"
    ) -> Part {
      Part(name: name, filename: filename, contentType: contentType, content: .data(data))
    }

    /// The contents of a local file, read when the request is built.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - url: A `file:` URL.
    ///   - filename: The file name sent; the URL's last path component by default.
    ///   - contentType: The part's content type; `application/octet-stream` by default.
    public static func file(
      _ name: String,
      url: URL,
      filename: String? = nil,
      contentType: String? = "application/octet-stream"
    ) -> Part {
      Part(name: name, filename: filename ?? url.lastPathComponent, contentType: contentType, content: .file(url))
    }
  }

  /// The parts, in the order sent.
  public var parts: [Part]

  /// The boundary between parts.
  public let boundary: String

  /// Creates a form.
  ///
  /// - Parameters:
  ///   - parts: The parts, in the order sent.
  ///   - boundary: The boundary; a random one by default. It must not occur in any part, and
  ///     must be 1 to 70 of the characters RFC 2046 allows (``encoded()`` checks both).
  public init(_ parts: [Part], boundary: String = "kiln-boundary-\(UUID().uuidString)") {
    self.parts = parts
    self.boundary = boundary
  }

  /// `multipart/form-data; boundary=…`.
  public var contentType: String {
    "multipart/form-data; boundary=\(boundary)"
  }

  /// The encoded body.
  ///
  /// - Throws: ``NetworkError/encodingFailed(_:)`` when a file cannot be read, a part
  ///   contains the boundary, a content type contains a line break, or the boundary is not
  ///   1 to 70 of the characters RFC 2046 allows (letters, digits, space and `'()+_,-./:=?`,
  ///   not ending with a space).
  public func encoded() throws(NetworkError) -> Data {
    guard Self.isValidBoundary(boundary) else {
      throw .encodingFailed("the boundary \"\(boundary)\" is not 1 to 70 characters allowed by RFC 2046")
    }
    var body = Data()
    let delimiter = Data("--\(boundary)".utf8)
    for part in parts {
      // A line break would end the header line and let the value write header fields or
      // the part's contents.
      if let contentType = part.contentType, contentType.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) {
        throw .encodingFailed("the content type of the part \"\(part.name)\" contains a line break")
      }
      let content: Data
      switch part.content {
      case .data(let data):
        content = data
      case .file(let url):
        do {
          content = try Data(contentsOf: url)
        } catch {
          throw .encodingFailed("the file \(url.path) could not be read: \(error)")
        }
      }
      if content.range(of: delimiter) != nil {
        throw .encodingFailed("the part \"\(part.name)\" contains the boundary")
      }
      body.append(delimiter)
      body.append(Data("\r\nContent-Disposition: form-data; name=\"\(Self.quoted(part.name))\"".utf8))
      if let filename = part.filename {
        body.append(Data("; filename=\"\(Self.quoted(filename))\"".utf8))
      }
      if let contentType = part.contentType {
        body.append(Data("\r\nContent-Type: \(contentType)".utf8))
      }
      body.append(Data("\r\n\r\n".utf8))
      body.append(content)
      body.append(Data("\r\n".utf8))
    }
    body.append(delimiter)
    body.append(Data("--\r\n".utf8))
    return body
  }

  /// Whether `boundary` is 1 to 70 `bchars` not ending with a space (RFC 2046 §5.1.1).
  private static func isValidBoundary(_ boundary: String) -> Bool {
    let bytes = boundary.utf8
    guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
    return bytes.allSatisfy { byte in
      (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || " '()+_,-./:=?".utf8.contains(byte)
    }
  }

  /// Escapes `"`, CR and LF in a quoted parameter, as HTML forms do (RFC 7578 §4.2).
  private static func quoted(_ text: String) -> String {
    text.replacingOccurrences(of: "\"", with: "%22")
      .replacingOccurrences(of: "\r", with: "%0D")
      .replacingOccurrences(of: "\n", with: "%0A")
  }
}
