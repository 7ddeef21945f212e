import HTTPTypes
import NIOConcurrencyHelpers
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The client's ``IntermediateFetcher``: missing intermediates fetched over plain HTTP/1.1 or HTTP/2-free `http`,
/// each route's fetches through that route's proxy, answers kept as HTTP caching allows.
///
/// - **Through the request's proxy, never direct.** ``through(_:)`` gives the fetcher for one proxy (or for a
///   direct route); a route whose requests go through a proxy fetches through that same proxy, whatever the proxy's
///   exceptions say about the CA's host.
/// - **Cached by URL** (at most `capacity` answers, the least recently used dropped first) for as long as the answer
///   says (RFC 9111 §4.2.1: `Cache-Control: max-age`, else `Expires` against `Date`), at most a week; `no-store` and
///   `no-cache` keep nothing; an answer without either is kept for an hour (§4.2.2 lets a cache choose). Failures are
///   not kept: the evaluator bounds what each evaluation spends.
/// - **One fetch per URL at a time**: concurrent handshakes that miss the same intermediate wait for one answer,
///   within the deadline of the handshake that started the fetch; one that has more time and sees that fetch run out
///   of it fetches again, within its own. A handshake that stops waiting (its deadline passed, or it was cancelled)
///   cancels the fetch only when no other waits for it.
/// - **Nothing but the GET**: no credential, no cookie, no redirect followed (a `3xx` is a failure), `Accept` naming
///   the two formats RFC 5280 §4.2.2.1 allows.
package final class HTTPIntermediateFetcher: Sendable {
    /// The most answers kept.
    package let capacity: Int
    private let resolve: [String: String]
    private let state = NIOLockedValueBox(State())

    private struct State {
        var clients: [String: TrustHTTPClient] = [:]
        var cache = LRUDictionary<String, Entry>()
        var inFlight: [String: InFlight] = [:]
        var nextFlight: UInt64 = 0
        var isShutDown = false
    }

    /// A fetch in progress and how many evaluations wait for it: cancelled only when every one of them has stopped
    /// waiting (one handshake's deadline is not another's).
    private struct InFlight {
        /// Tells this fetch from a later one of the same URL (the entry is this fetch's to remove only while it is there).
        var id: UInt64
        var task: Task<[UInt8], any Error>
        var waiters: Int
        /// When the fetch gives up (the deadline of the handshake that started it).
        var deadline: ContinuousClock.Instant
    }

    /// A kept answer, the fetch to wait for, or no client yet for the route (made outside the lock).
    private enum Found {
        case kept([UInt8])
        case fetching(InFlight)
        case needsClient
    }

    private struct Entry {
        var body: [UInt8]
        var freshUntil: ContinuousClock.Instant
    }

    /// Why a fetch failed, in words for the decision's notes.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        /// The fetch ran out of time (its deadline passed before an answer, or before it could start).
        package var ranOutOfTime = false
    }

    /// A fetcher whose requests connect as `resolve` says (curl's `--resolve`: `host:port` or `host` to an address).
    package init(resolve: [String: String] = [:], capacity: Int = 64) {
        self.resolve = resolve
        self.capacity = max(1, capacity)
    }

    /// The fetcher for requests through `proxy` (`nil`: direct). An existential, not an opaque type: Swift 6.3's
    /// optimising build crashed in SILGen converting the opaque result to `any IntermediateFetcher` in a closure.
    package func through(_ proxy: ProxyConfiguration?) -> any IntermediateFetcher {
        Route(
            owner: self,
            proxy: proxy.map { proxy in
                var always = proxy
                always.noProxy = []
                return always
            })
    }

    /// Closes every connection; later fetches fail.
    package func shutdown() async {
        let clients = state.withLockedValue { state -> [TrustHTTPClient] in
            state.isShutDown = true
            defer { state.clients = [:] }
            return Array(state.clients.values)
        }
        for client in clients { await client.shutdown() }
    }

    /// Answers kept now (for tests).
    package var cachedCount: Int { state.withLockedValue { $0.cache.count } }

    private struct Route: IntermediateFetcher {
        let owner: HTTPIntermediateFetcher
        let proxy: ProxyConfiguration?

        func fetch(_ url: URL, maximumSize: Int, deadline: ContinuousClock.Instant) async throws -> [UInt8] {
            try await owner.fetch(url, through: proxy, maximumSize: maximumSize, deadline: deadline)
        }
    }

    private func fetch(_ url: URL, through proxy: ProxyConfiguration?, maximumSize: Int, deadline: ContinuousClock.Instant) async throws -> [UInt8] {
        // The engine asks for http only; a caller of its own gets the same rule.
        guard url.scheme?.lowercased() == "http" else { throw Failure(description: "only http locations are fetched") }
        let route = proxy.map { "proxy " + $0.description } ?? "direct"
        let key = route + " " + url.absoluteString
        var made: TrustHTTPClient?
        while true {
            let found = try state.withLockedValue { state -> Found in
                guard !state.isShutDown else { throw Failure(description: "the client was shut down") }
                if let entry = state.cache.use(key) {
                    if ContinuousClock.now < entry.freshUntil { return .kept(entry.body) }
                    state.cache.remove(key)
                }
                if var running = state.inFlight[key] {
                    running.waiters += 1
                    state.inFlight[key] = running
                    return .fetching(running)
                }
                if state.clients[route] == nil, let made { state.clients[route] = made }
                guard let client = state.clients[route] else { return .needsClient }
                state.nextFlight += 1
                let id = state.nextFlight
                let task = Task { try await self.get(url, key: key, flight: id, with: client, maximumSize: maximumSize, deadline: deadline) }
                let flight = InFlight(id: id, task: task, waiters: 1, deadline: deadline)
                state.inFlight[key] = flight
                return .fetching(flight)
            }
            let flight: InFlight
            switch found {
            case .kept(let body): return body
            case .fetching(let fetching): flight = fetching
            case .needsClient:
                // Made outside the lock (it sets up TLS contexts); should another fetch have made one meanwhile, that
                // one is used and this one, which opened nothing, is let go.
                made = try TrustHTTPClient(configuration: Self.configuration(proxy: proxy, resolve: resolve))
                continue
            }
            do {
                return try await wait(for: flight, key: key)
            } catch let failure as Failure where failure.ranOutOfTime && flight.deadline < deadline && ContinuousClock.now < deadline {
                // The fetch this one joined ran out of its starter's time, and this one has more: again, within its own.
                continue
            }
        }
    }

    /// `flight`'s answer; a waiter that is cancelled stops waiting, and cancels the fetch if it was the last.
    private func wait(for flight: InFlight, key: String) async throws -> [UInt8] {
        try await withTaskCancellationHandler {
            try await flight.task.value
        } onCancel: {
            let last = state.withLockedValue { state -> Bool in
                guard var running = state.inFlight[key], running.id == flight.id else { return false }
                running.waiters -= 1
                guard running.waiters == 0 else {
                    state.inFlight[key] = running
                    return false
                }
                // Nobody waits: a later fetch of the URL starts afresh instead of joining one being cancelled.
                state.inFlight.removeValue(forKey: key)
                return true
            }
            if last { flight.task.cancel() }
        }
    }

    private func get(
        _ url: URL, key: String, flight: UInt64, with client: TrustHTTPClient, maximumSize: Int, deadline: ContinuousClock.Instant
    ) async throws -> [UInt8] {
        defer {
            state.withLockedValue { state in
                if state.inFlight[key]?.id == flight { state.inFlight.removeValue(forKey: key) }
            }
        }
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { throw Failure(description: "no time left to fetch", ranOutOfTime: true) }
        var request = TrustHTTPClientRequest(url: url, headers: [.accept: "application/pkix-cert, application/pkcs7-mime"], timeout: remaining)
        request.maximumResponseBodySize = maximumSize
        let response: TrustHTTPClientResponse
        do {
            response = try await client.data(for: request)
        } catch let error as TrustHTTPClientError {
            if error.code == .timedOut { throw Failure(description: "no answer in time", ranOutOfTime: true) }
            throw Failure(description: "\(error.code): \(error.message)")
        }
        guard response.statusCode == 200 else { throw Failure(description: "HTTP status \(response.statusCode)") }
        let body = Array(response.body.readableBytesView)
        if let lifetime = Self.freshness(of: response), lifetime > .zero {
            let entry = Entry(body: body, freshUntil: .now + lifetime)
            let capacity = self.capacity
            state.withLockedValue { $0.cache.set(key, entry, capacity: capacity) }
        }
        return body
    }

    /// The fetching client's configuration: plain GETs, nothing kept or sent that a request of the user's has.
    private static func configuration(proxy: ProxyConfiguration?, resolve: [String: String]) -> TrustHTTPClientConfiguration {
        var configuration = TrustHTTPClientConfiguration()
        configuration.proxy = proxy
        configuration.usesEnvironmentProxies = false
        configuration.followsRedirects = false
        configuration.fetchesMissingIntermediates = false
        configuration.credentialStore = nil
        configuration.evaluationCache = nil
        configuration.httpVersion = .http1Only
        configuration.resolve = resolve
        configuration.maximumConnectionsPerOrigin = 2
        return configuration
    }

    /// How long `response` may be reused (RFC 9111 §4.2.1), at most a week; `nil` when it may not be stored. Every
    /// figure is the answer's (a hostile or broken server's, or anyone's on the plain-HTTP path): each is clamped to
    /// 0…a week before any arithmetic, so no value overflows.
    static func freshness(of response: TrustHTTPClientResponse) -> Duration? {
        let week: Int64 = 7 * 86_400
        let directives = (response.headers[.cacheControl] ?? "").lowercased().split(separator: ",").map {
            $0.trimmingASCIIBlanks()
        }
        if directives.contains(where: { $0 == "no-store" || $0 == "no-cache" || $0.hasPrefix("no-cache=") }) { return nil }
        // RFC 9111 §5.1: an Age that is not delta-seconds is ignored.
        let age = min(week, response.headers[.age].flatMap { deltaSeconds($0) } ?? 0)
        if let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }) {
            // §5.2.1.1: max-age is delta-seconds (the quoted form tolerated, §5.2); anything else is not a lifetime.
            let value = maxAge.dropFirst("max-age=".count)
            let unquoted = value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") ? value.dropFirst().dropLast() : value
            guard let seconds = deltaSeconds(String(unquoted)) else { return nil }
            return .seconds(min(week, seconds) - age)
        }
        if let expires = response.headers[.expires] {
            // An Expires that is not an HTTP date means "already expired" (RFC 9111 §5.3).
            guard let until = HTTPDate.parse(expires) else { return nil }
            let now = response.headers[.date].flatMap(HTTPDate.parse) ?? Date()
            let interval = until.timeIntervalSince(now)
            guard interval > 0 else { return nil }
            return .seconds(Int64(min(Double(week), interval).rounded(.down)) - age)
        }
        return .seconds(max(0, 3_600 - age))
    }

    /// RFC 9111 §1.2.2 delta-seconds: one or more digits and nothing else; a value too large to hold counts as
    /// 2147483648, as that section says a cache must take it.
    static func deltaSeconds(_ text: String) -> Int64? {
        let digits = text.trimmingASCIIBlanks()
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int64(digits) ?? 2_147_483_648
    }
}
