import ArgumentParser

// The options of `trust get`, in the groups `trust get --help` shows them in (curl's names and meanings).

/// `trust get --help`: Request.
struct GetRequestOptions: ParsableArguments {
    @Option(name: [.customShort("X"), .customLong("request")], help: "The request method.")
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value'; repeatable.")
    var header: [String] = []

    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: "Request body (sends POST unless -X says otherwise); @FILE reads a file without its CR and LF (@-: standard input); repeated: joined with '&'.")
    var data: [String] = []

    @Option(name: .customLong("data-binary"), help: "Request body as is; @FILE reads a file unchanged; repeatable (joined with '&').")
    var dataBinary: [String] = []

    @Option(name: .customLong("data-raw"), help: "Request body as is, '@' not special; repeatable (joined with '&').")
    var dataRaw: [String] = []

    @Option(
        name: .customLong("json"),
        help:
            "A JSON request body, as curl's --json: POST, with Content-Type and Accept application/json unless -H sets them; @FILE reads a file unchanged (@-: standard input); repeated: concatenated."
    )
    var json: [String] = []

    @Option(
        name: [.customShort("T"), .customLong("upload-file")],
        help:
            "Send FILE as the body of a PUT (unless -X says otherwise), read as it is sent; '-' reads standard input (sent chunked). A URL ending in '/' gets the file's name appended. A body over 1 MiB, or of unknown size, asks for '100 Continue' first, over HTTP/2 too (curl: HTTP/1.1 only); -H 'Expect:' turns that off."
    )
    var uploadFile: String?

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: "The User-Agent header.")
    var userAgent: String?

    @Option(name: [.customShort("e"), .customLong("referer")], help: "The Referer header.")
    var referer: String?

    @Flag(
        name: .long,
        help:
            "Ask for a compressed response (Accept-Encoding: deflate, gzip) and write it decompressed; a body inflating more than 100 times its compressed size (a zip bomb) or invalid gzip/deflate data ends with exit 61."
    )
    var compressed = false

    @Flag(name: .customLong("http1.1"), help: "HTTP/1.1 only.")
    var http11 = false

    @Flag(name: .customLong("http2"), help: "HTTP/2 when the server offers it, else HTTP/1.1 (the default).")
    var http2 = false

    @Option(name: .long, help: "The most redirects to follow (0: none).")
    var maxRedirs: Int = 10

    @Flag(name: [.customShort("L"), .customLong("location")], help: "Accepted for curl compatibility; redirects are followed by default.")
    var location = false
}

/// `trust get --help`: Output.
struct GetOutputOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Write the body to FILE instead of standard output ('-': standard output).")
    var output: String?

    @Flag(
        name: [.customShort("O"), .customLong("remote-name")],
        help: "Write the body to a file in the current folder named as the URL's last path segment (curl's -O).")
    var remoteName = false

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Write the response head (status line and header fields) before the body.")
    var include = false

    @Flag(name: [.customShort("I"), .customLong("head")], help: "Send HEAD and write the response head.")
    var headOnly = false

    @Option(
        name: [.customShort("w"), .customLong("write-out")],
        help:
            "After the transfer, write FORMAT: %{http_code}, %{url_effective}, %{num_redirects}, %{remote_ip}, %{time_total}, %{size_download}, %{size_upload}, %{ssl_verify_result}, %{stderr}, \\n… (curl's; @FILE reads it)."
    )
    var writeOut: String?

    @Flag(name: [.customShort("f"), .customLong("fail")], help: "Exit 22 without printing the body when the HTTP status is 400 or more.")
    var fail = false

    @Option(name: .long, help: "The largest body accepted, in bytes: exit 63 when it is larger (announced or received).")
    var maxFilesize: Int64?

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No progress meter, no error messages.")
    var silent = false

    @Flag(name: [.customShort("S"), .customLong("show-error")], help: "With -s, still show error messages.")
    var showError = false

    @Flag(name: .long, help: "No progress meter (error messages still shown).")
    var noProgressMeter = false

    @Flag(
        name: [.customShort("v"), .customLong("verbose")],
        help:
            "Show the request and response headers (secrets as ***), TLS version, ALPN, the presented chain with pins, every challenge and its disposition (on stderr)."
    )
    var verbose = false
}

