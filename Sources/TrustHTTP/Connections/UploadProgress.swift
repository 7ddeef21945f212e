import NIOCore

/// How far a streamed request body has got, and what it waits for: what a timeout's message says
/// of an upload that stopped part of the way.
struct UploadProgress: Sendable {
    enum Waiting: Sendable {
        /// Nothing streamed yet (the body waits for `100 Continue`, or was never started).
        case notStarted
        /// For the body's source (a file's read, an application's sequence) to yield its next chunk —
        /// or for Swift's cooperative pool to run the task that asks it.
        case source
        /// For the connection to take what it was handed (see ``UploadWindow``): the socket's send
        /// buffer, or — over HTTP/2 — the stream's or connection's flow-control window (RFC 9113
        /// §6.9), which only the server reopens.
        case connection
        /// The body has been sent in full.
        case nothing
    }

    /// Body bytes the connection has taken.
    private(set) var sent = 0
    /// Chunks the connection has taken.
    private(set) var chunks = 0
    private(set) var waiting = Waiting.notStarted
    private(set) var since = NIODeadline.now()

    mutating func askingSource() {
        waiting = .source
        since = .now()
    }

    mutating func waitingForConnection() {
        waiting = .connection
        since = .now()
    }

    mutating func written(_ count: Int) {
        sent += count
        chunks += 1
    }

    mutating func finished() {
        waiting = .nothing
        since = .now()
    }

    /// "the request body: 430000 of 1000003 bytes sent (43 chunks); waiting 19.2 s for the connection to take more (…)",
    /// or nil once the body was sent in full.
    func summary(declaredLength: Int?, now: NIODeadline = .now()) -> String? {
        let of = declaredLength.map { " of \($0)" } ?? ""
        let tenths = max(0, (now - since).nanoseconds + 50_000_000) / 100_000_000
        let waited = "\(tenths / 10).\(tenths % 10) s"
        let progress = "the request body: \(sent)\(of) bytes sent (\(chunks) chunks)"
        switch waiting {
        case .nothing: return nil
        case .notStarted: return "the request body: not started"
        case .source: return "\(progress); waiting \(waited) for the body's source to yield more"
        case .connection: return "\(progress); waiting \(waited) for the connection to take more (the socket's buffer, or the HTTP/2 flow-control window)"
        }
    }
}
