import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Header fields as swift-http-types' `HTTPFields` — the type of AsyncHTTPClient's newer API and of
// swift-openapi — with its set/add/remove and case-insensitive lookup. The session keeps fields as
// ordered (name, value) pairs (what goes on the wire, HTTP/1.1 and HTTP/2 alike); these views convert.

extension HTTPFields {
    /// The fields of `pairs`, in order. A name that is not an HTTP token (RFC 9110 §5.1) cannot be an
    /// `HTTPField.Name` and is left out — such a field is refused before a request is sent anyway.
    init(pairs: [(name: String, value: String)]) {
        self.init()
        reserveCapacity(pairs.count)
        for (name, value) in pairs {
            guard let fieldName = HTTPField.Name(name) else { continue }
            append(HTTPField(name: fieldName, value: value))
        }
    }

    /// The fields as (name, value) pairs, in order, names as given.
    var pairs: [(name: String, value: String)] { map { ($0.name.rawName, $0.value) } }
}

extension TrustHTTPClientRequest {
    /// The header fields as `HTTPFields`: `request.fields[.authorization] = …`, `fields.append(…)`,
    /// `fields[values: .accept]`. Setting it replaces ``headers``.
    public var fields: HTTPFields {
        get { HTTPFields(pairs: headers) }
        set { headers = newValue.pairs }
    }

    /// A request for `url` with `fields` as its header fields.
    public init(url: URL, method: HTTPRequest.Method, fields: HTTPFields, body: Data? = nil, timeout: Duration? = nil) {
        self.init(url: url, method: method.rawValue, headers: fields.pairs, body: body, timeout: timeout)
    }
}

extension TrustHTTPClientResponse {
    /// The response's header fields as `HTTPFields` (case-insensitive lookup: `response.fields[.contentType]`).
    public var fields: HTTPFields { HTTPFields(pairs: headers) }

    /// The status as swift-http-types' `HTTPResponse.Status`.
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: statusCode) }
}

extension TrustHTTPClientStreamingResponse {
    /// The response's header fields as `HTTPFields`.
    public var fields: HTTPFields { HTTPFields(pairs: headers) }

    /// The status as swift-http-types' `HTTPResponse.Status`.
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: statusCode) }
}
