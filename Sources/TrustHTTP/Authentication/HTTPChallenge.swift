/// One challenge from a `WWW-Authenticate` or `Proxy-Authenticate` field (RFC 9110 §11.2):
/// a scheme with either a token68 or a list of parameters.
public struct HTTPChallenge: Sendable, Hashable, CustomStringConvertible {
    /// The scheme as sent (`Digest`, `basic`…); compare with ``schemeName``.
    public var scheme: String
    /// The token68 form (`Negotiate YII…`), if used.
    public var token68: String?
    /// The parameters in order; names lowercased, values unquoted and unescaped.
    public var parameters: [(name: String, value: String)]

    /// A challenge from its parts; parameter names should be lowercase, as the parser makes them.
    public init(scheme: String, token68: String? = nil, parameters: [(name: String, value: String)] = []) {
        self.scheme = scheme
        self.token68 = token68
        self.parameters = parameters
    }

    /// The scheme, lowercased.
    public var schemeName: String { scheme.lowercased() }

    /// A parameter's value (names are case-insensitive).
    public subscript(_ name: String) -> String? {
        let lower = name.lowercased()
        return parameters.first { $0.name == lower }?.value
    }

    /// The realm, if any.
    public var realm: String? { self["realm"] }

    /// Equal when the scheme names (case-insensitive), token68 and parameters in order match.
    public static func == (lhs: HTTPChallenge, rhs: HTTPChallenge) -> Bool {
        lhs.schemeName == rhs.schemeName && lhs.token68 == rhs.token68
            && lhs.parameters.map(\.name) == rhs.parameters.map(\.name) && lhs.parameters.map(\.value) == rhs.parameters.map(\.value)
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(schemeName)
        hasher.combine(token68)
        for parameter in parameters {
            hasher.combine(parameter.name)
            hasher.combine(parameter.value)
        }
    }

    /// The challenge as it could be sent again (values quoted).
    public var description: String {
        if let token68 { return "\(scheme) \(token68)" }
        if parameters.isEmpty { return scheme }
        return scheme + " " + parameters.map { "\($0.name)=\(AuthenticationHeaderParser.quoted($0.value))" }.joined(separator: ", ")
    }
}

/// Why a challenge (or part of a field) was skipped.
package struct AuthenticationHeaderDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The byte offset in the field value where the problem was found.
    package var offset: Int
    /// What is wrong, in words.
    package var message: String

    /// Human-readable form.
    package var description: String { "at byte \(offset): \(message)" }
}
