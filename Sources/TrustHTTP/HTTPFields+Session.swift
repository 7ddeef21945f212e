import HTTPTypes
import NIOHTTP1

// Header fields are swift-http-types' `HTTPFields` in the API — the type of AsyncHTTPClient's newer API, of
// swift-openapi and of Hummingbird — and NIO's `HTTPHeaders` on the wire (HTTP/1.1, and HTTP/2 through
// `HTTP2ExchangeFraming`); these convert between the two. swift-nio-extras' `HTTPFields(_:splitCookie:)` is a request's
// conversion: it drops the first `Host` field (it becomes `:authority`), which a response's fields keep.

extension HTTPFields {
    /// The fields of a received head, in order, names as sent. A name that is not a token cannot be an
    /// `HTTPField.Name` and is left out (NIO's decoders refuse such a head anyway); a value's bytes that a field
    /// may not hold (RFC 9110 §5.5) read as spaces.
    init(_ headers: HTTPHeaders) {
        self.init()
        reserveCapacity(headers.count)
        for (name, value) in headers {
            guard let fieldName = HTTPField.Name(name) else { continue }
            append(HTTPField(name: fieldName, value: value))
        }
    }
}

extension HTTPVersion {
    /// `HTTP/1.1` or `HTTP/2` (RFC 9113 has no minor version): as curl's `-v` and `-i` show it.
    package var text: String { major >= 2 ? "HTTP/\(major)" : "HTTP/\(major).\(minor)" }
}
