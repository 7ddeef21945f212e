import Dispatch
import HTTPTypes
import NIOConcurrencyHelpers
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `trust get` says on stderr: errors unless `-s` (and `-S` brings them back, as curl's),
/// verbose lines with `-v`; every line scrubbed of the command line's secrets.
struct Diagnostics: Sendable {
    /// Whether error messages and warnings are printed (`-s` without `-S` hides them).
    var showsErrors = true
    /// The secrets never to print.
    var secrets = Secrets()

    /// `trust: message`, unless silenced.
    func error(_ message: String) {
        if showsErrors { StandardError.line(secrets.scrub("trust: " + message)) }
    }

    /// `trust: warning: message`, unless silenced.
    func warning(_ message: String) {
        error("warning: " + message)
    }

    /// curl's own warning, `Warning: message`, as curl 7.88 prints it (scripts match it): wrapped as its
    /// `warnf` does (src/tool_msgs.c), at 79 columns with the prefix on every line.
    func curlWarning(_ message: String) {
        for line in Self.curlWrapped(secrets.scrub(message), prefix: "Warning: ") { StandardError.line(line) }
    }

    /// curl 7.88's `voutf`: the message with its line feed (7.88's formats end in one, and it counts) is cut
    /// into lines of at most 79 − prefix characters, each after the last white space that fits (kept at the
    /// end of its line), or at the width when there is none. So a 70-character warning takes two lines.
    static func curlWrapped(_ message: String, prefix: String) -> [String] {
        let width = 79 - prefix.utf8.count
        let blanks: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D]  // C's isspace
        var rest = (Array(message.utf8) + [0x0A])[...]
        var lines: [String] = []
        while !rest.isEmpty {
            guard rest.count > width else {
                lines.append(prefix + String(decoding: rest.dropLast(), as: UTF8.self))
                break
            }
            var cut = width - 1
            while cut > 0, !blanks.contains(rest[rest.startIndex + cut]) { cut -= 1 }
            if cut == 0 { cut = width - 1 }
            lines.append(prefix + String(decoding: rest.prefix(cut + 1), as: UTF8.self))
            rest = rest.dropFirst(cut + 1)
        }
        return lines
    }

    /// A `-v` line (`* …`, `> …`, `< …`).
    func verbose(_ line: String) {
        StandardError.line(secrets.scrub("trust: " + line))
    }
}

/// What is known about the transfer so far, for `-w` and for messages.
struct TransferFacts: Sendable {
    /// The URL requested last (after redirects), user-info replaced.
    var effectiveURL: String
    var method: String
    var statusCode: Int?
    var redirects = 0
    /// `HTTP/1.1` or `HTTP/2`.
    var httpVersion: String?
    var headers: HTTPFields = [:]
    /// Body bytes received.
    var bytes: Int64 = 0
    /// Bytes moved both ways (body received and request body sent): what curl's current speed and
    /// `--speed-limit` count.
    var transferred: Int64 { ProgressMeter.adding(bytes, uploaded) }
    /// Request body bytes sent (the last time the request was sent).
    var uploaded: Int64 = 0
    /// The request body's length, when known before it is sent (not for a body read from standard input).
    var expectedUpload: Int64?
    /// The response head's size as HTTP/1.1 text (status line, fields, blank line).
    var headerSize = 0
    /// `Content-Length`, when the server announced one.
    var expectedBytes: Int64?
    /// OpenSSL's verify result for the server's chain (0 when trusted; see ``TrustVerdictCode``).
    var verifyResult = 0
    /// When the server's certificate arrived (its trust challenge was raised), since the start.
    var trustChallengeAt: Duration?
    /// When the trust challenge was answered (the handshake then completes), since the start.
    var trustAnsweredAt: Duration?
    /// When the response head arrived, since the start.
    var headAt: Duration?
    /// When the transfer ended, since the start.
    var endedAt: Duration?
}