/// `trust get --help`: Server trust.
struct GetTrustOptions: ParsableArguments {
    @Option(name: .long, help: "Anchor certificates (PEM/DER file or folder) added to the system roots; repeatable.")
    var cacert: [String] = []

    @OptionGroup
    var trustOptions: TrustOptions

    @Flag(
        name: [.customShort("k"), .customLong("insecure")],
        help: "Proceed even when the server is not trusted; the full trust verdict is printed as a warning (--pin is still enforced, as curl's --pinnedpubkey)."
    )
    var insecure = false

    @Option(name: .long, help: "A trust configuration file (per-host pins, anchors, report-only…); replaces --cacert/--pin/--mode.")
    var config: String?

    @Flag(name: .customLong("no-aia"), help: ArgumentHelp(stringLiteral: MissingIntermediates.noAIAHelp))
    var noAIA = false

    func validate() throws {
        if trustOptions.spiffeOptions.isUsed && (config != nil || !cacert.isEmpty) {
            throw ValidationError("--spiffe-bundle replaces --cacert and --config")
        }
    }
}

/// `trust get --help`: Client certificate.
struct GetClientCertificateOptions: ParsableArguments {
    @Option(
        name: [.customShort("E"), .customLong("cert")],
        help: "Client certificate: a PKCS#12 file (.p12/.pfx), or a PEM chain (with --key, or the key in the same file); curl's FILE:PASSWORD form is accepted."
    )
    var cert: String?

    @Option(
        name: [.customLong("cert-password"), .customLong("pass")],
        help:
            "The passphrase of the --cert PKCS#12 file or of an encrypted PEM key (--pass as in curl). As OpenSSL's -passin: env:NAME reads the environment variable NAME, file:PATH the first line of PATH, pass:TEXT is TEXT; any other value is the passphrase itself. Exit 58 when it cannot be read."
    )
    var certPassword: String?

    @Option(name: .long, help: "The --cert file's type: P12 or PEM (default: from the name and content, as curl).")
    var certType: String?

    @Option(name: .long, help: "The private key (PEM: PKCS#8, SEC1 or PKCS#1) for a PEM --cert.")
    var key: String?
}

/// `trust get --help`: HTTP authentication and proxies.
struct GetAuthenticationOptions: ParsableArguments {
    @Option(
        name: [.customShort("u"), .customLong("user")],
        help:
            "USER:PASSWORD for HTTP authentication (Basic or Digest); USER alone prompts for the password (no echo; from /dev/tty, else standard input), as curl. The password is blanked from the process's argument list once read."
    )
    var user: String?

    @Flag(
        name: [.customShort("n"), .customLong("netrc")],
        help:
            "Take the user and password for the URL's host from ~/.netrc (curl 7.88's rules; a password in the URL is ignored, -u wins; a user name in the URL picks the entry with that login; an entry with a password and no login is sent with an empty user name, or the URL's; a default entry only for a host no machine entry names; a missing file is no error). Used for that origin only, never after a redirect to another."
    )
    var netrc = false

    @Flag(name: .customLong("netrc-optional"), help: "As --netrc, but a password in the URL wins over the file.")
    var netrcOptional = false

    @Option(
        name: .customLong("netrc-file"),
        help: "As --netrc, with FILE instead of ~/.netrc (with --netrc-optional, its rules). A netrc file other users can read or write is used with a warning."
    )
    var netrcFile: String?

    @Flag(name: .long, help: "Basic only, sent before any challenge (curl's --basic).")
    var basic = false

    @Flag(name: .long, help: "Digest only.")
    var digest = false

    @Flag(name: .long, help: "The strongest scheme the server offers (the default).")
    var anyAuth = false

    @Flag(name: .long, help: "Allow Basic credentials over plain http (clear text).")
    var allowCleartextAuth = false

