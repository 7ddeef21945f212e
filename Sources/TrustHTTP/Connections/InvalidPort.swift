#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A URL's port that no TCP connection can use: outside 1–65535.
///
/// RFC 3986 §3.2.3 lets a port be any run of digits; TCP's port fields are 16 bits (RFC 9293 §3.1) and port 0
/// is reserved (IANA's service name and port registry; connect(2) cannot reach it). Foundation's `URL` reads
/// `:98425` as 98425 and an overflowing `:99999999999999999999` as no port (the scheme's default), and the
/// resolver NIO connects through narrows a numeric service to 16 bits (getaddrinfo: 98425 became port 32889,
/// 65536 port 0). So a URL's port is checked here, before any connection — a URL typed, a redirect's
/// `Location`, a proxy's URL — and refused as curl refuses it (CURLE_URL_MALFORMAT, "Port number was not a
/// decimal number between 0 and 65535"; curl 7.88 still tries port 0, which cannot connect).
package struct InvalidPort: Error, Sendable, Hashable, CustomStringConvertible {
    /// The port as the URL writes it.
    package var text: String

    package init(text: String) {
        self.text = text
    }

    package var description: String { "the port \(text) is outside 1-65535" }

    /// The port `url` names: nil when it names none, or an empty one (`http://host:/`, the scheme's default, as
    /// curl reads it); throws for one outside 1–65535.
    static func port(of url: URL) throws(InvalidPort) -> Int? {
        if let port = url.port {
            guard (1...65_535).contains(port) else { throw InvalidPort(text: String(port)) }
            return port
        }
        // No port from Foundation: none written, an empty one, or digits too many for an Int.
        guard let text = portText(of: url.absoluteString), !text.isEmpty else { return nil }
        throw InvalidPort(text: String(text.prefix(32)))
    }

    /// The port part of an absolute URL's authority (RFC 3986 §3.2): after the user-info's `@` and the host
    /// (an IP literal in brackets may hold colons), up to the path, query or fragment; nil without a colon.
    static func portText(of url: String) -> Substring? {
        guard let schemeEnd = url.utf8.firstRange(of: "://".utf8) else { return nil }
        var authority = url[schemeEnd.upperBound...]
        if let end = authority.utf8.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            authority = authority[..<end]
        }
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) { authority = authority[authority.utf8.index(after: at)...] }
        if authority.utf8.first == UInt8(ascii: "["), let close = authority.utf8.firstIndex(of: UInt8(ascii: "]")) {
            authority = authority[authority.utf8.index(after: close)...]
            guard authority.utf8.first == UInt8(ascii: ":") else { return nil }
            return authority[authority.utf8.index(after: authority.startIndex)...]
        }
        guard let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")) else { return nil }
        return authority[authority.utf8.index(after: colon)...]
    }
}