/// Watches one `trust get` transfer: counts bytes, enforces `-m` and `--speed-time`/`--speed-limit`,
/// handles Ctrl-C, draws the progress meter, and ends the process — once — with curl's exit code,
/// leaving no partial `-o` file behind.
///
/// Ending does not wait for the session to shut down or the event loops to wind down: the error is
/// printed, output flushed and the process exits (curl's `-m` is a deadline, not a request).
final class TransferMonitor: Sendable {
    struct State {
        var facts: TransferFacts
        /// The `-o` temporary file to remove if the transfer does not complete.
        var temporaryPath: String?
        /// Set by whoever ends the process first.
        var ending = false
        /// The exit code of the ending under way (set with ``ending``, for a transfer that failed).
        var endingCode: Int32?
        /// The ending has told everything and waits for last work (pin-failure reports): a signal or the `-m`
        /// deadline now exits at once.
        var finishing = false
        /// The exit code a signal or the deadline asked for while the ending was still telling (not yet
        /// ``finishing``): the ending exits with it once told.
        var exitWhenTold: Int32?
        /// (time, bytes both ways) once a second, the last six: curl's current speed is over about five seconds.
        var samples: [(ContinuousClock.Instant, Int64)] = []
        /// Since when the transfer has been slower than the speed limit.
        var slowSince: ContinuousClock.Instant?
        var meterShown = false
        /// Between the attempts of `--retry`: the last attempt's meter line has ended, the next has not begun.
        var betweenAttempts = false
        /// The body is complete (and any -o file in place): deadlines no longer apply.
        var done = false
    }

    let diagnostics: Diagnostics
    let writeOut: WriteOut?
    let meter: ProgressMeter?
    /// `--speed-limit` bytes per second over `--speed-time` seconds.
    let speedLimit: (bytes: Int, seconds: Int)?
    /// `-m`.
    let maximumTime: Duration?
    /// Where `%{remote_ip}` comes from (looked up only when asked for).
    let remote: @Sendable () -> (address: String, port: Int)?
    /// When the transfer started (``start()``), for `-w` times and messages.
    private let startedAt = NIOLockedValueBox(ContinuousClock.now)
    private var started: ContinuousClock.Instant { startedAt.withLockedValue { $0 } }
    private let state: NIOLockedValueBox<State>
    private let sources = DispatchSources()

    init(
        facts: TransferFacts, diagnostics: Diagnostics, writeOut: WriteOut?, meter: ProgressMeter?, speedLimit: (bytes: Int, seconds: Int)?,
        maximumTime: Duration?, remote: @escaping @Sendable () -> (address: String, port: Int)?
    ) {
        self.diagnostics = diagnostics
        self.writeOut = writeOut
        self.meter = meter
        self.speedLimit = speedLimit
        self.maximumTime = maximumTime
        self.remote = remote
        self.state = NIOLockedValueBox(State(facts: facts))
    }

    /// Time since the start.
    var elapsed: Duration { started.duration(to: .now) }

    /// curl's line for a timeout (exit 28), whichever deadline fired: -m here, or the session's.
    func timeoutLine(bytes: Int64? = nil) -> String {
        let received = bytes ?? state.withLockedValue { $0.facts.bytes }
        return "(28) Operation timed out after \(Self.milliseconds(elapsed)) milliseconds with \(received) bytes received"
    }

