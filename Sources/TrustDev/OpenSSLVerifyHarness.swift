import Foundation

/// A baseline for `trust-dev bench`: OpenSSL's own path validation (`X509_verify_cert`) of the same
/// chain, host name and anchor, timed in a small C program built against the system's libcrypto.
///
/// The program is compiled on first use into a temporary folder with the system C compiler
/// (`cc … -lcrypto`; on Debian the headers come from `libssl-dev`) and run as a child process,
/// so OpenSSL never shares this process with NIOSSL's BoringSSL. It is the same work our
/// uncached evaluation does: the certificates are parsed once, before timing (our evaluator keeps
/// parsed certificates too); each iteration builds a fresh `X509_STORE_CTX`, builds and verifies
/// the path (every signature, validity, basic constraints, key usage, purpose `sslserver`) and
/// matches the host name (`X509_VERIFY_PARAM_set1_host`). It prints the median nanoseconds of one
/// verification.
struct OpenSSLVerifyHarness {
    /// Why the harness could not be built or run, printed in place of the figure.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    let executable: String
    private let folder: URL

    /// Compiles the harness; throws ``Unavailable`` when there is no compiler or no OpenSSL headers.
    init() throws {
        let compilers = ["/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang", "/usr/local/bin/cc"]
        guard let compiler = compilers.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw Unavailable(description: "no C compiler")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("trust-openssl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let source = folder.appendingPathComponent("verify.c")
        executable = folder.appendingPathComponent("verify").path
        try Data(Self.source.utf8).write(to: source)
        let build = Process()
        build.executableURL = URL(fileURLWithPath: compiler)
        build.arguments = ["-O2", "-o", executable, source.path, "-lcrypto"]
        let errors = Pipe()
        build.standardOutput = FileHandle.nullDevice
        build.standardError = errors
        try build.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        build.waitUntilExit()
        guard build.terminationStatus == 0 else {
            try? FileManager.default.removeItem(at: folder)
            let firstError = String(decoding: message, as: UTF8.self).split(separator: "\n").first { $0.contains("error") }
            throw Unavailable(description: "could not build against libcrypto (libssl-dev installed?): \(firstError ?? "")")
        }
    }

    /// Removes the compiled program.
    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    /// The median time of one `X509_verify_cert` of `chainFile` (leaf first) to `rootFile`.
    func median(iterations: Int, rootFile: String, chainFile: String, host: String) throws -> Duration {
        let (status, text) = try BenchCommand.output(of: [executable, String(iterations), rootFile, chainFile, host])
        guard status == 0, let nanoseconds = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Unavailable(description: "OpenSSL did not verify the chain (exit \(status))")
        }
        return .nanoseconds(nanoseconds)
    }

    /// The C program. Arguments: iterations, root PEM file, chain PEM file (leaf first), host.
    static let source = #"""
        #include <openssl/pem.h>
        #include <openssl/x509.h>
        #include <openssl/x509_vfy.h>
        #include <openssl/x509v3.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <time.h>

        static long long now_ns(void) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
        }

        static int compare(const void *a, const void *b) {
            long long x = *(const long long *)a, y = *(const long long *)b;
            return x < y ? -1 : x > y;
        }

        static int verify_once(X509_STORE *store, X509 *leaf, STACK_OF(X509) *untrusted, const char *host) {
            X509_STORE_CTX *ctx = X509_STORE_CTX_new();
            if (ctx == NULL || !X509_STORE_CTX_init(ctx, store, leaf, untrusted)) return 0;
            X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
            X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
            int ok = X509_verify_cert(ctx) == 1;
            X509_STORE_CTX_free(ctx);
            return ok;
        }

        int main(int argc, char **argv) {
            if (argc != 5) return 2;
            int iterations = atoi(argv[1]);
            if (iterations < 1) return 2;
            FILE *rootFile = fopen(argv[2], "r"), *chainFile = fopen(argv[3], "r");
            if (rootFile == NULL || chainFile == NULL) return 2;
            X509_STORE *store = X509_STORE_new();
            X509 *root = PEM_read_X509(rootFile, NULL, NULL, NULL);
            if (root == NULL || !X509_STORE_add_cert(store, root)) return 3;
            X509 *leaf = PEM_read_X509(chainFile, NULL, NULL, NULL);
            if (leaf == NULL) return 3;
            STACK_OF(X509) *untrusted = sk_X509_new_null();
            X509 *next;
            while ((next = PEM_read_X509(chainFile, NULL, NULL, NULL)) != NULL) sk_X509_push(untrusted, next);
            for (int i = 0; i < iterations / 10 + 3; i++) {
                if (!verify_once(store, leaf, untrusted, argv[4])) return 4;
            }
            long long *samples = malloc(sizeof(long long) * (size_t)iterations);
            if (samples == NULL) return 5;
            for (int i = 0; i < iterations; i++) {
                long long start = now_ns();
                if (!verify_once(store, leaf, untrusted, argv[4])) return 4;
                samples[i] = now_ns() - start;
            }
            qsort(samples, (size_t)iterations, sizeof(long long), compare);
            printf("%lld\n", samples[iterations / 2]);
            return 0;
        }
        """#
}
