import Crypto
import Foundation
import SwiftASN1
import Testing
import TrustTestSupport

/// A PKCS#12 file that hides a key derivation from anyone without the passphrase: openssl's file of the lab's
/// client identity (1 iteration per step) with one more content in front, an `encryptedData` (RFC 7292 §4.1,
/// PBES2 with 1 iteration, RFC 8018 §6.2) holding a shrouded key bag (RFC 7292 §4.2.2) whose own PBES2 asks for
/// `iterations`; its encrypted key is random bytes (the derivation runs before anything can tell). The MAC
/// (RFC 7292 §5 and appendix B: the PKCS#12 key derivation, SHA-256, 1 iteration) is computed again, so the file
/// is intact for the passphrase `secret`. Built here because no tool writes a key bag into an encrypted content.
enum HiddenKeyDerivationPKCS12 {
    static let passphrase = "secret"

    static func make(iterations: Int, in directory: String) async throws -> [UInt8] {
        let plain = directory + "/plain.p12"
        let client = CLI.lab + "/clients/client"
        let (status, _, err) = try await run(
            ExternalTool.openssl.path,
            [
                "pkcs12", "-export", "-in", client + "/cert.pem", "-inkey", client + "/key.pem", "-passout", "pass:" + passphrase,
                "-iter", "1", "-out", plain,
            ])
        #expect(status == 0, "\(err)")
        let pfx = try DER.parse(Array(try Data(contentsOf: URL(fileURLWithPath: plain))))
        guard case .constructed(let pfxItems) = pfx.content else { throw Failure.unexpected("PFX") }
        let items = Array(pfxItems)
        // PFX { version, authSafe ContentInfo { data, [0] { OCTET STRING AuthenticatedSafe } }, MacData }
        guard items.count == 3, case .constructed(let authSafeInfo) = items[1].content,
            let wrapper = Array(authSafeInfo).last, case .constructed(let wrapped) = wrapper.content,
            let octets = Array(wrapped).first, case .primitive(let authSafeBytes) = octets.content,
            case .constructed(let macItems) = items[2].content, Array(macItems).count >= 2,
            case .primitive(let macSalt) = Array(macItems)[1].content
        else { throw Failure.unexpected("openssl's PFX") }
        let authSafe = try DER.parse(authSafeBytes)
        guard case .constructed(let contents) = authSafe.content else { throw Failure.unexpected("AuthenticatedSafe") }

        // The hidden shrouded key bag: EncryptedPrivateKeyInfo { PBES2 (iterations), random "encrypted key" }.
        let keyBag = sequence(
            objectIdentifier([1, 2, 840, 113549, 1, 12, 10, 1, 2])
                + explicit0(
                    sequence(
                        pbes2(salt: random(8), iterations: iterations, iv: random(16)) + octetString(random(64)))))
        // Its encrypted content: SafeContents encrypted with AES-256-CBC under PBKDF2-HMAC-SHA256, 1 iteration.
        let salt = random(8)
        let iv = random(16)
        let key = HMAC<SHA256>.authenticationCode(for: salt + [0, 0, 0, 1], using: SymmetricKey(data: Array(passphrase.utf8)))
        let ciphertext = try await aes256CBC(sequence(keyBag), key: Array(key), iv: iv, in: directory)
        // ContentInfo { encryptedData, [0] EncryptedData { 0, EncryptedContentInfo { data, PBES2, [0] IMPLICIT ciphertext } } }
        let encryptedContent = sequence(
            objectIdentifier([1, 2, 840, 113549, 1, 7, 6])
                + explicit0(
                    sequence(
                        integer(0)
                            + sequence(objectIdentifier([1, 2, 840, 113549, 1, 7, 1]) + pbes2(salt: salt, iterations: 1, iv: iv) + tlv(0x80, ciphertext)))))
        // In front: BoringSSL reads the contents in order and refuses a second key, so this one is derived first.
        let newAuthSafe = sequence(encryptedContent + Array(contents).flatMap { Array($0.encodedBytes) })

        // MacData { DigestInfo { sha256, HMAC }, salt } with the MAC key of RFC 7292 appendix B (ID 3, 1 iteration).
        let bmpPassphrase: [UInt8] = passphrase.utf16.flatMap { unit -> [UInt8] in [UInt8(unit >> 8), UInt8(unit & 0xFF)] } + [0, 0]
        let saltBlock = stretch(Array(macSalt))
        let passBlock = stretch(bmpPassphrase)
        let macKey = Array(SHA256.hash(data: [UInt8](repeating: 3, count: 64) + saltBlock + passBlock))
        let mac = HMAC<SHA256>.authenticationCode(for: newAuthSafe, using: SymmetricKey(data: macKey))
        let macData = sequence(
            sequence(sequence(objectIdentifier([2, 16, 840, 1, 101, 3, 4, 2, 1]) + [0x05, 0x00]) + octetString(Array(mac)))
                + octetString(Array(macSalt)))
        return sequence(integer(3) + sequence(objectIdentifier([1, 2, 840, 113549, 1, 7, 1]) + explicit0(octetString(newAuthSafe))) + macData)
    }

