// `import TrustHTTP` is all an app needs: the engine's types (pins, evaluators, decisions, the
// configuration file) and the NIO glue's (client identities) come with it.
@_exported import Trust
@_exported import TrustNIO
