import FuzzSupport

@testable import Trust

/// Host-name canonicalisation (`PeerName.canonicalDNSName`): the ASCII path, UTS #46 mapping, IDNA2008
/// validation, Punycode in both directions (an `xn--` label is decoded and checked).
///
/// Input: the bytes as UTF-8 (invalid sequences become U+FFFD, itself a disallowed character).
/// Properties, besides "no crash, no leak, bounded time":
/// - a canonical name is ASCII, at most 253 octets, of labels of 1 to 63 octets of `a-z 0-9 - _`;
/// - it is a fixed point: canonicalising it again gives itself (so each `xn--` label it holds is valid);
/// - a refusal has a description.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzHostNames_main`): libFuzzer's driver.
@_cdecl("FuzzHostNames_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

func test(_ bytes: [UInt8]) -> CInt {
    let name = String(decoding: bytes, as: UTF8.self)
    do {
        let canonical = try PeerName.canonicalDNSName(name)
        let octets = Array(canonical.utf8)
        require(!octets.isEmpty && octets.count <= 253, "a canonical name of \(octets.count) octets: \(canonical)")
        for label in octets.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            require((1...63).contains(label.count), "a label of \(label.count) octets in \(canonical)")
            let allowed = label.allSatisfy {
                ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
            }
            require(allowed, "a character outside a-z 0-9 - _ in \(canonical)")
        }
        let again = try? PeerName.canonicalDNSName(canonical)
        require(again == canonical, "not a fixed point: \(name) → \(canonical) → \(again ?? "refused")")
    } catch {
        require(!error.description.isEmpty, "a refusal without a description")
    }
    return 0
}
