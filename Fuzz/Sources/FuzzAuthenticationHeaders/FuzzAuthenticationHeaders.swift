import FuzzSupport

// The property checker is package-internal to swift-trust; run.sh builds with -enable-testing.
@testable import TrustHTTP

/// `WWW-Authenticate` / `Authentication-Info` parsing, Digest challenge checks and answers.
///
/// Input: field values separated by line feeds (one header sent in several fields), decoded as
/// UTF-8 with invalid bytes repaired. Properties: ``AuthenticationHeaderProperties`` (bounds,
/// print-and-reparse round trip, several fields parse as each one in turn, a clean Digest answer
/// to every accepted Digest challenge) — the same checks as `trust-dev fuzz auth-headers`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzAuthenticationHeaders_main`): libFuzzer's driver.
@_cdecl("FuzzAuthenticationHeaders_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    let text = String(decoding: bytes, as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let outcome = AuthenticationHeaderProperties.check(fields)
    require(outcome.violations.isEmpty, outcome.violations.joined(separator: "\n"))
    return 0
}
