import Trust

extension ConstructionCounter {
    /// TLS contexts (`NIOSSLContext`) a session made: counted where they are made (`ConnectionFactory`), not in the
    /// engine, which knows nothing of TLS.
    package static let tlsContexts = ConstructionCounter()
}
