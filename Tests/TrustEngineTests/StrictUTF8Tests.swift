import Foundation
import Testing

@testable import Trust

/// ``StrictUTF8``, the UTF-8 validation that builds at the declared Apple minimums, against the standard
/// library's `String(validating:as:)` (macOS 15 / iOS 18, always there on Linux): every ill-formed kind that
/// RFC 3629 §3 lists, then seeded random byte strings biased towards UTF-8's lead and continuation bytes.
@Suite struct StrictUTF8Tests {
    @Test func refusesEveryIllFormedKind() {
        let illFormed: [[UInt8]] = [
            [0x80],  // a continuation byte alone
            [0xC0, 0x80], [0xC1, 0xBF],  // overlong two-byte forms (C0, C1 never appear)
            [0xE0, 0x80, 0x80],  // overlong three-byte form
            [0xF0, 0x80, 0x80, 0x80],  // overlong four-byte form
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],  // UTF-16 surrogates D800, DFFF
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xFE],  // bytes that never appear
            [0xE2, 0x82],  // truncated at the end
            [0xE2, 0x82, 0x41],  // truncated before ASCII
            Array("ok".utf8) + [0xEF, 0xBF],  // a truncated U+FFFD
        ]
        for bytes in illFormed {
            #expect(StrictUTF8.string(bytes) == nil, "\(bytes.map { String($0, radix: 16) })")
            #expect(StrictUTF8.string(Data(bytes)) == nil)
        }
    }

    @Test func acceptsWellFormedTextUnchanged() {
        for text in ["", "plain ASCII", "é 名前 \u{10FFFF} 🎉", "\u{FFFD} is a real replacement character", "\0nul inside"] {
            #expect(StrictUTF8.string(Array(text.utf8)) == text)
            #expect(StrictUTF8.string(Data(text.utf8)) == text)
        }
    }

    @Test func agreesWithTheStandardLibrarysValidation() {
        let seed = ProcessInfo.processInfo.environment["TRUST_UTF8_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("StrictUTF8 against String(validating:as:): seed \(seed) (TRUST_UTF8_SEED to repeat)")
        var generator = SeededGenerator(seed: seed)
        let alphabet: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 9)
            let bytes = (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            #expect(StrictUTF8.string(bytes) == String(validating: bytes, as: UTF8.self), "seed \(seed): \(bytes)")
        }
    }
}
