import Foundation
import FuzzSupport
import TrustNIO

/// The evaluation time, fixed for the run so that an identity's warnings do not change under it.
let now = Date()

/// PKCS#12 loading (`ClientIdentity(pkcs12:passphrase:)`).
///
/// Input: the first byte's low four bits give a passphrase length `n` (0…15); the next `n` bytes are
/// the passphrase (as UTF-8, repaired if need be), the rest is the file. Properties, besides "no
/// crash, no leak": NIOSSL traps on some PKCS#12 shapes, which `ClientIdentity` must check for
/// first, so any trap is a bug; a failure is a `ClientIdentityError` naming the source; an identity
/// that loads has a leaf and a key that belongs to it (BoringSSL checked the pair).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzPKCS12_main`): libFuzzer's driver.
@_cdecl("FuzzPKCS12_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    guard let first = bytes.first else { return 0 }
    let length = min(Int(first & 0x0F), bytes.count - 1)
    let passphrase = String(decoding: bytes[1..<(1 + length)], as: UTF8.self)
    let file = Array(bytes[(1 + length)...])
    do {
        // Decoded on this thread (no time limit; the iteration budget stays): with a time limit the decoding runs
        // on a dispatch worker, and LeakSanitizer's check at the end of an input, which cannot always see what a
        // worker still holds, reported the error stack of a refused file as leaked on a loaded machine. The worker
        // path is the unit tests' (ClientIdentityTests, PKCS12BudgetTests); this target fuzzes the decoding.
        let identity = try ClientIdentity(pkcs12: file, passphrase: passphrase, source: "<fuzz>", now: now, budget: PKCS12Budget(timeLimit: nil))
        require(!identity.certificateChain.isEmpty, "an identity without a certificate")
        _ = identity.configurationOverride
    } catch {
        require(error.source == "<fuzz>", "the error names \(error.source), not the source")
        require(!error.description.isEmpty, "empty error description")
    }
    return 0
}
