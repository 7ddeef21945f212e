// `import TrustHTTP` brings what configuring a client's trust needs — the evaluators, pins, anchors and policies,
// the decision and its reasons, the configuration file, client identities — and no more: a file that imports
// TrustHTTP beside a framework sees these names, not every declaration of the engine (`import Trust`) or of the NIO
// glue (`import TrustNIO`), which a program that needs more imports itself.
@_exported import class Trust.CRLCache
@_exported import enum Trust.CertificateSource
@_exported import struct Trust.CertificateTransparencyPolicy
@_exported import struct Trust.ConfiguredTrustEvaluator
@_exported import struct Trust.DefaultTrustEvaluator
@_exported import struct Trust.EvaluationCacheSettings
@_exported import struct Trust.HostPattern
@_exported import protocol Trust.ImmediateTrustEvaluator
@_exported import class Trust.OCSPCache
@_exported import struct Trust.OCSPCertificateID
@_exported import struct Trust.PathValidator
@_exported import enum Trust.PeerName
@_exported import struct Trust.PerHostTrustEvaluator
@_exported import struct Trust.PinFailureReport
@_exported import struct Trust.PinnedCertificatesTrustEvaluator
@_exported import enum Trust.PinningMode
@_exported import struct Trust.PublicKeysTrustEvaluator
@_exported import enum Trust.ReloadEvent
@_exported import struct Trust.ReloadObservation
@_exported import enum Trust.ReloadOutcome
@_exported import protocol Trust.Reloading
@_exported import class Trust.ReloadingTrustConfiguration
@_exported import struct Trust.RevocationPolicy
@_exported import struct Trust.SPKIPin
@_exported import struct Trust.SecurityPolicy
@_exported import struct Trust.ServerTrust
@_exported import enum Trust.TLSMinimum
@_exported import struct Trust.TrustAnchors
@_exported import struct Trust.TrustConfiguration
@_exported import struct Trust.TrustConfigurationPublicKey
@_exported import struct Trust.TrustConfigurationRejection
@_exported import struct Trust.TrustDecision
@_exported import class Trust.TrustEvaluationCache
@_exported import protocol Trust.TrustEvaluator
@_exported import struct Trust.TrustFailureReason
@_exported import struct Trust.ValidationPolicy
@_exported import struct TrustNIO.ClientIdentity
@_exported import class TrustNIO.ReloadingClientIdentity
