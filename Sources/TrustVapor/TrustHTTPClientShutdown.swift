#if Vapor
    import Dispatch
    import TrustHTTP
    import Vapor

    /// Shuts a ``TrustHTTP/TrustHTTPClient`` down with the application (`app.asyncShutdown()`, or the blocking
    /// `app.shutdown()`): its connections close, and requests still in flight fail.
    struct TrustHTTPClientShutdown: LifecycleHandler {
        let session: TrustHTTPClient

        func shutdownAsync(_ application: Application) async {
            await session.shutdown()
        }

        /// The blocking path (never called on an event loop or in an async context: Vapor's `shutdown()` is
        /// `noasync`): waits for the session's shutdown, which runs in a task of its own.
        func shutdown(_ application: Application) {
            let done = DispatchSemaphore(value: 0)
            let session = self.session
            Task {
                await session.shutdown()
                done.signal()
            }
            done.wait()
        }
    }
#endif
