import TrustNIO

extension ReloadingServerIdentity {
    /// What the server presents now and from which files, for its startup log and a health endpoint: the
    /// certificate in force, its generation, whether client certificates are required, and the files watched.
    public var summary: [String] {
        let inForce = current
        let clients = inForce.clientAuthentication.map { "client certificates \($0.requirement)" } ?? "no client certificates"
        return [
            "presenting \(inForce.certificate.subject) (generation \(inForce.generation)); \(clients)",
            "files: \(files.certificateChain), key \(files.key ?? "in the chain's file"), client CAs \(files.clientCAs ?? "none")",
        ]
    }
}
