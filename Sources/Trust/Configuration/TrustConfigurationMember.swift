/// A member of a configuration entry that a module above the engine defines, reads and acts on: the engine
/// evaluates trust and knows nothing of sockets or TLS settings, so members such as the TLS minimum and the client
/// identity (TrustNIO's) are declared where they act and handed to the loader in a `TrustConfigurationMembers`.
///
/// The loader reads such a member with the same strictness as its own (a problem with its JSON path, every problem
/// at once), keeps its value on the entry (`TrustConfiguration.Entry.subscript(member:)`) and writes it back with
/// `TrustConfiguration.jsonText()`.
package protocol TrustConfigurationMember: Sendable {
    /// What the member holds once read.
    associatedtype Value: Sendable & Hashable

    /// The member's name in an entry object.
    static var name: String { get }

    /// Reads the member's JSON value found at `path`, reporting what is wrong to `checker`; nil when it cannot
    /// be used.
    static func read(_ value: JSONValue, at path: String, checker: inout TrustConfiguration.Checker) -> Value?

    /// The value as the file writes it; nil for the member's default, which an entry neither stores nor writes
    /// (so an entry that says `"1.2"` and one that says nothing are the same entry).
    static func json(_ value: Value) -> JSONValue?
}

extension TrustConfiguration.Entry {
    /// A value of a member defined above the engine, as an entry keeps it: compared by value, with its JSON form
    /// for `TrustConfiguration.jsonText()`.
    package struct MemberValue: Sendable, Hashable {
        let value: any Hashable & Sendable
        let json: JSONValue

        package static func == (lhs: Self, rhs: Self) -> Bool {
            AnyHashable(lhs.value) == AnyHashable(rhs.value)
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(AnyHashable(value))
        }
    }

    /// The value of a member defined above the engine; nil when the entry does not set it (or sets its default).
    package subscript<Member: TrustConfigurationMember>(member member: Member.Type) -> Member.Value? {
        get { layeredMembers[Member.name]?.value as? Member.Value }
        set {
            layeredMembers[Member.name] = newValue.flatMap { value in Member.json(value).map { MemberValue(value: value, json: $0) } }
        }
    }
}
