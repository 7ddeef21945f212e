import Foundation
import Trust
import TrustLab
import X509

/// One lab PKI per test process (key generation is the slow part).
enum Lab {
    static let pki: LabPKI = {
        do { return try LabPKI.make() } catch { fatalError("cannot make the lab PKI: \(error)") }
    }()

    static var anchors: TrustAnchors { .only(pki.trustedRoots) }

    static func chain(_ server: String) -> [Certificate] { pki.presentedChains[server] ?? [] }

    static func trust(_ server: String, host: String? = nil, at time: Date = Date()) -> ServerTrust {
        let name = host ?? LabPKI.hostName(for: server)
        do {
            return try ServerTrust(presentedChain: chain(server), host: name, evaluationTime: time)
        } catch {
            fatalError("bad host \(name)")
        }
    }

    static func evaluate(_ server: String, host: String? = nil, policy: ValidationPolicy = .webPKI, anchors: TrustAnchors = Lab.anchors) async -> TrustDecision {
        await PathValidator(anchors: anchors, policy: policy).evaluate(trust(server, host: host))
    }
}

extension TrustDecision {
    var codes: [String] { reasons.map(\.code) }
}

/// Runs a command and returns (exit status, stdout, stderr).
func run(_ executable: String, _ arguments: [String], stdin: String? = nil) throws -> (Int32, String, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, stdout, stderr)
}

func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "swift-trust-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
