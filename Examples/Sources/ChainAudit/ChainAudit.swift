// An offline audit of a deployment's certificate chain, as a CI job runs it before a rollout: read the chain and the
// internal anchors from files, evaluate the chain as clients will (the organisation's policy plus a rule of its own),
// and report the decision, the pins of the validated path, and the policy it was judged under — in data, for the
// job to print or fail on.
import Foundation
import Trust
import X509

/// Audits chains against an internal CA's policy.
public struct ChainAudit: Sendable {
    /// The anchors clients of the deployment trust.
    public let anchors: TrustAnchors
    /// The policy chains are judged under.
    public let policy: ValidationPolicy
    /// The organisation's own rule.
    public let rule: ShortLivedLeafRule

    /// An audit against `anchors` under ``internalPolicy(pins:)`` and `rule`.
    public init(anchors: TrustAnchors, pins: Set<SPKIPin> = [], rule: ShortLivedLeafRule = ShortLivedLeafRule()) {
        self.anchors = anchors
        self.policy = Self.internalPolicy(pins: pins)
        self.rule = rule
    }

    /// The internal CA's policy: the Web PKI's rules, stricter keys, serverAuth required in the leaf, a short path,
    /// and the key pins (if any) on the validated path.
    public static func internalPolicy(pins: Set<SPKIPin>) -> ValidationPolicy {
        var policy = ValidationPolicy.webPKI
        policy.requiresExtendedKeyUsageInLeaf = true
        policy.minimumRSAKeyBits = 3072
        policy.minimumECKeyBits = 256
        policy.maximumIntermediates = 2
        policy.pins = pins
        return policy
    }

    /// What was audited and what clients would decide.
    public struct Report: Sendable {
        public var trusted: Bool
        /// Each reason's code (`expired`, `pin-mismatch`, `refused-by-application`…).
        public var reasonCodes: [String]
        /// Each reason in words (names escaped).
        public var reasons: [String]
        public var notes: [String]
        /// The validated path's subjects, leaf first.
        public var validatedPath: [String]
        /// The validated path's key pins, as the `Public-Key-Pins` header writes them: what a client may pin.
        public var pins: [String]
        /// The evaluator's policy, as decisions name it.
        public var policy: String
        /// The leaf's subject.
        public var leaf: String?
        /// Whether something other than the evaluator's rules decided (a debug override).
        public var overridden: Bool
    }

    /// Evaluates `chain` (leaf first) for `host` at `time` and reports.
    public func audit(_ chain: [Certificate], host: String, at time: Date = Date()) async throws -> Report {
        let validator = PathValidator(anchors: anchors, policy: policy, additionalRules: [rule], name: "internal-ca")
        // The deployment's services are reached by name: an IP literal is refused here.
        let trust = ServerTrust(presentedChain: chain, peerName: try PeerName(dnsName: host), evaluationTime: time)
        let decision = await validator.evaluate(trust)
        return Report(
            trusted: decision.isTrusted, reasonCodes: decision.reasons.map(\.code), reasons: decision.reasons.map(\.description),
            notes: decision.notes, validatedPath: decision.validatedPath.map { "\($0.subject)" },
            pins: decision.validatedPath.map { SPKIPin(certificate: $0).headerForm }, policy: "\(decision.policy)",
            leaf: trust.leaf.map { "\($0.subject)" }, overridden: decision.evaluatorDecision.isTrusted != decision.isTrusted)
    }

    /// The lines that say what a chain is judged under, for the job's log.
    public static func describe(_ policy: ValidationPolicy) -> [String] {
        [
            "purpose: \(policy.purpose)",
            "peer name checked: \(policy.checksPeerName)",
            "validity checked: \(policy.checksValidity) (anchors: \(policy.checksAnchorValidity))",
            "serverAuth required in the leaf: \(policy.requiresExtendedKeyUsageInLeaf)",
            "CA leaves refused: \(policy.forbidsCAAsLeaf)",
            "certificate profile enforced: \(policy.enforcesCertificateProfile)",
            "minimum keys: RSA \(policy.minimumRSAKeyBits), EC \(policy.minimumECKeyBits) bits",
            "SHA-1 signatures: \(policy.allowsSHA1Signatures ? "allowed" : "refused")",
            "at most \(policy.maximumIntermediates) intermediates, \(policy.maximumSignatureChecks) signature checks, "
                + "\(policy.maximumNameConstraintChecks) name-constraint checks",
            "wildcards on public suffixes refused: \(policy.publicSuffixes != nil)",
            "pins: \(policy.pins.map(\.base64).sorted().joined(separator: ", "))",
            "required certificates: \(policy.requiredCertificates.count)",
            "revocation: \(policy.revocation)",
        ]
    }
}

extension ChainAudit {
    /// The chain in a PEM file (leaf first), or a message naming the file and the problem.
    public static func chain(pem: String, file: String) -> Result<[Certificate], AuditInputError> {
        do {
            return .success(try CertificateSource.certificates(pem: pem, source: file))
        } catch {
            return .failure(AuditInputError(error))
        }
    }

    /// The certificates in `bytes` (PEM or DER), e.g. an anchor fetched from a vault.
    public static func certificates(bytes: [UInt8], source: String) -> Result<[Certificate], AuditInputError> {
        do {
            return .success(try CertificateSource.certificates(bytes: bytes, source: source))
        } catch {
            return .failure(AuditInputError(error))
        }
    }

    /// Every certificate of the `.pem`, `.crt` and `.der` files in `directory`: the internal anchors.
    public static func anchors(inDirectory directory: String) throws(AuditInputError) -> TrustAnchors {
        do {
            return .only(try CertificateSource.certificates(inDirectory: directory))
        } catch {
            throw AuditInputError(error)
        }
    }

    /// The pin of a spare key that no certificate holds yet — the backup pin a deployment publishes before it needs
    /// it (RFC 7469 §4.3): the SHA-256 of its DER `SubjectPublicKeyInfo` (`openssl pkey -pubout -outform DER`).
    public static func backupPin(subjectPublicKeyInfoDER: [UInt8]) -> (pin: String, digestBytes: Int) {
        let pin = SPKIPin(subjectPublicKeyInfoDER: subjectPublicKeyInfoDER)
        return (pin.description, pin.digest.count)
    }
}

/// A chain or an anchor that could not be read: which input and what was wrong, never the input itself.
public struct AuditInputError: Error, CustomStringConvertible {
    /// The file or source named when reading.
    public let source: String?
    /// What was wrong with the input, for a report that groups failures.
    public enum Problem: Equatable, Sendable {
        /// The file or folder could not be read.
        case unreadable
        /// No certificate at all (an empty file, a key instead of a certificate).
        case empty
        /// PEM that is cut short or not Base64: a damaged copy-paste.
        case damagedPEM
        /// Well-formed PEM whose certificate cannot be parsed (or uses an algorithm refused here).
        case notACertificate
        /// Anything else.
        case other
    }

    /// Whether the input held no certificate at all (an empty file, a key instead of a certificate).
    public var isEmpty: Bool { problem == .empty }
    public let problem: Problem
    public let description: String

    init(_ error: CertificateLoadingError) {
        source = error.source
        problem =
            switch error.kind {
            case .unreadable: .unreadable
            case .noCertificates: .empty
            case .unterminatedPEMBlock, .invalidBase64: .damagedPEM
            case .malformedCertificate: .notACertificate
            default: .other
            }
        description = error.description
    }
}
