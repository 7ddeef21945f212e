import Foundation
import Testing

/// A PKCS#12 file of the lab's client identity (its chain and key), protected by `password`, made by openssl as
/// `client.p12` in `directory` (the caller's temporary folder, which the caller removes).
package func labClientPKCS12(password: String, in directory: String) async throws -> String {
    let path = directory + "/client.p12"
    let client = CLI.lab + "/clients/client"
    let (status, _, err) = try await run(
        ExternalTool.openssl.path,
        [
            "pkcs12", "-export", "-in", client + "/chain.pem", "-inkey", client + "/key.pem",
            "-out", path, "-passout", "pass:" + password,
        ])
    #expect(status == 0, "\(err)")
    return path
}
