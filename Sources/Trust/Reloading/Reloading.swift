/// The shape every reloader of this package has — ``ReloadingTrustConfiguration`` (Trust),
/// `ReloadingClientIdentity` and `ReloadingServerIdentity` (TrustNIO): a value in force that files replace without a
/// restart, once the files pass every check.
///
/// - ``current`` is the value in force; ``generation`` counts the values taken (1: the first).
/// - ``reload()`` reads the files now; ``poll()`` reads them only when their stamps (modification time, size,
///   inode…) say they may have changed — what each tick of ``run()`` does, every ``pollInterval``.
/// - A change that cannot be used is refused: the value in force stays, ``lastRejection`` says why (nil once a
///   value is taken again), and observers are told once per refused contents.
/// - Observers (``observe(_:)``, or ``events()`` as an `AsyncSequence`) hear of each value taken and each change
///   refused, in order.
public protocol Reloading<Value, Rejection>: AnyObject, Sendable {
    /// What is in force: a configured evaluator, a client identity, a server's TLS context.
    associatedtype Value: Sendable
    /// Why files were refused.
    associatedtype Rejection: Error & Sendable & Hashable

    /// The value in force.
    var current: Value { get }
    /// The generation of the value in force: 1 for the first, one more at each value taken.
    var generation: UInt64 { get }
    /// Why the files last read were refused, while they stay as they are; nil once a value is taken.
    var lastRejection: Rejection? { get }
    /// How often ``run()`` polls.
    var pollInterval: Duration { get }

    /// Reads the files now, whatever their stamps, and takes what they hold if it differs from the value in force
    /// and passes every check.
    @discardableResult func reload() -> ReloadOutcome<Rejection>
    /// Reads the files only when their stamps say they may have changed, and takes what they hold as ``reload()``
    /// does; contents already refused are not refused again.
    @discardableResult func poll() -> ReloadOutcome<Rejection>
    /// Polls every ``pollInterval`` until the calling task is cancelled (as a swift-service-lifecycle service's
    /// `run()` would).
    func run() async

    /// Calls `observer` after each value taken and each change refused, on the thread that reloaded (keep it quick),
    /// until ``removeObserver(_:)``.
    @discardableResult func observe(_ observer: @escaping @Sendable (ReloadEvent<Value, Rejection>) -> Void) -> ReloadObservation
    /// Ends an observer's calls.
    func removeObserver(_ observation: ReloadObservation)
}

extension Reloading {
    /// Every value taken and change refused from now on, until the stream's consumer stops.
    public func events() -> AsyncStream<ReloadEvent<Value, Rejection>> {
        let (stream, continuation) = AsyncStream.makeStream(of: ReloadEvent<Value, Rejection>.self)
        let observation = observe { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.removeObserver(observation) }
        return stream
    }
}
