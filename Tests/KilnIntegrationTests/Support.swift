import Foundation

/// What the network returns in these scenarios.
struct ArticleDTO: Codable, Hashable, Sendable {
  var id: Int
  var title: String
}

/// What the app keeps.
struct Article: Codable, Hashable, Sendable {
  var id: Int
  var title: String

  init(id: Int, title: String) {
    self.id = id
    self.title = title
  }

  init(dto: ArticleDTO) {
    self.init(id: dto.id, title: dto.title)
  }
}

extension Array where Element == ArticleDTO {
  static func page(_ version: Int) -> [ArticleDTO] {
    (1...3).map { ArticleDTO(id: $0, title: "article \($0), version \(version)") }
  }
}

extension Array where Element == Article {
  static func page(_ version: Int) -> [Article] {
    [ArticleDTO].page(version).map(Article.init(dto:))
  }
}
