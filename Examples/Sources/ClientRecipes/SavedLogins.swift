// A command-line tool's "remember me": logins kept in a `CredentialStore` file (mode 0600, replaced atomically), so
// the next run answers the server's 401 without asking, as URLCredentialStorage does for an Apple app.
import Foundation
import TrustHTTP

/// The logins a tool remembers between runs, by protection space.
public struct SavedLogins: Sendable {
    /// The store, whose permanent credentials are written to its file.
    public let store: CredentialStore

    /// The logins kept in `file`, or in the user's default file (`~/.config/swift-trust/credentials.json`).
    public init(file: URL? = nil) throws {
        if let file {
            store = try CredentialStore(fileURL: file)
        } else {
            store = try CredentialStore.persistent()
        }
    }

    /// Logins for this run only (a test, or a tool run with `--no-save`): nothing is written.
    public static func inMemory() -> SavedLogins { SavedLogins(store: CredentialStore()) }

    private init(store: CredentialStore) { self.store = store }

    /// The file the logins are kept in.
    public var file: URL? { store.fileURL ?? CredentialStore.defaultFileURL }

    /// The protection space of `url`'s server for `realm` and `method`.
    public static func space(for url: URL, realm: String, method: AuthenticationMethod = .httpDigest) -> ProtectionSpace? {
        guard let host = url.host, let scheme = url.scheme else { return nil }
        return ProtectionSpace(host: host, port: url.port ?? (scheme == "https" ? 443 : 80), scheme: scheme, realm: realm, authenticationMethod: method)
    }

    /// Remembers `user`'s password for `space` (the default login there unless `asDefault` is false).
    public func remember(user: String, password: String, for space: ProtectionSpace, asDefault: Bool = true) throws {
        try store.set(Credential(user: user, password: password, persistence: .permanent), for: space, asDefault: asDefault)
    }

    /// The login the next request to `space` will use.
    public func login(for space: ProtectionSpace) -> Credential? {
        store.defaultCredential(for: space)
    }

    /// The users remembered for `space`.
    public func users(for space: ProtectionSpace) -> [String] {
        store.credentials(for: space).filter { $0.value.isUser && $0.value.persistence == .permanent }.keys.sorted()
    }

    /// `host realm` lines for `trust`-like `logins list` output: spaces and users, never a password.
    public func listing() -> [String] {
        store.protectionSpaces.map { space in
            "\(space.scheme)://\(space.host):\(space.port) realm=\(space.realm ?? "-")\(space.isProxy ? " (proxy)" : ""): \(users(for: space).joined(separator: ", "))"
        }.sorted()
    }

    /// Forgets `user`'s login for `space`.
    public func forget(user: String, for space: ProtectionSpace) throws {
        try store.remove(user: user, for: space)
    }

    /// Forgets every login.
    public func forgetAll() throws {
        try store.removeAll()
    }

    /// A client configuration whose requests answer 401s from these logins.
    public func configuration(_ base: TrustHTTPClientConfiguration = TrustHTTPClientConfiguration()) -> TrustHTTPClientConfiguration {
        var configuration = base
        configuration.credentialStore = store
        return configuration
    }
}

extension SavedLogins {
    /// A failure to read or write the logins' file, for the tool's message (it names the file, never a password).
    public static func message(for error: any Error) -> String {
        if let failure = error as? CredentialStoreError { return "cannot use the saved logins: \(failure)" }
        return "cannot use the saved logins: \(error)"
    }
}