    enum Failure: Error { case unexpected(String) }

    /// PBES2 { PBKDF2 { salt, iterations, HMAC-SHA256 }, AES-256-CBC { iv } } (RFC 8018 appendix A.2, A.4, B.2.5).
    static func pbes2(salt: [UInt8], iterations: Int, iv: [UInt8]) -> [UInt8] {
        sequence(
            objectIdentifier([1, 2, 840, 113549, 1, 5, 13])
                + sequence(
                    sequence(
                        objectIdentifier([1, 2, 840, 113549, 1, 5, 12])
                            + sequence(
                                octetString(salt) + integer(iterations) + sequence(objectIdentifier([1, 2, 840, 113549, 2, 9]) + [0x05, 0x00])))
                        + sequence(objectIdentifier([2, 16, 840, 1, 101, 3, 4, 1, 42]) + octetString(iv))))
    }

    /// `bytes` repeated to a multiple of 64 (SHA-256's block), as the PKCS#12 key derivation does with salt and password.
    static func stretch(_ bytes: [UInt8]) -> [UInt8] {
        let length = 64 * ((bytes.count + 63) / 64)
        return (0..<length).map { bytes[$0 % bytes.count] }
    }

    static func aes256CBC(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], in directory: String) async throws -> [UInt8] {
        let input = directory + "/safe-contents.der"
        let output = directory + "/safe-contents.enc"
        try Data(plaintext).write(to: URL(fileURLWithPath: input))
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        let (status, _, err) = try await run(ExternalTool.openssl.path, ["enc", "-aes-256-cbc", "-K", hex(key), "-iv", hex(iv), "-in", input, "-out", output])
        #expect(status == 0, "\(err)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    static func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    // DER (X.690 §8): tag, definite length, content.
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        var count = content.count
        if count < 0x80 { return [tag, UInt8(count)] + content }
        while count > 0 {
            length.insert(UInt8(count & 0xFF), at: 0)
            count >>= 8
        }
        return [tag, 0x80 | UInt8(length.count)] + length + content
    }

    static func sequence(_ content: [UInt8]) -> [UInt8] { tlv(0x30, content) }
    static func explicit0(_ content: [UInt8]) -> [UInt8] { tlv(0xA0, content) }
    static func octetString(_ content: [UInt8]) -> [UInt8] { tlv(0x04, content) }

    static func integer(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        repeat {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        } while rest > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    static func objectIdentifier(_ arcs: [UInt]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(arcs[0] * 40 + arcs[1])]
        for arc in arcs.dropFirst(2) {
            var encoded: [UInt8] = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                encoded.insert(UInt8(0x80 | (rest & 0x7F)), at: 0)
                rest >>= 7
            }
            bytes += encoded
        }
        return tlv(0x06, bytes)
    }
}
