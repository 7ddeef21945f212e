import Foundation

/// An HTTP request.
public struct Request: Sendable {
    public var url: URL
    public var method: String
    /// Header fields in order; names are case-insensitive.
    public var headers: [(name: String, value: String)]
    public var body: Data?
    /// Overrides the session's request timeout for this request.
    public var timeout: Duration?
    /// The task-level challenge handler, asked before the session's.
    public var challengeHandler: (any ChallengeHandler)?

    public init(url: URL, method: String = "GET", headers: [(name: String, value: String)] = [], body: Data? = nil,
                timeout: Duration? = nil, challengeHandler: (any ChallengeHandler)? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.challengeHandler = challengeHandler
    }

    /// The first value of a header field.
    public func value(forHeader name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    mutating func removeHeaders(named names: Set<String>) {
        headers.removeAll { names.contains($0.name.lowercased()) }
    }
}
