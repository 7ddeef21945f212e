#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A trust configuration as a server delivers it: the configuration file's contents with the sequence number and the
/// end date that make it an update, in one small envelope that is signed as a whole (``SignedTrustConfiguration``).
///
/// ```json
/// {
///   "bundleVersion": 1,
///   "sequence": 42,
///   "expires": "2027-03-01T00:00:00Z",
///   "configuration": { "version": 1, "hosts": [ … ] }
/// }
/// ```
///
/// `configuration` is a configuration file's object exactly as the configuration file format describes it (``TrustConfiguration/parse(_:publicSuffixes:)``), checked as
/// strictly (every problem reported, with its JSON path under `$.configuration`). The envelope keeps the file format
/// as it is: a plain configuration file is never mistaken for a bundle (it has no `sequence`), nor a bundle for a
/// configuration file (`trust check-config` refuses its members).
///
/// - `sequence`: a whole number from 0 to 2⁶⁴−1; each new bundle has a larger one. A bundle whose sequence is not
///   above the last one accepted is a replay or a rollback and is refused.
/// - `expires`: an RFC 3339 date-time; from then on the bundle is not used and the application's built-in
///   configuration applies.
public struct TrustConfigurationBundle: Sendable, Hashable {
    /// The envelope's format version (`bundleVersion`).
    public static let currentVersion = 1

    /// The bundle's sequence number.
    public var sequence: UInt64
    /// When the bundle stops being used.
    public var expires: Date
    /// The configuration it delivers.
    public var configuration: TrustConfiguration

    /// A bundle delivering `configuration`.
    public init(configuration: TrustConfiguration, sequence: UInt64, expires: Date) {
        self.configuration = configuration
        self.sequence = sequence
        self.expires = expires
    }

    /// Parses and checks a bundle's bytes: strict UTF-8 JSON, the envelope's members, then the configuration.
    /// Every problem is reported at once (rejection code `malformed`).
    ///
    /// This reads the bytes as they are; what arrives from a server is read through
    /// ``SignedTrustConfiguration/verify(bundle:signature:trustedKeys:lastAcceptedSequence:now:maximumSize:publicSuffixes:)``,
    /// which parses nothing before the signature is verified.
    /// `publicSuffixes` is as ``TrustConfiguration/parse(_:publicSuffixes:)`` takes it.
    public init(
        parsing bytes: some Collection<UInt8>, publicSuffixes: PublicSuffixList? = PublicSuffixList.shared
    ) throws(TrustConfigurationRejection) {
        guard let text = StrictUTF8.string(bytes) else { throw Self.malformed("$", "not UTF-8 text") }
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw Self.malformed("$", "not valid JSON: \(error)")
        }
        var checker = TrustConfiguration.Checker(publicSuffixes: publicSuffixes)
        guard let fields = checker.members(document, "$", allowed: ["bundleVersion", "sequence", "expires", "configuration"]) else {
            throw TrustConfigurationRejection.malformed(TrustConfigurationFileError(problems: checker.reported))
        }
        var envelope = Envelope()
        envelope.read(fields, into: &checker)
        // The configuration's problems carry paths from `$`: under the envelope they are under `$.configuration`.
        var inner = TrustConfiguration.Checker(publicSuffixes: publicSuffixes)
        let configuration = fields["configuration"].flatMap { inner.configuration($0) }
        if fields["configuration"] == nil { checker.problem("$.configuration", "is required (a configuration file's object)") }
        let problems = checker.reported + inner.reported.map { TrustConfigurationProblem(path: "$.configuration" + $0.path.dropFirst(), message: $0.message) }
        guard problems.isEmpty, let sequence = envelope.sequence, let expires = envelope.expires, let configuration else {
            throw TrustConfigurationRejection.malformed(TrustConfigurationFileError(problems: problems))
        }
        self.init(configuration: configuration, sequence: sequence, expires: expires)
    }

    /// The bundle's JSON text (what ``init(parsing:publicSuffixes:)`` reads), to be signed as it is.
    public func jsonText() -> String {
        // The configuration's text is indented one level deeper; its strings hold no raw line end (JSON escapes them).
        let configuration = self.configuration.jsonText().trimmingASCIINewlines().split(separator: "\n", omittingEmptySubsequences: false)
            .joined(separator: "\n  ")
        return "{\n  \"bundleVersion\": \(Self.currentVersion),\n  \"sequence\": \(sequence),\n  \"expires\": \"\(RFC3339.string(expires))\",\n"
            + "  \"configuration\": \(configuration)\n}\n"
    }

    static func malformed(_ path: String, _ message: String) -> TrustConfigurationRejection {
        .malformed(TrustConfigurationFileError(problems: [TrustConfigurationProblem(path: path, message: message)]))
    }

    /// The envelope's own members, read with the configuration checker's rules (and its problem list).
    struct Envelope {
        var sequence: UInt64?
        var expires: Date?

        mutating func read(_ fields: [String: JSONValue], into checker: inout TrustConfiguration.Checker) {
            if let value = fields["bundleVersion"] {
                if let version = checker.integer(value, "$.bundleVersion"), version != TrustConfigurationBundle.currentVersion {
                    checker.problem(
                        "$.bundleVersion", "version \(version) is not supported (this library reads version \(TrustConfigurationBundle.currentVersion))")
                }
            } else {
                checker.problem("$.bundleVersion", "is required (\(TrustConfigurationBundle.currentVersion))")
            }
            if let value = fields["sequence"] {
                if case .number(let text) = value, let number = UInt64(text) {
                    sequence = number
                } else {
                    let seen = if case .number(let text) = value { Self.quoted(text) } else { value.kindName }
                    checker.problem("$.sequence", "must be a whole number from 0 to \(UInt64.max), not \(seen)")
                }
            } else {
                checker.problem("$.sequence", "is required")
            }
            if let value = fields["expires"] {
                if let text = checker.string(value, "$.expires") {
                    expires = RFC3339.parse(text)
                    if expires == nil {
                        checker.problem("$.expires", "must be an RFC 3339 date-time such as 2027-06-01T00:00:00Z, not \"\(DisplayText.escaped(text))\"")
                    }
                }
            } else {
                checker.problem("$.expires", "is required: a bundle without an end would be valid forever")
            }
        }

        /// The longest number text quoted in a problem; a longer one is cut there and ends with "…".
        static let quotedLimit = 32

        /// A number's text as the bundle wrote it, escaped and at most ``quotedLimit`` characters: the signer wrote
        /// it, but a problem is shown to people and logged, and JSON sets no bound on a number's length.
        static func quoted(_ text: String) -> String {
            let escaped = DisplayText.escaped(text)
            guard escaped.count > quotedLimit else { return escaped }
            return String(escaped.prefix(quotedLimit)) + "…"
        }
    }
}
