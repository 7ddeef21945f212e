#if Vapor
    import NIOCore
    import TrustHTTP
    import Vapor

    /// The client registered when its session could not be made: every request fails with why.
    struct UnavailableTrustHTTPVaporClient: Client {
        let error: TrustHTTPClientError
        let eventLoop: any EventLoop

        func send(_ request: ClientRequest) -> EventLoopFuture<ClientResponse> {
            eventLoop.makeFailedFuture(error)
        }

        func delegating(to eventLoop: any EventLoop) -> any Client {
            UnavailableTrustHTTPVaporClient(error: error, eventLoop: eventLoop)
        }
    }
#endif
