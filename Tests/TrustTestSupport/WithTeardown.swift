/// Runs `body`, then `teardown` — when `body` returns and when it throws — and waits for it: the
/// structured form of `defer { Task { await server.shutdown() } }`, which would let a test end (and
/// the next begin) while its servers and sessions are still closing, since `defer` cannot await.
package func withTeardown<T>(_ teardown: () async -> Void, body: () async throws -> T) async throws -> T {
    let result: T
    do {
        result = try await body()
    } catch {
        await teardown()
        throw error
    }
    await teardown()
    return result
}
