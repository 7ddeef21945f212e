// A Vapor 4 server that requires client certificates through swift-trust's `ClientAuthentication`.
//
// Vapor takes a verification callback that returns metadata (`customCertificateVerifyCallbackWithMetadata`);
// `ClientAuthentication.verificationCallback()` is one, and returns the validated path, so Vapor's
// `req.peerCertificateChain` holds the chain swift-trust validated (client leaf to anchor).
import NIOSSL
import TrustNIO
import Vapor

public enum VaporMutualTLSServer {
    /// Configures `app`: TLS with `tlsConfiguration` (the server's chain and key), client certificates as
    /// `clientAuthentication` says, and `GET /whoami` answering with the verified client.
    public static func configure(_ app: Application, tlsConfiguration: TLSConfiguration, clientAuthentication: ClientAuthentication) {
        var tls = tlsConfiguration
        clientAuthentication.apply(to: &tls)
        app.http.server.configuration.tlsConfiguration = tls
        app.http.server.configuration.customCertificateVerifyCallbackWithMetadata = clientAuthentication.verificationCallback()
        app.get("whoami") { request -> String in
            guard let chain = request.peerCertificateChain, let client = VerifiedClient(validatedPath: Array(chain)) else {
                return "anonymous\n"
            }
            return "client: \(client.subject) \(client.pin)\nvalidated chain: \(client.chain.count) certificates\n"
        }
    }
}