    @Option(
        name: [.customShort("x"), .customLong("proxy")],
        help:
            "An HTTP proxy, http://[USER:PASSWORD@]HOST[:PORT] (https goes through CONNECT); '' for none. Without it, http_proxy (never HTTP_PROXY) / https_proxy / all_proxy / no_proxy from the environment apply, as in curl. socks and https proxies are refused (exit 97), never bypassed."
    )
    var proxy: String?

    @Option(
        name: [.customShort("U"), .customLong("proxy-user")],
        help: "USER:PASSWORD for the proxy (Basic or Digest, when it asks); USER alone prompts for the password, as -u.")
    var proxyUser: String?

    @Option(name: .long, help: "Hosts reached without the proxy, comma-separated ('*': all; CIDR ranges such as 10.0.0.0/8), as curl's --noproxy.")
    var noproxy: String?
}

/// `trust get --help`: Connection and time limits.
struct GetConnectionOptions: ParsableArguments {
    @Option(name: .long, help: "Connect HOST:PORT to ADDRESS instead (curl syntax HOST:PORT:ADDRESS); repeatable.")
    var resolve: [String] = []

    @Option(name: .long, help: "Seconds allowed to connect (TCP + TLS).")
    var connectTimeout: Double = 10

    @Option(name: .customLong("expect100-timeout"), help: "Seconds a body waits for '100 Continue' before it is sent anyway (default 1, as curl).")
    var expect100Timeout: Double = 1

    @Option(name: [.customShort("m"), .customLong("max-time")], help: "Seconds allowed for the whole transfer, body included (default: no limit, as curl).")
    var maxTime: Double?

    @Option(
        name: [.customShort("y"), .customLong("speed-time")],
        help: "Abort (exit 28) when slower than --speed-limit for this many seconds (curl's; 30 when only --speed-limit is given).")
    var speedTime: Int?

    @Option(
        name: [.customShort("Y"), .customLong("speed-limit")], help: "Bytes per second below which --speed-time aborts (1 when only --speed-time is given).")
    var speedLimit: Int?

    /// The longest time limit used, in seconds (about 31 years): a longer one is used as this one, so that no
    /// conversion to milliseconds or to NIO's 64-bit nanoseconds (about 292 years) overflows, whatever it is added to.
    static let longestSeconds: Double = 1e9

    /// The largest number of seconds curl takes (`LONG_MAX / 1000`, its tool_paramhlp.c): beyond it, curl's "too
    /// large number".
    static let largestAcceptedSeconds = Double(Int64.max) / 1000

    /// Time options as curl's (tool_paramhlp.c, exit 2): not a number, "expected a proper numerical parameter"
    /// (curl itself lets NaN through); negative, "expected a positive numerical parameter"; infinite or over
    /// ``largestAcceptedSeconds``, "too large number".
    func validate() throws {
        for (name, value) in [("--connect-timeout", connectTimeout), ("--expect100-timeout", expect100Timeout), ("-m/--max-time", maxTime ?? 1)] {
            try Self.validateSeconds(value, option: name)
        }
    }

    /// Throws curl's usage error for a number of seconds `option` cannot take (see ``validate()``).
    static func validateSeconds(_ value: Double, option: String) throws {
        if value.isNaN { throw ValidationError("option \(option): expected a proper numerical parameter") }
        if value < 0 { throw ValidationError("option \(option): expected a positive numerical parameter") }
        if !(value <= largestAcceptedSeconds) { throw ValidationError("option \(option): too large number") }
    }
}

/// `trust get --help`: Retries.
struct GetRetryOptions: ParsableArguments {
    @Option(
        name: .customLong("retry"), help: "Retry a transient failure this many times (curl's: a timeout, an unresolvable host, HTTP 408/429/500/502/503/504).")
    var retryCount = 0

    @Option(name: .long, help: "Seconds between retries (default: 1, doubling up to 600).")
    var retryDelay: Int?

    @Option(name: .long, help: "No retry after this many seconds since the first attempt.")
    var retryMaxTime: Int?

    @Flag(name: .customLong("retry-connrefused"), help: "With --retry, also retry a refused connection.")
    var retryConnrefused = false

    @Flag(name: .long, help: "With --retry, retry every failure.")
    var retryAllErrors = false
}
