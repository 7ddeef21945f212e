import Crypto
import NIOConcurrencyHelpers
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The server side of HTTP Basic and Digest for the lab servers — written apart from the client
/// in `TrustHTTP` (it shares no code with it), so the two check each other; curl and Python check
/// both. One per server: it remembers the nonces it issued and the nonce-counts it has seen.
///
/// Users: `alice` / `wonderland`, `Mufasa` / `Circle of Life`, `Jäsøn Doe` / `Secret, or not?`.
///
/// | route | asks for |
/// |---|---|
/// | `/basic` | Basic, realm `lab` |
/// | `/digest?algorithm=A&qop=Q` | Digest with algorithm A (default `MD5`; `MD5-sess`, `SHA-256`, `SHA-256-sess`, `SHA-512-256`, `SHA-512-256-sess`) and qop Q (`auth` default, `auth-int`, `auth,auth-int`, `none` for RFC 2069); options `userhash=1`, `stale=1` (each nonce serves one request, then `stale=true`), `nextnonce=1` (`Authentication-Info` with `nextnonce` and `rspauth`) |
/// | `/multi` | Basic, Digest MD5 and Digest SHA-256 in one field; says which one was used |
/// | `/shifting-realm` | a new realm on every 401 (never satisfied) |
///
/// Success: `200` with `authenticated USER via SCHEME`.
public final class LabHTTPAuthentication: Sendable {
    /// The users the lab accepts, with their passwords.
    public static let users: [String: String] = ["alice": "wonderland", "Mufasa": "Circle of Life", "J\u{E4}s\u{F8}n Doe": "Secret, or not?"]
    /// The realm of the lab's challenges (except on `/shifting-realm`).
    public static let realm = "lab"

    struct NonceState {
        var highestCount: UInt32 = 0
        var uses = 0
    }

    private let nonces = NIOLockedValueBox<[String: NonceState]>([:])
    private let realmCounter = NIOLockedValueBox(0)
    /// Nonces kept at most (the oldest are forgotten: a client using one gets `stale=true`).
    static let nonceCapacity = 4096

    /// A verifier that has issued no nonces yet.
    package init() {}

    /// What the handler should send.
    struct Verdict {
        var status: Int
        var headers: [(String, String)]
        var body: String
    }

    /// Decides `path` (one of the table's) for a request; nil if `path` is not an auth route.
    func handle(path: String, query: [String: String], method: String, uri: String, headers: [(String, String)], body: [UInt8]) -> Verdict? {
        let authorization = headers.first { $0.0.lowercased() == "authorization" }?.1
        switch path {
        case "/basic":
            if let user = authorization.flatMap(verifyBasic) { return ok(user, "Basic") }
            return challenge(["Basic realm=\"\(Self.realm)\", charset=\"UTF-8\""])
        case "/digest":
            guard let algorithm = Algorithm(query["algorithm"] ?? "MD5") else { return Verdict(status: 400, headers: [], body: "unknown algorithm\n") }
            let qop = query["qop"] ?? "auth"
            let options = DigestOptions(
                algorithm: algorithm, qop: qop == "none" ? nil : qop, userhash: query["userhash"] == "1",
                singleUse: query["stale"] == "1", nextNonce: query["nextnonce"] == "1")
            return digest(options, authorization: authorization, method: method, uri: uri, body: body)
        case "/multi":
            let md5 = DigestOptions(algorithm: Algorithm("MD5")!, qop: "auth")
            let sha256 = DigestOptions(algorithm: Algorithm("SHA-256")!, qop: "auth")
            if let authorization {
                if let user = verifyBasic(authorization) { return ok(user, "Basic") }
                for options in [sha256, md5] {
                    if case .success(let user, _) = verifyDigest(authorization, options: options, method: method, uri: uri, body: body) {
                        return ok(user, "Digest \(options.algorithm.name)")
                    }
                }
            }
            return challenge(["Basic realm=\"\(Self.realm)\", " + digestChallenge(md5, stale: false) + ", " + digestChallenge(sha256, stale: false)])
        case "/shifting-realm":
            let n = realmCounter.withLockedValue { counter -> Int in
                counter += 1
                return counter
            }
            return challenge(["Basic realm=\"realm-\(n)\""])
        default:
            return nil
        }
    }

