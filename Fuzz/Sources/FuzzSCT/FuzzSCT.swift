import Foundation
import FuzzSupport

@testable import Trust

/// Certificate Transparency inputs: an SCT list (`SignedCertificateTimestamp.parseList`, the TLS encoding embedded in
/// certificates) or, when the first byte is `{`, a CT log list (`CTLogList(json:)`, Chrome's v3 schema).
///
/// Properties, besides "no crash, no leak": a failure is a typed error with a detail; every parsed SCT encodes to
/// bytes that parse back to itself; a parsed log list's every log has a 32-byte ID and a key (the parser checks that
/// one hashes to the other), and is found by its ID.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzSCT_main`): libFuzzer's driver.
@_cdecl("FuzzSCT_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    if bytes.first == UInt8(ascii: "{") {
        do {
            let list = try CTLogList(json: String(decoding: bytes, as: UTF8.self))
            for log in list.logs {
                require(log.logID.count == 32 && !log.key.isEmpty, "a log without a 32-byte ID and a key")
                require(list.log(id: log.logID) != nil, "a listed log not found by its ID")
            }
        } catch {
            require(!error.detail.isEmpty, "a log list error without a detail")
        }
        return 0
    }
    do {
        let scts = try SignedCertificateTimestamp.parseList(bytes)
        for sct in scts {
            let item = sct.serialized()
            let again = try SignedCertificateTimestamp.parseList(
                [UInt8(item.count + 2 >> 8), UInt8((item.count + 2) & 0xFF), UInt8(item.count >> 8), UInt8(item.count & 0xFF)] + item)
            require(again == [sct], "an SCT does not encode to itself")
            _ = sct.logIDBase64
        }
    } catch {
        require(!error.detail.isEmpty, "an SCT list error without a detail")
    }
    return 0
}
