/// The observers of something that reloads itself — a trust configuration (``ReloadingTrustConfiguration``) or a
/// client or server identity (`ReloadingClientIdentity`, `ReloadingServerIdentity` in TrustNIO).
///
/// Observers are told each event in the order they were added, on the thread that reported it, with no lock held —
/// neither this list's nor its owner's (the owner reports after releasing its own) — so an observer may reload, poll
/// or stop observing from inside its call without a deadlock.
package final class ObserverList<Event>: Sendable {
    private let state = LockedState<(next: Int, observers: [(id: Int, call: @Sendable (Event) -> Void)])>((0, []))

    /// An empty list.
    package init() {}

    /// Adds `observer`; the identifier returned removes it.
    package func add(_ observer: @escaping @Sendable (Event) -> Void) -> Int {
        state.withLock { state in
            state.next += 1
            state.observers.append((state.next, observer))
            return state.next
        }
    }

    /// Removes the observer `add` returned `id` for; nothing if it is gone already.
    package func remove(_ id: Int) {
        state.withLock { $0.observers.removeAll { $0.id == id } }
    }

    /// Tells every observer `event`, in the order they were added.
    package func notify(_ event: Event) {
        for observer in state.withLock({ $0.observers }) { observer.call(event) }
    }
}
