/// An observer's registration with a reloader (``Reloading/observe(_:)``), to end it with
/// ``Reloading/removeObserver(_:)``.
public struct ReloadObservation: Sendable, Hashable {
    /// The reloader's number for the observer.
    package let id: Int

    package init(id: Int) { self.id = id }
}