    private func ok(_ user: String, _ scheme: String, extra: [(String, String)] = []) -> Verdict {
        Verdict(status: 200, headers: extra, body: "authenticated \(user) via \(scheme)\n")
    }

    private func challenge(_ values: [String]) -> Verdict {
        Verdict(status: 401, headers: values.map { ("WWW-Authenticate", $0) }, body: "authentication required\n")
    }

    // MARK: - Basic

    func verifyBasic(_ authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic", let data = Data(base64Encoded: String(parts[1])),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        let user = String(text[..<colon])
        let password = String(text[text.index(after: colon)...])
        return Self.users[user] == password ? user : nil
    }

    // MARK: - Digest

    struct Algorithm {
        var name: String
        var session: Bool

        init?(_ name: String) {
            let upper = name.uppercased()
            let base = upper.hasSuffix("-SESS") ? String(upper.dropLast(5)) : upper
            guard ["MD5", "SHA-256", "SHA-512-256"].contains(base) else { return nil }
            self.name = base + (upper.hasSuffix("-SESS") ? "-sess" : "")
            self.session = upper.hasSuffix("-SESS")
        }

        func hash(_ text: String) -> String { hash(Array(text.utf8)) }

        func hash(_ bytes: [UInt8]) -> String {
            let digest: [UInt8]
            if name.hasPrefix("MD5") {
                digest = Array(Insecure.MD5.hash(data: bytes))
            } else if name.hasPrefix("SHA-256") {
                digest = Array(SHA256.hash(data: bytes))
            } else {
                digest = SHA512t256.hash(bytes)
            }
            return digest.hexText()
        }
    }

    struct DigestOptions {
        var algorithm: Algorithm
        var qop: String?
        var userhash = false
        var singleUse = false
        var nextNonce = false
    }

    enum DigestCheck {
        case success(String, [(String, String)])
        case stale
        case failure
    }

