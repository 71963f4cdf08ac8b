import Foundation
import KilnNetwork
import Testing

@Suite("HTTP bodies")
struct HTTPBodyTests {
  private func bytes(_ body: HTTPBody) throws -> (String, String?) {
    let encoded = try body.encoded()
    guard case .data(let data) = encoded.body else {
      Issue.record("expected bytes, got \(encoded.body)")
      return ("", encoded.contentType)
    }
    return (String(decoding: data, as: UTF8.self), encoded.contentType)
  }

  @Test("JSON from an Encodable value, with a JSON content type")
  func jsonEncodable() throws {
    let (text, type) = try bytes(.json(Item(id: 1, name: "milk")))
    #expect(try JSONDecoder().decode(Item.self, from: Data(text.utf8)) == Item(id: 1, name: "milk"))
    #expect(type == "application/json; charset=utf-8")
  }

  @Test("JSON from a dictionary, keys sorted")
  func jsonDictionary() throws {
    let (text, type) = try bytes(.json(["b": 2, "a": "x", "c": [true]]))
    #expect(text == #"{"a":"x","b":2,"c":[true]}"#)
    #expect(type == HTTPBody.jsonContentType)
  }

  @Test("a dictionary holding a value that is not JSON is an encoding error")
  func jsonDictionaryInvalid() {
    #expect {
      try HTTPBody.json(["date": Date()]).encoded()
    } throws: { error in
      guard case NetworkError.encodingFailed = error else { return false }
      return true
    }
  }

  @Test("a value whose encoding throws is an encoding error")
  func jsonEncodableFails() {
    struct Broken: Encodable, Sendable {
      func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "broken"))
      }
    }
    #expect {
      try HTTPBody.json(Broken()).encoded()
    } throws: { error in
      guard case NetworkError.encodingFailed(let reason) = error else { return false }
      return reason.contains("broken")
    }
  }

  @Test("a form is URL-encoded in order with a form content type")
  func form() throws {
    let (text, type) = try bytes(.form(["user": "ada lovelace", "password": "p&ss=1+2", "user": "b"]))
    #expect(text == "user=ada%20lovelace&password=p%26ss%3D1%2B2&user=b")
    #expect(type == "application/x-www-form-urlencoded; charset=utf-8")
  }

  @Test("raw data keeps its content type, or none")
  func raw() throws {
    #expect(try bytes(.data(Data("abc".utf8), contentType: "text/plain")) == ("abc", "text/plain"))
    #expect(try bytes(.data(Data("abc".utf8), contentType: nil)).1 == nil)
  }

  @Test("multipart form data has each part between boundaries")
  func multipart() throws {
    let form = MultipartFormData(
      [.field("title", "Holiday"), .data("thumb", Data("JPEG".utf8), filename: "t.jpg", contentType: "image/jpeg")],
      boundary: "XYZ"
    )
    let (text, type) = try bytes(.multipart(form))
    #expect(type == "multipart/form-data; boundary=XYZ")
    #expect(
      text == "--XYZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
        + "--XYZ\r\nContent-Disposition: form-data; name=\"thumb\"; filename=\"t.jpg\"\r\nContent-Type: image/jpeg\r\n\r\nJPEG\r\n"
        + "--XYZ--\r\n"
    )
  }

  @Test("a multipart file part is read when encoded; a missing file is an encoding error")
  func multipartFile() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-part-\(UUID().uuidString).txt")
    try Data("file contents".utf8).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    let (text, _) = try bytes(
      .multipart(MultipartFormData([.file("doc", url: url, contentType: "text/plain")], boundary: "B")))
    #expect(text.contains("filename=\"\(url.lastPathComponent)\"\r\nContent-Type: text/plain\r\n\r\nfile contents\r\n"))

    let missing = url.appendingPathExtension("missing")
    #expect {
      try HTTPBody.multipart(MultipartFormData([.file("doc", url: missing)])).encoded()
    } throws: { error in
      guard case NetworkError.encodingFailed = error else { return false }
      return true
    }
  }

  @Test("a part containing the boundary is an encoding error")
  func multipartBoundaryInPart() {
    #expect {
      try MultipartFormData([.field("a", "x--B y")], boundary: "B").encoded()
    } throws: { error in
      guard case NetworkError.encodingFailed = error else { return false }
      return true
    }
  }

  // Found by Fuzz/Multipart: a line break in a content type wrote header fields (or the
  // part's contents) of its own.
  @Test("a content type with a line break is an encoding error")
  func multipartContentTypeLineBreak() {
    for contentType in ["text/plain\r\nX-Injected: 1", "text/plain\nx", "text/plain\r"] {
      #expect {
        try MultipartFormData([.data("a", Data("x".utf8), contentType: contentType)], boundary: "B").encoded()
      } throws: { error in
        guard case NetworkError.encodingFailed = error else { return false }
        return true
      }
    }
  }

  // Found by Fuzz/Multipart: a boundary with a line break, or an empty one, made a body
  // that no reader splits back into the parts.
  @Test("a boundary RFC 2046 does not allow is an encoding error; every allowed one encodes")
  func multipartBoundary() throws {
    let tooLong = String(repeating: "b", count: 71)
    for boundary in ["", "a\r\nb", "ends with space ", "é", "semi;colon", tooLong] {
      #expect {
        try MultipartFormData([.field("a", "x")], boundary: boundary).encoded()
      } throws: { error in
        guard case NetworkError.encodingFailed = error else { return false }
        return true
      }
    }
    for boundary in ["B", "a'()+_,-./:=? b", String(repeating: "b", count: 70)] {
      let body = try MultipartFormData([.field("a", "x")], boundary: boundary).encoded()
      #expect(body.starts(with: Data("--\(boundary)\r\n".utf8)))
    }
  }

  @Test("a file body is streamed from its URL; a URL that is not a file is an encoding error")
  func file() throws {
    let url = URL(fileURLWithPath: "/tmp/upload.bin")
    let encoded = try HTTPBody.file(url).encoded()
    #expect(encoded.body == .file(url))
    #expect(encoded.contentType == "application/octet-stream")
    #expect(throws: NetworkError.self) { try HTTPBody.file(URL(string: "https://example.com/x")!).encoded() }
  }

  @Test("a target's request carries the body and its content type; a Content-Type header wins")
  func requestBody() throws {
    let request = try TestAPI.create(body: .json(["a": 1])).makeRequest()
    #expect(request.method == .post)
    #expect(request.body == .data(Data(#"{"a":1}"#.utf8)))
    #expect(request.headers["Content-Type"] == HTTPBody.jsonContentType)

    struct Override: TargetGroup {
      var baseURL: URL { URL(string: "https://example.com")! }
      var path: String { "x" }
      var method: HTTPMethod { .put }
      var task: NetworkTask { .parametersAndBody(["v": 2], .json(["a": 1])) }
      var headers: [String: String]? { ["content-type": "application/vnd.kiln+json", "X-Trace": "1"] }
    }
    let overridden = try Override().makeRequest()
    #expect(overridden.url.absoluteString == "https://example.com/x?v=2")
    #expect(overridden.headers.values(for: "Content-Type") == ["application/vnd.kiln+json"])
    #expect(overridden.headers["X-Trace"] == "1")
  }
}
