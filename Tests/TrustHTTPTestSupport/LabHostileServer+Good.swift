import TrustLab
import TrustTestSupport

extension LabHostileServer {
    /// A hostile server presenting the lab's `good` certificate (trusted under the lab's roots as
    /// `good.lab.test`), so that what a test sees is its behaviour, never a trust failure.
    package static func startWithGoodCertificate(
        _ behaviour: Behaviour, trickleInterval: Duration = .milliseconds(200)
    ) async throws -> LabHostileServer {
        guard let good = Lab.pki.servers["good"] else { throw LabError.cannotWrite("good", "no such lab server") }
        return try await LabHostileServer.start(
            behaviour, host: "good.lab.test", chain: Lab.chain("good"), privateKey: good.privateKey, trickleInterval: trickleInterval)
    }
}
