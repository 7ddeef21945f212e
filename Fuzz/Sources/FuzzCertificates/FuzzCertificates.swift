import FuzzSupport
import X509

@testable import Trust

/// PEM and DER certificate loading (`CertificateSource`, `RawCertificate`).
///
/// Properties, besides "no crash, no leak":
/// - lenient and strict reading agree: strict succeeds exactly when every lenient entry is parsed,
///   and then returns those certificates; a failure is a `CertificateLoadingError` naming the source;
/// - a parsed certificate's DER parses back to the same certificate, and it has an SPKI pin;
/// - a certificate read only structurally (`RawCertificate`) always has a reason to be refused.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzCertificates_main`): libFuzzer's driver.
@_cdecl("FuzzCertificates_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    let source = "<fuzz>"

    var lenient: [CertificateEntry]?
    do {
        let entries = try CertificateSource.entries(bytes: bytes, source: source)
        require(!entries.isEmpty, "entries(bytes:) returned no entry without throwing")
        lenient = entries
    } catch {
        require(error.source == source, "the error names \(error.source), not the source")
        require(!error.description.isEmpty, "empty error description")
    }

    do {
        let strict = try CertificateSource.certificates(bytes: bytes, source: source)
        require(lenient?.map(\.certificate) == strict.map(Optional.some), "strict reading returned what lenient reading did not")
    } catch {
        require(error.source == source, "the error names \(error.source), not the source")
        if let lenient {
            require(lenient.contains { $0.certificate == nil }, "strict reading failed where every lenient entry parsed: \(error)")
        }
    }

    for entry in lenient ?? [] {
        _ = entry.spkiPin
        _ = entry.subject
        switch entry {
        case .parsed(let certificate):
            let again = try? Certificate(derEncoded: certificate.derBytes)
            require(again == certificate, "a parsed certificate's DER does not parse back to it")
            _ = CertificateSummary(certificate)
        case .unsupported(let raw, _):
            require(!raw.refusalReasons.isEmpty, "an unprocessable certificate without a refusal reason")
        }
    }

    // DER straight in, whatever the first byte.
    _ = try? CertificateSource.certificate(der: bytes, source: source)
    if let raw = RawCertificate(der: bytes) {
        require(!raw.refusalReasons.isEmpty, "a structurally read certificate without a refusal reason")
        _ = raw.publicKeyDescription.description
    }
    return 0
}