    /// Starts the watch: SIGINT/SIGTERM, the `-m` deadline, the once-a-second tick.
    func start() {
        startedAt.withLockedValue { $0 = .now }
        let queue = DispatchQueue(label: "trust.get.monitor")
        // A closed pipe must be an error from write(2) (EPIPE → exit 23), not a silent death.
        signal(SIGPIPE, SIG_IGN)
        for (number, code) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            // The signal is ignored so that only the dispatch source sees it (no default termination).
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            // A shell reports a process ended by signal N as 128+N; curl leaves no message either.
            source.setEventHandler { [self] in interrupted(code) }
            source.resume()
            sources.keep(source)
        }
        if let maximumTime {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .nanoseconds(Int(Self.nanoseconds(maximumTime))))
            timer.setEventHandler { [self] in
                let (facts, done) = state.withLockedValue { ($0.facts, $0.done) }
                // curl's -m bounds the transfer; winding the session down after it is not part of it.
                guard !done else { return }
                // While an error already told waits for its reports, -m still ends the process (with that error's code).
                if cutsFinishing(exitCode: nil) { return }
                end(28, message: timeoutLine(bytes: facts.bytes))
            }
            timer.resume()
            sources.keep(timer)
        }
        // curl draws the meter's first line as the transfer starts, then once a second, then the last line.
        if meter != nil { drawMeter(final: false) }
        if speedLimit != nil || meter != nil {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
            timer.setEventHandler { [self] in tick() }
            timer.resume()
            sources.keep(timer)
        }
    }

    /// Updates what is known.
    func update(_ change: (inout TransferFacts) -> Void) {
        state.withLockedValue { change(&$0.facts) }
    }

    /// The facts so far.
    var facts: TransferFacts { state.withLockedValue { $0.facts } }

    /// Counts received body bytes.
    func received(_ count: Int) {
        state.withLockedValue { $0.facts.bytes += Int64(count) }
    }

    /// The temporary file to remove if the process ends before the transfer completes.
    func setTemporaryPath(_ path: String?) {
        state.withLockedValue { $0.temporaryPath = path }
    }

    /// Runs `commit` (the rename of a completed `-o` file) unless the process is already ending —
    /// never both: an interrupt either comes first (nothing is renamed) or finds the file complete.
    func commit(_ commit: () throws(OutputWriteError) -> Void) throws(OutputWriteError) {
        let result: Result<Void, OutputWriteError>? = state.withLockedValue { state in
            guard !state.ending else { return nil }
            do throws(OutputWriteError) {
                try commit()
                state.temporaryPath = nil
                state.done = true
                return .success(())
            } catch {
                state.temporaryPath = nil
                return .failure(error)
            }
        }
        guard let result else { Self.parkForever() }
        try result.get()
    }

    /// Ends the process with `code` — only the first caller does; any other waits for the exit.
    /// Removes the `-o` temporary file, finishes the meter, prints `message` and the `-w` output.
    func end(_ code: Int32, message: String?) -> Never {
        end(code, messages: message.map { [$0] } ?? [])
    }

    /// Ends the process with `code` as ``end(_:message:)`` does, printing `messages` (the last one is
    /// `%{errormsg}`) after the meter's last line, so that none runs on from it.
    func end(_ code: Int32, messages: [String]) -> Never {
        conclude(code, messages: messages)
        exit(code)
    }

    /// As ``end(_:messages:)``, but `finally` runs once the messages are out and before the process exits: work
    /// that must not delay what the user is told (pin-failure reports, bounded by their own limits). It is cut short
    /// by SIGINT or SIGTERM (exit 130 or 143) and by the `-m` deadline (exit `code`: the error is told already).
    func end(_ code: Int32, messages: [String], finally: () async -> Void) async -> Never {
        conclude(code, messages: messages)
        let asked: Int32? = state.withLockedValue { state in
            state.finishing = true
            return state.exitWhenTold
        }
        if let asked { exit(asked) }
        await finally()
        exit(code)
    }

    /// SIGINT or SIGTERM (`code` 130 or 143): ends the process — at once when an ending that has told its error is
    /// waiting for last work (Ctrl-C is not made to wait for pin-failure reports).
    private func interrupted(_ code: Int32) {
        if cutsFinishing(exitCode: code) { return }
        end(code, message: nil)
    }

    /// When an ending is under way, makes it exit with `exitCode` (nil: the ending's own code) — now if it is
    /// ``State/finishing``, else as soon as it has told its error — and is true; false when nothing is ending.
    private func cutsFinishing(exitCode: Int32?) -> Bool {
        let (ending, now): (Bool, Int32?) = state.withLockedValue { state in
            guard state.ending else { return (false, nil) }
            guard let code = exitCode ?? state.endingCode else { return (true, nil) }
            if state.finishing { return (true, code) }
            state.exitWhenTold = state.exitWhenTold ?? code
            return (true, nil)
        }
        if let now { exit(now) }
        return ending
    }

    /// Everything ``end(_:messages:)`` does but exiting; parks a second caller forever.
    private func conclude(_ code: Int32, messages: [String]) {
        let message = messages.last
        let claimed: (Bool, String?, Bool) = state.withLockedValue { state in
            guard !state.ending else { return (false, nil, false) }
            state.ending = true
            state.endingCode = code
            state.facts.endedAt = started.duration(to: .now)
            defer { state.temporaryPath = nil }
            return (true, state.temporaryPath, state.meterShown && !state.betweenAttempts)
        }
        guard claimed.0 else { Self.parkForever() }
        if let temporaryPath = claimed.1 { unlink(temporaryPath) }
        if claimed.2, code != 130, code != 143 { drawMeter(final: true) } else if claimed.2 { StandardError.write("\n") }
        for message in messages { diagnostics.error(message) }
        if let writeOut {
            let facts = state.withLockedValue { $0.facts }
            writeOut.emit(facts: facts, exitCode: code, errorMessage: message ?? "", remote: remote, diagnostics: diagnostics)
        }
    }

    /// Once a second: the current speed against `--speed-limit`, and the meter.
    private func tick() {
        let now = ContinuousClock.now
        let tooSlow: (Int64, Int)? = state.withLockedValue { state in
            // No speed check while --retry waits: curl's applies to a transfer, not to the pause between two.
            guard !state.ending, !state.done, !state.betweenAttempts else { return nil }
            state.samples.append((now, state.facts.transferred))
            if state.samples.count > 6 { state.samples.removeFirst() }
            guard let speedLimit, let first = state.samples.first else { return nil }
            // curl's rule (lib/speedcheck.c): the current speed, uploads counted, below the limit for speed-time
            // seconds in a row.
            let span = max(Self.seconds(first.0.duration(to: now)), 1)
            let speed = Double(max(0, state.facts.transferred - first.1)) / span
            let startedSeconds = Self.seconds(started.duration(to: now))
            let current = state.samples.count > 1 ? speed : Double(state.facts.transferred) / max(startedSeconds, 1)
            guard current < Double(speedLimit.bytes) else {
                state.slowSince = nil
                return nil
            }
            let since = state.slowSince ?? now
            state.slowSince = since
            // The ticks are anchored to a schedule: one that fired a few milliseconds late is followed by
            // one a little under a second later, which must still count as a whole second (else the
            // abort slips by a tick).
            let slow = Self.seconds(since.duration(to: now)) + 0.1
            return slow >= Double(speedLimit.seconds) ? (Int64(speedLimit.bytes), speedLimit.seconds) : nil
        }
        if let tooSlow {
            end(28, message: "(28) Operation too slow. Less than \(tooSlow.0) bytes/sec transferred the last \(tooSlow.1) seconds")
        }
        if meter != nil { drawMeter(final: false) }
    }

    /// Redraws the progress meter (curl's layout) on stderr.
    private func drawMeter(final: Bool) {
        guard let meter else { return }
        let drawn: (TransferFacts, Bool, Double?)? = state.withLockedValue { state in
            // After the last line (or while ending), the once-a-second redraw has nothing to add.
            if state.betweenAttempts || (!final && (state.done || state.ending)) { return nil }
            let header = !state.meterShown
            state.meterShown = true
            // Over the samples once there are two; before that (and on the last line), the averages' sum.
            var speed: Double?
            if !final, let first = state.samples.first, let last = state.samples.last, state.samples.count > 1 {
                speed = Double(max(0, last.1 - first.1)) / max(Self.seconds(first.0.duration(to: last.0)), 0.001)
            }
            return (state.facts, header, speed)
        }
        guard let (facts, header, speed) = drawn else { return }
        var text = header ? meter.header : ""
        text +=
            "\r"
            + meter.line(
                download: .init(bytes: facts.bytes, expected: facts.expectedBytes), upload: .init(bytes: facts.uploaded, expected: facts.expectedUpload),
                elapsed: Self.seconds(elapsed), currentSpeed: speed)
        if final { text += "\n" }
        StandardError.write(text)
    }

    /// Ends a failed attempt's meter line (its last figures and a line feed), before `--retry`'s warning.
    func endAttempt() {
        let shown = state.withLockedValue { $0.meterShown && !$0.betweenAttempts }
        if shown { drawMeter(final: true) }
        state.withLockedValue { state in
            state.betweenAttempts = true
            state.samples = []
        }
    }

    /// Starts the next attempt's meter line.
    func beginAttempt() {
        state.withLockedValue { $0.betweenAttempts = false }
        if meter != nil { drawMeter(final: false) }
    }

    /// Marks the transfer complete: the meter's last line.
    func finishMeter() {
        let shown = state.withLockedValue { $0.meterShown }
        if shown || meter != nil { drawMeter(final: true) }
    }

    /// Writes `-w` for a transfer that completed (the process then exits with `code` normally).
    func completed(_ code: Int32) {
        let facts: TransferFacts = state.withLockedValue { state in
            state.ending = true
            state.facts.endedAt = started.duration(to: .now)
            return state.facts
        }
        writeOut?.emit(facts: facts, exitCode: code, errorMessage: "", remote: remote, diagnostics: diagnostics)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    /// The thread of a second caller of ``end(_:message:)`` waits here for the first one's exit.
    static func parkForever() -> Never {
        while true { sleep(60) }
    }
}

/// Keeps the dispatch sources alive for the process's life (they are only ever appended to,
/// under the lock; a `DispatchSource` is thread-safe itself).
private final class DispatchSources: @unchecked Sendable {
    private let lock = NIOLock()
    private var sources: [any DispatchSourceProtocol] = []

    func keep(_ source: any DispatchSourceProtocol) {
        lock.withLock { sources.append(source) }
    }
}
