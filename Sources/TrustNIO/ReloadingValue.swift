import NIOConcurrencyHelpers
import Trust

/// A value made from files that follows them: what ``ReloadingClientIdentity`` and ``ReloadingServerIdentity`` share.
/// It keeps the value in force, its generation, the SHA-256 of the bytes it was made from (`FileFingerprint`), the
/// files' `stat(2)` stamps and the last rejection; the owner gives the paths to stamp, how to read the files and how
/// to make a value of their bytes.
///
/// - ``poll()`` takes the stamps and reads the files only when they may have changed (or when the last rejection
///   may pass later without a change, a certificate not yet valid); ``reload()`` reads them whatever their stamps.
/// - Bytes identical to those in force are no change: nothing is made, the rejection is cleared.
/// - Bytes identical to those last rejected are not made into a value again at a poll (a PKCS#12 key derivation is
///   not rerun at every tick), only at a ``reload()`` or when the rejection depends on time.
/// - A value made is taken under the next generation; a failure keeps the value in force, and observers are told of
///   it once for the same bytes and the same failure.
/// - One load at a time (`loading`); observers are called once it is released, with no lock held, so that an
///   observer may poll or reload.
package final class ReloadingValue<Value: Sendable, Failure: Error & Sendable & Hashable>: Sendable {
    /// What a reload did: the reloaders' public outcome.
    package typealias Outcome = ReloadOutcome<Failure>
    /// What observers are told: the reloaders' public event.
    package typealias Event = ReloadEvent<Value, Failure>

    private struct State {
        var value: Value
        var generation: UInt64
        var digest: [UInt8]
        var fingerprint: FileFingerprint
        /// The digest of the bytes last rejected (empty when they could not be read), and why.
        var rejected: (digest: [UInt8], error: Failure)?
        var poller: Task<Void, Never>?
    }

    /// The files stamped at each poll.
    package let paths: [String]
    /// How often ``run()`` and ``startPolling()`` look at the files.
    package let pollInterval: Duration
    private let dependsOnTime: @Sendable (Failure) -> Bool
    private let read: @Sendable () throws(Failure) -> [[UInt8]]
    private let make: @Sendable ([[UInt8]], UInt64) throws(Failure) -> Value
    private let state: NIOLockedValueBox<State>
    private let observers = ObserverList<Event>()
    /// Held through a whole load: one at a time (the state's lock is never held while reading or making).
    private let loading = NIOLock()

    /// Reads the files and makes the first value (generation 1) now.
    /// - Parameters:
    ///   - paths: the files whose stamps say whether they may have changed.
    ///   - pollInterval: how often ``run()`` and ``startPolling()`` poll.
    ///   - dependsOnTime: whether a failure may pass later with the same bytes: then each poll tries them again.
    ///   - read: the files' bytes, one part per file (the digest compared is of these parts).
    ///   - make: the value of the parts `read` returned, under the generation given.
    /// - Throws: why the files cannot be used (there is no value to keep).
    package init(
        paths: [String], pollInterval: Duration, dependsOnTime: @escaping @Sendable (Failure) -> Bool,
        read: @escaping @Sendable () throws(Failure) -> [[UInt8]], make: @escaping @Sendable ([[UInt8]], UInt64) throws(Failure) -> Value
    ) throws(Failure) {
        self.paths = paths
        self.pollInterval = pollInterval
        self.dependsOnTime = dependsOnTime
        self.read = read
        self.make = make
        let fingerprint = FileFingerprint(paths: paths)
        let contents = try read()
        let value = try make(contents, 1)
        state = NIOLockedValueBox(State(value: value, generation: 1, digest: FileFingerprint.digest(contents), fingerprint: fingerprint))
    }

    /// The value in force.
    package var value: Value { state.withLockedValue { $0.value } }

    /// The value in force's generation: 1 for the first, one more at each value taken.
    package var generation: UInt64 { state.withLockedValue { $0.generation } }

    /// Why the files last read were not taken, while they stay as they are; nil once a value is taken or the files
    /// hold the value in force again.
    package var lastRejection: Failure? { state.withLockedValue { $0.rejected?.error } }

    /// Calls `observer` after each value taken and each change rejected; the identifier returned removes it.
    package func observe(_ observer: @escaping @Sendable (Event) -> Void) -> Int {
        observers.add(observer)
    }

    /// Ends the calls of the observer `observe(_:)` returned `id` for.
    package func removeObserver(_ id: Int) {
        observers.remove(id)
    }

    /// Reads the files now, whatever their stamps, and takes the value they make if their bytes differ from those
    /// in force (bytes rejected before are tried again).
    @discardableResult
    package func reload() -> Outcome {
        tellObservers(loading.withLock { load(FileFingerprint(paths: paths), retryingRejected: true) })
    }

    /// Looks at the files' stamps and reloads only when they may have changed, or when the last rejection may
    /// pass later: what each tick of ``run()`` does.
    @discardableResult
    package func poll() -> Outcome {
        let loaded = loading.withLock { () -> (Outcome, Event?) in
            let now = FileFingerprint(paths: paths)
            let (before, rejected) = state.withLockedValue { ($0.fingerprint, $0.rejected?.error) }
            let retry = rejected.map(dependsOnTime) ?? false
            guard retry || before.mayDiffer(from: now) else { return (.unchanged, nil) }
            return load(now, retryingRejected: retry)
        }
        return tellObservers(loaded)
    }

    /// Polls every ``pollInterval`` until the calling task is cancelled (as a `swift-service-lifecycle` service's
    /// `run()` would).
    package func run() async {
        await pollInterval.repeatUntilCancelled { poll() }
    }

    /// Polls every ``pollInterval`` in a task of its own, until ``stopPolling()``; does nothing if it already polls.
    /// The task holds this value weakly: one no longer used stops.
    package func startPolling() {
        state.withLockedValue { state in
            guard state.poller == nil else { return }
            let interval = pollInterval
            state.poller = Task { [weak self] in
                while !Task.isCancelled {
                    do {
                        try await Task.sleep(for: interval)
                    } catch {
                        return
                    }
                    guard let self else { return }
                    self.poll()
                }
            }
        }
    }

    /// Stops the polling ``startPolling()`` started.
    package func stopPolling() {
        let poller = state.withLockedValue { state in
            defer { state.poller = nil }
            return state.poller
        }
        poller?.cancel()
    }

    deinit {
        state.withLockedValue { $0.poller?.cancel() }
    }

    /// Calls the observers with `loaded`'s event, once `loading` is released (an observer may reload or poll), and
    /// returns its outcome.
    private func tellObservers(_ loaded: (outcome: Outcome, event: Event?)) -> Outcome {
        if let event = loaded.event {
            observers.notify(event)
        }
        return loaded.outcome
    }

    /// Loads the files as they are (`fingerprint` taken before they were read), under `loading`; the event is for
    /// the observers, called once `loading` is released.
    private func load(_ fingerprint: FileFingerprint, retryingRejected: Bool) -> (Outcome, Event?) {
        let contents: [[UInt8]]
        do throws(Failure) {
            contents = try read()
        } catch {
            // Unreadable: nothing to compare; the next poll tries again once a stamp moves.
            return (.rejected(error), reject(error, digest: [], fingerprint: fingerprint))
        }
        let digest = FileFingerprint.digest(contents)
        let (known, rejected, generation) = state.withLockedValue { ($0.digest, $0.rejected, $0.generation) }
        if digest == known {
            state.withLockedValue { (state) -> Void in (state.fingerprint, state.rejected) = (fingerprint, nil) }
            return (.unchanged, nil)
        }
        if !retryingRejected, let rejected, rejected.digest == digest {
            state.withLockedValue { $0.fingerprint = fingerprint }
            return (.unchanged, nil)
        }
        let next = generation + 1
        do throws(Failure) {
            let value = try make(contents, next)
            state.withLockedValue { state in
                (state.value, state.generation, state.digest, state.fingerprint, state.rejected) = (value, next, digest, fingerprint, nil)
            }
            return (.reloaded(generation: next), .reloaded(generation: next, value: value))
        } catch {
            return (.rejected(error), reject(error, digest: digest, fingerprint: fingerprint))
        }
    }

    /// Keeps the rejection; the event for observers, unless they were told the same of the same bytes (a
    /// certificate not yet valid, tried at each poll).
    private func reject(_ error: Failure, digest: [UInt8], fingerprint: FileFingerprint) -> Event? {
        state.withLockedValue { state in
            let told = state.rejected.map { $0.digest == digest && $0.error == error } ?? false
            (state.fingerprint, state.rejected) = (fingerprint, (digest, error))
            return told ? nil : .rejected(error)
        }
    }
}
