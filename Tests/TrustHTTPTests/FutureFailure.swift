import NIOCore

/// Thrown by ``failure(of:)`` when the future succeeded where a test expected it to fail.
struct FutureSucceeded: Error {}

/// The error `future` failed with (``FutureSucceeded`` thrown if it succeeded).
func failure<T: Sendable>(of future: EventLoopFuture<T>) async throws -> any Error {
    do {
        _ = try await future.get()
    } catch {
        return error
    }
    throw FutureSucceeded()
}
