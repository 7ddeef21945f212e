/// Bounds on the work of loading a PKCS#12 file (``ClientIdentity/init(pkcs12:passphrase:source:now:budget:)``).
///
/// Each key-derivation step of a PKCS#12 file names its own iteration count, and BoringSSL bounds each one
/// (100 million) but not their sum: a file of ten encrypted contents at 10 million iterations each costs over ten
/// seconds of CPU before anything is known. The file's iterations are added up from its structure before any is
/// run, and a file asking for more than ``maximumIterations`` is refused at once; ``timeLimit`` bounds the wait
/// for the rest: ``defaultTimeLimit`` unless the caller chooses (a deadline such as curl's `-m` tightens it).
/// The time limit is what makes the budget overall: a shrouded key bag inside an encrypted content
/// (RFC 7292 §4.2) cannot be seen without the passphrase, so its iterations (up to BoringSSL's 100 million per
/// step, about 40 s of CPU) are not in the count.
public struct PKCS12Budget: Sendable, Hashable {
    /// The most key-derivation iterations a file may ask for in all: the MAC's (twice with an empty passphrase,
    /// which BoringSSL tries both ways) and every shrouded key bag's and encrypted content's. Default 4 million,
    /// under 2 s of CPU (BoringSSL's PBKDF2-HMAC-SHA256 on the CI machine: 3.9 million in 1.7 s); OpenSSL 3 writes 3 × 2,048,
    /// Windows 3 × 2,000, keytool 3 × 10,000, and three steps at OWASP's 600,000 come to 1.8 million.
    public var maximumIterations: Int
    /// How long to wait for the decoding (``defaultTimeLimit`` by default); `nil`: as long as it takes, which
    /// leaves the iterations that cannot be counted unbounded. When it passes, the load fails with
    /// a timed-out ``ClientIdentityError`` and the decoding, which cannot be interrupted, finishes on its own
    /// thread and is dropped.
    public var timeLimit: Duration?

    /// The default ``timeLimit``: 10 seconds, five times what ``maximumIterations``' default costs on the CI
    /// machine (under 2 s), so that a file within the count loads on a loaded machine, while one hiding up to
    /// 100 million iterations in an encrypted content is given up after 10 s rather than 40.
    public static let defaultTimeLimit: Duration = .seconds(10)

    /// A budget; the defaults suit files written by OpenSSL, Windows, macOS and Java.
    public init(maximumIterations: Int = 4_000_000, timeLimit: Duration? = PKCS12Budget.defaultTimeLimit) {
        self.maximumIterations = maximumIterations
        self.timeLimit = timeLimit
    }
}
