import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The answer to a Basic challenge (RFC 7617): `Basic base64(user ":" password)`, UTF-8.
package struct BasicAuthorization: Sendable {
    /// Why a user and password cannot be sent as Basic.
    package struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The error with its data, for this package's code: cases come in minor versions without breaking a client,
        /// who shows the error (its description says what is wrong).
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        /// Human-readable form.
        package var description: String { detail.description }

        /// RFC 7617 §2: a user-id containing a colon cannot be sent.
        package static let colonInUser = Self(.colonInUser)
        /// Control characters cannot be sent.
        package static let controlCharacter = Self(.controlCharacter)

        /// The cases, exhaustive inside this package.
        package enum Detail: Sendable, Hashable {
            /// RFC 7617 §2: a user-id containing a colon cannot be sent.
            case colonInUser
            /// Control characters cannot be sent.
            case controlCharacter

            /// Human-readable form.
            package var description: String {
                switch self {
                case .colonInUser: return "a Basic user name cannot contain ':'"
                case .controlCharacter: return "the user name or password contains a control character"
                }
            }
        }
    }

    /// The field value, `Basic …`.
    package let fieldValue: String

    /// Encodes `user` and `password` as a Basic field value; throws if Basic cannot carry them.
    package init(user: String, password: String) throws(Problem) {
        // By byte: a colon followed by a combining mark is still the colon a server splits at.
        guard !user.containsASCII(UInt8(ascii: ":")) else { throw .colonInUser }
        guard !(user + password).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { throw .controlCharacter }
        fieldValue = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