    private func newNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        let nonce = Data((0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
        nonces.withLockedValue { nonces in
            if nonces.count >= Self.nonceCapacity, let victim = nonces.keys.first { nonces[victim] = nil }
            nonces[nonce] = NonceState()
        }
        return nonce
    }

    func digestChallenge(_ options: DigestOptions, stale: Bool, realm: String = LabHTTPAuthentication.realm) -> String {
        var fields = ["Digest realm=\"\(realm)\""]
        if let qop = options.qop { fields.append("qop=\"\(qop)\"") }
        fields.append("algorithm=\(options.algorithm.name)")
        fields.append("nonce=\"\(newNonce())\"")
        fields.append("opaque=\"lab-opaque\"")
        if options.userhash { fields.append("userhash=true, charset=UTF-8") }
        if stale { fields.append("stale=true") }
        return fields.joined(separator: ", ")
    }

    private func digest(_ options: DigestOptions, authorization: String?, method: String, uri: String, body: [UInt8]) -> Verdict {
        guard let authorization else { return challenge([digestChallenge(options, stale: false)]) }
        switch verifyDigest(authorization, options: options, method: method, uri: uri, body: body) {
        case .success(let user, let extra):
            return ok(user, "Digest \(options.algorithm.name)", extra: extra)
        case .stale:
            return challenge([digestChallenge(options, stale: true)])
        case .failure:
            return challenge([digestChallenge(options, stale: false)])
        }
    }

    /// Checks an `Authorization: Digest …` field against `options` and the nonces issued.
    func verifyDigest(
        _ authorization: String, options: DigestOptions, method: String, uri: String, body: [UInt8], realm expectedRealm: String = LabHTTPAuthentication.realm
    ) -> DigestCheck {
        guard authorization.lowercased().hasPrefix("digest "), let fields = Self.parameters(String(authorization.dropFirst(7))) else { return .failure }
        let algorithm = options.algorithm
        guard let realm = fields["realm"], realm == expectedRealm, let nonce = fields["nonce"], let response = fields["response"],
            fields["uri"] == uri, Algorithm(fields["algorithm"] ?? "MD5")?.name == algorithm.name, fields["opaque"] == "lab-opaque"
        else { return .failure }
        // The user: plain, RFC 8187 extended, or hashed.
        var user: String?
        if fields["userhash"]?.lowercased() == "true" {
            user = Self.users.keys.first { algorithm.hash("\($0):\(realm)") == fields["username"] }
        } else if let extended = fields["username*"], extended.lowercased().hasPrefix("utf-8''") {
            user = String(extended.dropFirst(7)).percentDecoded
        } else {
            user = fields["username"]
        }
        if options.userhash && fields["userhash"]?.lowercased() != "true" { return .failure }
        guard let user, let password = Self.users[user] else { return .failure }
        // The nonce: ours, and the count going up (no replay).
        let qop = fields["qop"]
        let count = fields["nc"].flatMap { UInt32($0, radix: 16) } ?? 0
        let nonceCheck: DigestCheck? = nonces.withLockedValue { nonces in
            guard var state = nonces[nonce] else { return .stale }
            if options.singleUse && state.uses >= 1 { return .stale }
            if qop != nil {
                guard count > state.highestCount else { return .failure }
                state.highestCount = count
            }
            state.uses += 1
            nonces[nonce] = state
            return nil
        }
        if let nonceCheck { return nonceCheck }
        let cnonce = fields["cnonce"] ?? ""
        var a1 = algorithm.hash("\(user):\(realm):\(password)")
        if algorithm.session { a1 = algorithm.hash("\(a1):\(nonce):\(cnonce)") }
        func a2(_ method: String) -> String {
            qop == "auth-int" ? algorithm.hash("\(method):\(uri):\(algorithm.hash(body))") : algorithm.hash("\(method):\(uri)")
        }
        func a2ForRspauth() -> String {
            qop == "auth-int" ? algorithm.hash(":\(uri):\(algorithm.hash([UInt8]()))") : algorithm.hash(":\(uri)")
        }
        let expected: String
        if let qop {
            guard let offered = options.qop, offered.split(separator: ",").map({ $0.trimmingASCIIBlanks() }).contains(qop),
                let nc = fields["nc"], !cnonce.isEmpty
            else { return .failure }
            expected = algorithm.hash("\(a1):\(nonce):\(nc):\(cnonce):\(qop):\(a2(method))")
        } else {
            guard options.qop == nil else { return .failure }
            expected = algorithm.hash("\(a1):\(nonce):\(a2(method))")
        }
        guard expected == response.lowercased() else { return .failure }
        var extra: [(String, String)] = []
        if options.nextNonce, let qop, let nc = fields["nc"] {
            let rspauth = algorithm.hash("\(a1):\(nonce):\(nc):\(cnonce):\(qop):\(a2ForRspauth())")
            extra.append(("Authentication-Info", "nextnonce=\"\(newNonce())\", qop=\(qop), rspauth=\"\(rspauth)\", cnonce=\"\(cnonce)\", nc=\(nc)"))
        }
        return .success(user, extra)
    }

    /// `name=value, name="quoted"` → lowercased names to values; nil if malformed.
    static func parameters(_ text: String) -> [String: String]? {
        var result: [String: String] = [:]
        var rest = Substring(text)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if rest.isEmpty { return result }
            guard let equals = rest.firstIndex(of: "=") else { return nil }
            let name = rest[..<equals].trimmingASCIIBlanks().lowercased()
            rest = rest[rest.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var closed = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if character == "\\", let next = rest.first {
                        value.append(next)
                        rest = rest.dropFirst()
                    } else if character == "\"" {
                        closed = true
                        break
                    } else {
                        value.append(character)
                    }
                }
                guard closed else { return nil }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingASCIIBlanks()
                rest = rest[end...]
            }
            guard result[name] == nil else { return nil }
            result[name] = value
        }
    }
}
