extension Duration {
    /// Calls `body` every `self` (after the first interval) until the calling task is cancelled: the loop of every
    /// polling `run()` here (a swift-service-lifecycle service's `run()` ends the same way).
    package func repeatUntilCancelled(_ body: () -> Void) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: self)
            } catch {
                return
            }
            body()
        }
    }
}
