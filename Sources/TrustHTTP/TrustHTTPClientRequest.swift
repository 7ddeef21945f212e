import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An HTTP request.
public struct TrustHTTPClientRequest: Sendable, CustomStringConvertible, CustomReflectable {
    /// The URL requested.
    public var url: URL
    /// The HTTP method (`GET` by default).
    public var method: String
    /// The header fields, in order: `request.headers[.accept] = "application/json"`. `HTTPFields` holds only
    /// field names that are tokens, and values without CR, LF or NUL (RFC 9110 §5.1, §5.5), so a field can
    /// never split the request.
    public var headers: HTTPFields
    /// The request body: bytes, a file or a stream (``TrustHTTPClientRequest/Body``); none by default.
    public var body: TrustHTTPClientRequest.Body?
    /// Send `Expect: 100-continue` and hold the body until the server answers `100 Continue`
    /// (RFC 9110 §10.1.1): a server that refuses the request — it needs authentication, the body is
    /// too large — says so before the body is sent. The body goes anyway after
    /// ``TrustHTTPClientConfiguration/continueTimeout`` without an answer, as the RFC asks of a client that
    /// cannot know whether the server supports the expectation. A `417 Expectation Failed` sends the
    /// request again without it. An `Expect: 100-continue` header field set by hand acts the same.
    public var expectsContinue: Bool = false
    /// Overrides the session's request timeout for this request.
    public var timeout: Duration?
    /// Overrides ``ResponseLimits/maximumBodySize`` for this request's collected body.
    public var maximumResponseBodySize: Int?
    /// The task-level challenge handler, asked before the session's.
    public var challengeHandler: (any ChallengeHandler)?
    /// The credential for this request's HTTP authentication challenges (the `proposedCredential`
    /// and the default answer), for the request's own origin only — never sent to another origin
    /// after a redirect. A user and password in the URL (`https://user:pass@host/`) act the same.
    public var credential: Credential?
    /// Send ``credential`` as Basic before any challenge (over `https`, or `http` when the session
    /// allows clear-text credentials). Off by default: credentials go only where asked for.
    public var authenticatesPreemptively: Bool = false
    /// Told as the request body goes out, as URLSession's `didSendBodyData`: the body bytes the
    /// connection has taken so far (a streamed body after each chunk, bytes in memory once) and the
    /// body's length when known. A request sent again (authentication, a 307 or 308, a 417, a
    /// refused HTTP/2 stream) counts from zero again. Called on an event loop: keep it short.
    public var uploadProgress: (@Sendable (_ sent: Int, _ expected: Int?) -> Void)?

    /// A request for `url`; everything else has a default.
    public init(
        url: URL, method: String = "GET", headers: HTTPFields = [:], body: TrustHTTPClientRequest.Body? = nil, expectsContinue: Bool = false,
        timeout: Duration? = nil, challengeHandler: (any ChallengeHandler)? = nil, credential: Credential? = nil,
        authenticatesPreemptively: Bool = false
    ) {
        self.credential = credential
        self.authenticatesPreemptively = authenticatesPreemptively
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.expectsContinue = expectsContinue
        self.timeout = timeout
        self.challengeHandler = challengeHandler
    }

    /// Method, URL (password hidden) and header names — never header values or credentials.
    public var description: String {
        "\(method) \(url.redactingPassword)" + (headers.isEmpty ? "" : " [" + headers.map(\.name.rawName).joined(separator: ", ") + "]")
            + (body.map { " body: \($0)" } ?? "") + (credential.map { " credential: \($0)" } ?? "")
    }

    /// Shows only `description`, so header values and credentials stay out of dumps.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    /// Whether the request asks for `100 Continue` before its body: ``expectsContinue``, or an
    /// `Expect: 100-continue` field of its own; never without a body to hold back.
    var waitsForContinue: Bool {
        guard let body, body.length != 0 else { return false }
        return expectsContinue || headers[.expect].map { $0.lowercased() == "100-continue" } == true
    }

    /// Removes every field named in `names`.
    mutating func removeHeaders(named names: Set<HTTPField.Name>) {
        for name in names { headers[values: name] = [] }
    }

    /// Replaces every field `name` with one `value`.
    mutating func setHeader(_ name: HTTPField.Name, _ value: String) {
        headers[values: name] = []
        headers.append(HTTPField(name: name, value: value))
    }

    /// The user and password in the URL, percent-decoded.
    var urlCredential: Credential? {
        guard let user = url.user(percentEncoded: false), let password = url.password(percentEncoded: false) else { return nil }
        return Credential(user: user, password: password, persistence: .none)
    }
}

/// ASCII case-insensitive header-name comparison (Foundation's `caseInsensitiveCompare` is slow on Linux
/// and knows nothing of HTTP's token rules).
enum HeaderName {
    static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lower($0) == lower($1) }
    }

    @inline(__always) static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
