/// Which public roots anchor paths: the machine's CA bundle, the Mozilla root store compiled into the library
/// (``MozillaRoots``), or both.
///
/// The default is ``systemAndMozilla``:
/// - Mozilla's store gives every machine the roots the browsers trust, whatever its `ca-certificates` package holds
///   (an older image misses roots that CAs issue from today, and a newer one may hold roots no browser trusts);
/// - the system bundle keeps what an administrator added on purpose (a company's own CA, installed with
///   `update-ca-certificates`), which is what curl and every other program on the machine trusts too.
///
/// Whatever the choice, NSS's refusals apply to every public root NSS lists (custom anchors are the application's
/// own choice and are exempt): a root NSS does not trust for servers anchors nothing, even when the bundle holds it
/// (a bundle from before Mozilla withdrew it), and a root with a server distrust-after date anchors only chains whose
/// end-entity certificate's `notBefore` is not later than that date. The refusal is a
/// ``TrustFailureReason/Kind/rootDistrusted`` reason naming the root and the rule.
///
/// A root of the bundle that NSS does not list at all is kept: a company's own CA and a CA Mozilla removed from its
/// store (E-Tugra's, after its 2023 incident) look alike to a program, and only the administrator can tell them apart.
/// A decision anchored at such a root says so in its notes, and `trust roots --system-diff` lists them; choose
/// ``mozilla`` to trust exactly what the browsers trust.
public struct RootStore: Sendable, Hashable, CustomStringConvertible {
    /// Whether the machine's bundle (``SystemRoots``) is part of the store.
    public let includesSystem: Bool
    /// Whether Mozilla's store (``MozillaRoots``) is part of the store.
    public let includesMozilla: Bool

    private init(system: Bool, mozilla: Bool) {
        self.includesSystem = system
        self.includesMozilla = mozilla
    }

    /// The machine's CA bundle only (``SystemRoots``), with NSS's refusals applied.
    public static let system = RootStore(system: true, mozilla: false)
    /// Mozilla's store only (``MozillaRoots``): what Firefox trusts.
    public static let mozilla = RootStore(system: false, mozilla: true)
    /// Both: the default.
    public static let systemAndMozilla = RootStore(system: true, mozilla: true)
    /// The store used unless one is chosen: ``systemAndMozilla``.
    public static let `default` = systemAndMozilla

    /// Every choice, by name.
    package static let all: [RootStore] = [.systemAndMozilla, .system, .mozilla]

    /// The choice's name: `system`, `mozilla` or `system+mozilla` (the `trust` command's `--roots`).
    public var name: String {
        switch (includesSystem, includesMozilla) {
        case (true, true): return "system+mozilla"
        case (true, false): return "system"
        default: return "mozilla"
        }
    }

    /// The choice named `name` (see ``name``); `nil` for another name.
    public init?(name: String) {
        guard let store = Self.all.first(where: { $0.name == name }) else { return nil }
        self = store
    }

    /// ``name``.
    public var description: String { name }
}
