/// The entry members a configuration is read with beyond the engine's own (see ``TrustConfiguration``).
///
/// The engine reads what it acts on: anchors, pins, modes, key minimums, revocation, CT. Members that act on the
/// connection are defined by the module that makes it — TrustNIO's `minimumTLSVersion` and `clientIdentity`
/// (`TrustConfigurationMembers.transport`) — and a file that uses them is read with them:
///
/// ```swift
/// let evaluator = try ConfiguredTrustEvaluator(contentsOf: "trust.json", members: .transport)
/// ```
///
/// Read without them, such a member is an unknown member, and the file is refused: a setting nothing would act on
/// is never dropped in silence.
public struct TrustConfigurationMembers: Sendable {
    /// How one member is read: its name, and the reader that stores its value on the entry.
    struct Reader: Sendable {
        /// The member's type, to tell two members of one name apart.
        let type: ObjectIdentifier
        let read: @Sendable (JSONValue, String, inout TrustConfiguration.Checker, inout TrustConfiguration.Entry) -> Void
    }

    let readers: [String: Reader]

    /// The engine's members only.
    public static let engine = TrustConfigurationMembers(readers: [:])

    private init(readers: [String: Reader]) {
        self.readers = readers
    }

    /// A set holding one member.
    package init<Member: TrustConfigurationMember>(_: Member.Type) {
        readers = [
            Member.name: Reader(type: ObjectIdentifier(Member.self)) { value, path, checker, entry in
                entry[member: Member.self] = Member.read(value, at: path, checker: &checker)
            }
        ]
    }

    /// The members of both sets. Two different members of one name would be a programming error in the modules
    /// that define them (one would read the other's values); a set holding the same member twice is fine.
    public func union(_ other: TrustConfigurationMembers) -> TrustConfigurationMembers {
        TrustConfigurationMembers(
            readers: readers.merging(other.readers) { first, second in
                precondition(first.type == second.type, "two configuration members are named alike")
                return first
            })
    }

    /// The names of the members, sorted.
    package var names: [String] { readers.keys.sorted() }
}
