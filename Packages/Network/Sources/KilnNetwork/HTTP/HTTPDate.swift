public import Foundation

/// Parsing and formatting of HTTP dates (RFC 9110 §5.6.7), without `DateFormatter`.
///
/// Parses all three forms a recipient must accept — the preferred IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and ANSI C's `asctime()` form
/// (`Sun Nov  6 08:49:37 1994`) — and formats IMF-fixdate. Dates are whole seconds in UTC.
///
/// ```swift
/// let date = HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")   // 784111777
/// HTTPDate.format(date!)                                       // "Sun, 06 Nov 1994 08:49:37 GMT"
/// ```
public enum HTTPDate {
  private static let monthNames: [String] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]
  private static let dayNames: [String] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]

  /// Parses an HTTP date in any of its three forms.
  ///
  /// Names are read in any letter case (`nov`, `gmt`): the forms are case-sensitive, but RFC
  /// 9111 §4.2 asks a cache to match them case-insensitively. The day name is not checked
  /// against the date (recipients ignore it in practice); a two-digit RFC 850 year is read as the year in the past 50 years that ends in those digits
  /// (RFC 9110 §5.6.7). Leading and trailing whitespace is ignored.
  ///
  /// - Parameter text: The field value.
  /// - Returns: The date, or `nil` when `text` is not a valid HTTP date.
  public static func parse(_ text: String) -> Date? {
    var scanner = Scanner(Array(text.utf8))
    scanner.skipSpaces()
    guard let dayName = scanner.letters(), dayName.count >= 3 else { return nil }
    let parsed: Components?
    if scanner.peek() == UInt8(ascii: ",") {
      scanner.advance()
      scanner.skipSpaces()
      parsed = dayName.count == 3 ? parseIMFFixdate(&scanner) : parseRFC850(&scanner)
    } else {
      parsed = dayName.count == 3 ? parseAsctime(&scanner) : nil
    }
    guard let components = parsed else { return nil }
    scanner.skipSpaces()
    guard scanner.isAtEnd else { return nil }
    return components.date
  }

  /// Formats a date as an IMF-fixdate, such as `Sun, 06 Nov 1994 08:49:37 GMT`.
  ///
  /// The form has a four-digit year, so a date before year 0 or after year 9999 is clamped
  /// to the first or last second the form can write, and a date whose time interval is not
  /// a number formats as the epoch (1 January 1970) instead of trapping.
  ///
  /// - Parameter date: The date; fractions of a second are dropped.
  /// - Returns: The formatted date.
  public static func format(_ date: Date) -> String {
    let interval = date.timeIntervalSince1970
    let seconds: Int64 =
      interval.isNaN ? 0 : Int64(min(max(interval, firstWritableSecond), lastWritableSecond).rounded(.down))
    let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let secondOfDay = Int(seconds - days * 86_400)
    let (year, month, day) = civilFromDays(days)
    let weekday = Int(((days % 7) + 11) % 7)  // 1970-01-01 was a Thursday (4)
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    var yearText = String(year)
    while yearText.count < 4 { yearText = "0" + yearText }
    return "\(dayNames[weekday]), \(two(day)) \(monthNames[month - 1]) \(yearText) "
      + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
  }

  /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z (proleptic Gregorian), the range of a
  /// four-digit year, which ``parse(_:)`` reads back.
  private static let firstWritableSecond: TimeInterval = -62_167_219_200
  private static let lastWritableSecond: TimeInterval = 253_402_300_799

  // MARK: - The three forms

  private struct Components {
    var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int

    var date: Date? {
      guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
        (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
      else { return nil }
      let days = daysFromCivil(year: year, month: month, day: day)
      // A leap second (60) is read as the first second of the next minute.
      let total = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
      return Date(timeIntervalSince1970: TimeInterval(total))
    }
  }

  /// `06 Nov 1994 08:49:37 GMT` (after `Sun, `).
  private static func parseIMFFixdate(_ scanner: inout Scanner) -> Components? {
    guard let day = scanner.digits(exactly: 2), scanner.take(UInt8(ascii: " ")),
      let month = scanner.month(), scanner.take(UInt8(ascii: " ")),
      let year = scanner.digits(exactly: 4), scanner.take(UInt8(ascii: " ")),
      let (hour, minute, second) = scanner.time(), scanner.take(UInt8(ascii: " ")), scanner.gmt()
    else { return nil }
    return Components(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
  }

  /// `06-Nov-94 08:49:37 GMT` (after `Sunday, `).
  private static func parseRFC850(_ scanner: inout Scanner) -> Components? {
    guard let day = scanner.digits(exactly: 2), scanner.take(UInt8(ascii: "-")),
      let month = scanner.month(), scanner.take(UInt8(ascii: "-")),
      let shortYear = scanner.digits(exactly: 2), scanner.take(UInt8(ascii: " ")),
      let (hour, minute, second) = scanner.time(), scanner.take(UInt8(ascii: " ")), scanner.gmt()
    else { return nil }
    return Components(
      year: expandTwoDigitYear(shortYear), month: month, day: day, hour: hour, minute: minute, second: second)
  }

  /// `Nov  6 08:49:37 1994` (after `Sun `).
  private static func parseAsctime(_ scanner: inout Scanner) -> Components? {
    guard scanner.take(UInt8(ascii: " ")), let month = scanner.month(), scanner.take(UInt8(ascii: " ")) else {
      return nil
    }
    let day: Int
    if scanner.peek() == UInt8(ascii: " ") {
      scanner.advance()
      guard let digit = scanner.digits(exactly: 1) else { return nil }
      day = digit
    } else {
      guard let digits = scanner.digits(exactly: 2) else { return nil }
      day = digits
    }
    guard scanner.take(UInt8(ascii: " ")), let (hour, minute, second) = scanner.time(),
      scanner.take(UInt8(ascii: " ")), let year = scanner.digits(exactly: 4)
    else { return nil }
    return Components(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
  }

  /// RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is in the past century.
  private static func expandTwoDigitYear(_ year: Int) -> Int {
    let now = Date().timeIntervalSince1970
    let currentYear = civilFromDays(Int64(now / 86_400)).year
    var full = currentYear - currentYear % 100 + year
    if full > currentYear + 50 { full -= 100 }
    return full
  }

  // MARK: - Calendar arithmetic (proleptic Gregorian, after Howard Hinnant's algorithms)

  private static func isLeapYear(_ year: Int) -> Bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
  }

  private static func daysInMonth(year: Int, month: Int) -> Int {
    switch month {
    case 2: isLeapYear(year) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let m = Int64(month)
    let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  private static func civilFromDays(_ days: Int64) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return (Int(year), Int(month), Int(day))
  }

  // MARK: - Scanner

  private struct Scanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func advance() { position += 1 }

    mutating func take(_ byte: UInt8) -> Bool {
      guard peek() == byte else { return false }
      position += 1
      return true
    }

    mutating func skipSpaces() {
      while let byte = peek(), byte == 0x20 || byte == 0x09 { position += 1 }
    }

    mutating func letters() -> [UInt8]? {
      let start = position
      while let byte = peek(), (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A { position += 1 }
      return position > start ? Array(bytes[start..<position]) : nil
    }

    mutating func digits(exactly count: Int) -> Int? {
      guard position + count <= bytes.count else { return nil }
      var value = 0
      for offset in 0..<count {
        let byte = bytes[position + offset]
        guard byte >= 0x30 && byte <= 0x39 else { return nil }
        value = value * 10 + Int(byte - 0x30)
      }
      position += count
      return value
    }

    /// A three-letter month name, case-sensitive as the grammar requires.
    mutating func month() -> Int? {
      guard position + 3 <= bytes.count else { return nil }
      // ASCII letters in any case (RFC 9111 §4.2): `nov` and `NOV` are November.
      let name = String(decoding: bytes[position..<position + 3].map { $0 | 0x20 }, as: UTF8.self)
      guard let index = HTTPDate.monthNames.firstIndex(where: { $0.lowercased() == name }) else { return nil }
      position += 3
      return index + 1
    }

    mutating func time() -> (Int, Int, Int)? {
      guard let hour = digits(exactly: 2), take(UInt8(ascii: ":")), let minute = digits(exactly: 2),
        take(UInt8(ascii: ":")), let second = digits(exactly: 2)
      else { return nil }
      return (hour, minute, second)
    }

    mutating func gmt() -> Bool {
      guard position + 3 <= bytes.count,
        bytes[position..<position + 3].map({ $0 | 0x20 }).elementsEqual("gmt".utf8)
      else { return false }
      position += 3
      return true
    }
  }
}
