// KilnSwiftUI — SwiftUI views over KilnRepository's loaders. Compiled only where SwiftUI
// exists (Apple platforms); on Linux the module is empty.

#if canImport(SwiftUI)
  public import KilnRepository
  public import SwiftUI

  /// A view that loads an object with a ``KilnRepository/Loader`` when it appears, shows a
  /// placeholder while loading, the content once loaded, and cancels when it disappears.
  ///
  /// ```swift
  /// Load(loader: loader, key: id) { user in UserView(user) } placeholder: { ProgressView() }
  /// ```
  @MainActor
  public struct Load<Key: Hashable & Sendable, Object: Sendable, Content: View, Placeholder: View>: View {
    private let loader: Loader<Key, Object>
    private let key: Key
    private let showsErrors: Bool
    private let content: (Object) -> Content
    private let placeholder: () -> Placeholder

    /// Creates the view.
    ///
    /// - Parameters:
    ///   - loader: The loader (keep it in `@State`).
    ///   - key: What to load.
    ///   - showsErrors: Show the loader's error in place of the placeholder.
    ///   - content: The view of a loaded object.
    ///   - placeholder: The view while nothing is loaded.
    public init(
      loader: Loader<Key, Object>, key: Key, showsErrors: Bool = false,
      @ViewBuilder content: @escaping (Object) -> Content,
      @ViewBuilder placeholder: @escaping () -> Placeholder
    ) {
      self.loader = loader
      self.key = key
      self.showsErrors = showsErrors
      self.content = content
      self.placeholder = placeholder
    }

    public var body: some View {
      Group {
        if let object = loader.object {
          content(object)
        } else if showsErrors, let error = loader.error {
          Text(String(describing: error))
        } else {
          placeholder()
        }
      }
      .task(id: key) { await loader.load(key: key) }
      .onDisappear { loader.cancel() }
    }
  }

  /// A view that loads its data: give it a loader and a key, a placeholder and a body for
  /// the loaded object, and use ``loaderView`` as its `body`.
  ///
  /// ```swift
  /// struct UserScreen: View, LoadableView {
  ///   @State var loader = Loader<UserID, User> { try await api.user($0) }
  ///   let key: UserID
  ///   var body: some View { loaderView }
  ///   func body(with user: User) -> some View { Text(user.name) }
  ///   func placeholder() -> some View { ProgressView() }
  /// }
  /// ```
  @MainActor
  public protocol LoadableView: View {
    /// The key type.
    associatedtype Key: Hashable & Sendable
    /// The loaded object.
    associatedtype Object: Sendable
    /// The view of the loaded object.
    associatedtype LoadedBody: View
    /// The view while loading.
    associatedtype PlaceholderBody: View

    /// The loader.
    var loader: Loader<Key, Object> { get }
    /// What to load.
    var key: Key { get }
    /// The view of the loaded object.
    func body(with object: Object) -> LoadedBody
    /// The view while loading.
    func placeholder() -> PlaceholderBody
  }

  extension LoadableView {
    /// The ``Load`` view built from this view's loader, key, body and placeholder.
    public var loaderView: Load<Key, Object, LoadedBody, PlaceholderBody> {
      Load(loader: loader, key: key, content: { body(with: $0) }, placeholder: { placeholder() })
    }
  }
#endif
