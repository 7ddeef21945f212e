#!/usr/bin/env bash
# Builds the libFuzzer targets, writes seed corpora, runs every target for SECONDS each and prints
# one summary line per target. Exit status non-zero on any crash, leak, out-of-memory or timeout.
#
#   Fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 60 seconds, every target)
#
# Environment: FUZZ_JOBS (parallel fuzzing processes per target, default 1), FUZZ_PARALLEL (targets
# fuzzed at once, default: processors / FUZZ_JOBS), FUZZ_WORK (the gitignored folder for corpora,
# crash artifacts and logs, default Fuzz/.work), FUZZ_SCRATCH_PATH (the build folder, default
# Fuzz/.build). See Fuzz/README.md.
set -euo pipefail

seconds="${1:-60}"
shift || true
fuzz_dir="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$fuzz_dir")"
work="${FUZZ_WORK:-$fuzz_dir/.work}"
mkdir -p "$work" && work="$(cd "$work" && pwd)"  # absolute: the FUZZ_JOBS runs change directory
jobs="${FUZZ_JOBS:-1}"
all_targets=(FuzzCertificates FuzzPKCS12 FuzzAuthenticationHeaders FuzzConfiguration FuzzHostNames FuzzEvaluateChainInput FuzzHTTP1ResponseHead FuzzHTTP2Frames FuzzCRL FuzzOCSP FuzzSCT FuzzDisplayText)
if [ "$#" -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi
usage="usage: Fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]  (targets: ${all_targets[*]})"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then echo "$usage" >&2; exit 2; fi
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then echo "FUZZ_JOBS must be a positive number" >&2; exit 2; fi
# Targets fuzzed at once: by default one per processor not taken by FUZZ_JOBS.
processors=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
parallel="${FUZZ_PARALLEL:-$(( processors / jobs > 0 ? processors / jobs : 1 ))}"
if ! [[ "$parallel" =~ ^[1-9][0-9]*$ ]]; then echo "FUZZ_PARALLEL must be a positive number" >&2; exit 2; fi
for target in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $target "* ]] || { echo "unknown target $target; $usage" >&2; exit 2; }
done

# What is instrumented (coverage counters and AddressSanitizer): the fuzz targets (Fuzz/Package.swift) and this
# package's modules they reach, whose manifest adds the flags (and -enable-testing: the targets reach internal
# parsers with `@testable import`) when TRUST_FUZZ_INSTRUMENTATION=1. The dependencies (SwiftNIO,
# swift-certificates, BoringSSL…) are built as for the release, with the flags of Scripts/release-flags.sh, and
# not instrumented: so that a build in the main package's folder (FUZZ_SCRATCH_PATH=.build, as CI does) reuses
# what the release build compiled there and compiles only our modules again.
# shellcheck source=../Scripts/release-flags.sh
source "$root/Scripts/release-flags.sh"
build_flags=("${release_flags[@]}")
# FUZZ_SCRATCH_PATH: another build folder. Our instrumented modules then replace the release build's ones
# there, so the next release build compiles those modules again.
if [ -n "${FUZZ_SCRATCH_PATH:-}" ]; then build_flags+=(--scratch-path "$FUZZ_SCRATCH_PATH"); fi

started=$(date +%s)
echo "== building the fuzz targets (release, -sanitize=fuzzer,address)"
TRUST_FUZZ_INSTRUMENTATION=1 swift build --package-path "$fuzz_dir" "${build_flags[@]}"
bin="$(TRUST_FUZZ_INSTRUMENTATION=1 swift build --package-path "$fuzz_dir" "${build_flags[@]}" --show-bin-path)"
echo "== building trust (for the lab PKI the seeds are made from)"
swift build --package-path "$root" --product trust
trust="$(swift build --package-path "$root" --show-bin-path)/trust"
built=$(date +%s)

# ---------------------------------------------------------------------------------------------
# Seed corpora, made afresh on every run (nothing copied in): from the lab PKI, openssl-made DER,
# weak-key and PKCS#12 files when openssl is there, and hand-written headers and configurations.
seeds="$work/seeds"
rm -rf "$seeds"
mkdir -p "$seeds" "$work/corpus" "$work/artifacts" "$work/logs"
for target in "${all_targets[@]}"; do mkdir -p "$seeds/$target" "$work/corpus/$target" "$work/artifacts/$target"; done
# The lab PKI is kept between runs (a fresh one every 30 days: its leaves live 90), so that the kept
# corpus and any saved crash still have the anchors they were found with (TRUST_FUZZ_ANCHORS).
lab="$work/lab"
if [ ! -f "$lab/roots.pem" ] || [ ! -f "$lab/crls/all.pem" ] || [ ! -f "$lab/ocsp/good.der" ] || [ ! -f "$lab/ct/sct-list.bin" ] || [ -n "$(find "$lab/roots.pem" -mtime +30)" ]; then
  rm -rf "$lab"
  "$trust" lab-pki "$lab" >/dev/null
fi

have_openssl=0
command -v openssl >/dev/null 2>&1 && have_openssl=1

# Certificates and chains: every PEM the lab wrote (keys included: not certificates), and DER.
n=0
for file in "$lab"/*.pem "$lab"/*/*.pem "$lab"/clients/*/*.pem; do
  n=$((n + 1))
  cp "$file" "$seeds/FuzzCertificates/lab-$n.pem"
  case "$file" in */chain.pem | */cert.pem) cp "$file" "$seeds/FuzzEvaluateChainInput/lab-$n.pem" ;; esac
done
if [ "$have_openssl" = 1 ]; then
  for name in root intermediate good/cert; do
    out="$(echo "$name" | tr / -).der"
    openssl x509 -in "$lab/$name.pem" -outform DER -out "$seeds/FuzzCertificates/$out"
    cp "$seeds/FuzzCertificates/$out" "$seeds/FuzzEvaluateChainInput/$out"
  done
  # Well-formed certificates in forms that cannot be processed (read structurally by RawCertificate).
  openssl req -x509 -newkey rsa:1024 -nodes -keyout "$work/weak.key" -out "$seeds/FuzzCertificates/rsa1024.pem" \
    -days 30 -subj /CN=weak.lab.test -addext subjectAltName=DNS:weak.lab.test 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -md5 -nodes -keyout "$work/md5.key" -out "$seeds/FuzzCertificates/md5.pem" \
    -days 30 -subj /CN=md5.lab.test 2>/dev/null
  cp "$seeds/FuzzCertificates/rsa1024.pem" "$seeds/FuzzEvaluateChainInput/"
  cat "$lab/good/cert.pem" "$seeds/FuzzCertificates/md5.pem" > "$seeds/FuzzEvaluateChainInput/good-then-md5.pem"
  rm -f "$work/weak.key" "$work/md5.key"
fi
printf -- '-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n' > "$seeds/FuzzCertificates/tiny.pem"

# CRLs: the lab's (PEM: the root's, the intermediate's revoking two certificates, both in one file), and DER.
cp "$lab/crls/root.pem" "$lab/crls/intermediate.pem" "$lab/crls/all.pem" "$seeds/FuzzCRL/"
if [ "$have_openssl" = 1 ]; then
  for name in root intermediate; do openssl crl -in "$lab/crls/$name.pem" -outform DER -out "$seeds/FuzzCRL/$name.der"; done
fi

# OCSP responses about the lab's leaves (good, revoked; from the intermediate and from a delegated responder) and a
# request, written by the lab.
cp "$lab"/ocsp/*.der "$seeds/FuzzOCSP/"

# CT: the lab's log list and the SCT list of its `sct` server's certificate, written by the lab.
cp "$lab/ct/log_list.json" "$lab/ct/sct-list.bin" "$seeds/FuzzSCT/"

# PKCS#12: one byte (low four bits: passphrase length), the passphrase, then the file.
if [ "$have_openssl" = 1 ]; then
  client="$lab/clients/client"
  p12() {  # NAME PASSPHRASE OPENSSL-ARGS...
    local name="$1" pass="$2"
    shift 2
    if openssl pkcs12 -export -passout "pass:$pass" -out "$work/$name.p12" "$@" 2>/dev/null; then
      { printf "\\x$(printf %02x "${#pass}")"; printf '%s' "$pass"; cat "$work/$name.p12"; } > "$seeds/FuzzPKCS12/$name"
    fi
    rm -f "$work/$name.p12"
  }
  p12 default fuzz -in "$client/cert.pem" -inkey "$client/key.pem" -certfile "$client/chain.pem"
  p12 one-iteration fuzz -iter 1 -in "$client/cert.pem" -inkey "$client/key.pem"
  p12 no-mac-iteration fuzz -noiter -nomaciter -in "$client/cert.pem" -inkey "$client/key.pem"
  p12 legacy fuzz -legacy -in "$client/cert.pem" -inkey "$client/key.pem"
  p12 empty-passphrase '' -in "$client/cert.pem" -inkey "$client/key.pem"
  p12 no-key fuzz -nokeys -in "$client/chain.pem"
  p12 no-certificate fuzz -nocerts -inkey "$client/key.pem"
fi
printf '\x04fuzz\x30\x03\x02\x01\x03' > "$seeds/FuzzPKCS12/version-only"

# WWW-Authenticate fields (several fields in one input: separated by line feeds).
h="$seeds/FuzzAuthenticationHeaders"
printf '%s' 'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"' > "$h/digest-rfc7616"
printf '%s' 'Basic realm="simple", charset="UTF-8", Newauth realm="apps", type=1, title="Login to \"apps\""' > "$h/basic-newauth"
printf '%s' 'Negotiate YII+/abc==, NTLM, Bearer realm="x", error="invalid_token", error_description="The access token expired"' > "$h/token68"
printf '%s' 'Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256-sess, nonce="5TsQ", opaque="HRPC", charset=UTF-8, userhash=true, stale=TRUE' > "$h/digest-sess"
printf '%s' 'nextnonce="abc", qop=auth, rspauth="d1f", cnonce="x", nc=00000001' > "$h/authentication-info"
printf '%s\n%s\n%s' 'Basic realm="one"' 'Digest realm="two", nonce="n", algorithm=MD5' 'Bearer' > "$h/three-fields"
printf '%s' 'Digest realm="r", nonce="a", algorithm=MD5-sess, qop="auth-int", Digest realm="r", nonce="b", algorithm=SHA3-512, Basic, ,, Basic realm=x, realm=y' > "$h/tricky"
# Escaped quotes and backslashes followed by a combining mark (U+0301): one Character each, which is neither.
printf 'Basic realm="a\\"\xcc\x81b", Digest realm="\\\\\xcc\x81", nonce="n\\"\xcc\x81", opaque="\xcc\x81\\""' > "$h/combining-marks"

# Host names: ASCII, fullwidth, compatibility and deviation characters, joiners, right-to-left labels, xn-- labels.
n="$seeds/FuzzHostNames"
i=0
for name in 'API.Example.COM.' 'ＥＸＡＭＰＬＥ．com' 'ﬁle.com' 'faß.de' 'xn--fa-hia.de' 'XN--BCHER-KVA.example' 'l·l.cat' \
  'क्‍ष.in' 'ا‌ب.com' 'שלום.co.il' 'مثال.إختبار' '١٢٣.com' '例え。テスト。' 'xn--abc.com' 'a_b-c.d' '☃.net' 'exam​ple.com' \
  'βόλος.ΣΑΣ' 'ǅemal.hr' '①②.jp' 'ｶﾞ.jp'; do
  i=$((i + 1)); printf '%s' "$name" > "$n/name-$i"
done

# Peer-chosen names (FuzzDisplayText): terminal controls, CR/LF, NUL, DEL, C1, bidirectional overrides, a
# backslash, invalid UTF-8, and plain text that must come through as it is.
d="$seeds/FuzzDisplayText"
printf 'CN=evil\x1b[2J\x1b]0;owned\x07host\x08\r\nforged: line\x00\x7f' > "$d/terminal"
printf 'Root\xc2\x9b31m\xe2\x80\xaegpj.exe\xe2\x81\xa6x\xe2\x80\xa8y' > "$d/c1-bidi"
printf 'a\\x1b\\u{202E}\\\\' > "$d/backslashes"
printf 'ok\xff\xc3\xed\xa0\x80\xc0\xaf' > "$d/invalid-utf8"
printf 'Zürich 名前 é\xcc\x81' > "$d/plain"

# Configuration files: first byte J (the configuration file), T TrustKit, S ATS, A Android NSC, O OkHttp.
pins=()
while read -r pin _; do case "$pin" in sha256/*) pins+=("$pin") ;; esac; done < "$lab/pins.txt"
p1="${pins[0]}"; p2="${pins[1]}"
c="$seeds/FuzzConfiguration"
cat > "$c/full.json" <<JSON
J{"version": 1,
 "base": {"anchors": {"certificates": ["roots.pem"], "replaceSystem": true}, "minimumTLSVersion": "1.3"},
 "hosts": [
  {"host": "api.example.com", "pins": {"sha256": ["$p1", "$p2"], "expires": "2030-01-01T00:00:00Z"}, "reportURIs": ["https://report.example.com/pins"]},
  {"host": "**.example.org", "exclude": ["legacy.example.org"], "mode": "report-only", "minimumRSABits": 3072, "minimumECBits": 384},
  {"host": "*.lab.test", "clientIdentity": {"pkcs12": "client.p12", "passphraseEnvironment": "LAB_P12_PASS"}, "allowSHA1": false},
  {"host": "10.0.0.1", "debugOverrides": {"anchors": {"certificates": ["proxy-ca.pem"]}, "overridesPins": true}}
 ]}
JSON
printf 'J{"version": 1}' > "$c/minimal.json"
printf 'J{"version": 2, "hosts": [{"host": "*.co.uk", "pins": {"sha256": ["sha256/short", "md5/abc"]}}, {"host": 7}], "extra": null}' > "$c/problems.json"
printf 'J{"version": 1, "hosts": [{"host": "a.example.com", "anchors": {"pem": ["-----BEGIN CERTIFICATE-----\\nMAA=\\n-----END CERTIFICATE-----\\n"]}}]}' > "$c/inline-pem.json"
printf 'J[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["\\ud800"]]]' > "$c/deep.json"
cat > "$c/trustkit.plist" <<PLIST
T<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict><key>TSKConfiguration</key><dict>
 <key>TSKSwizzleNetworkDelegates</key><false/>
 <key>TSKPinnedDomains</key><dict>
  <key>example.com</key><dict>
   <key>TSKIncludeSubdomains</key><true/><key>TSKEnforcePinning</key><true/>
   <key>TSKPublicKeyHashes</key><array><string>${p1#sha256/}</string><string>${p2#sha256/}</string></array>
   <key>TSKReportUris</key><array><string>https://report.example.com</string></array>
   <key>TSKExpirationDate</key><string>2030-01-01</string>
  </dict></dict></dict></dict></plist>
PLIST
printf 'T{"TSKPinnedDomains": {"example.net": {"TSKPublicKeyHashes": ["%s"], "TSKEnforcePinning": false}}}' "${p1#sha256/}" > "$c/trustkit.json"
cat > "$c/ats.plist" <<PLIST
S<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>NSAppTransportSecurity</key><dict><key>NSPinnedDomains</key><dict>
 <key>example.com</key><dict><key>NSIncludesSubdomains</key><true/>
  <key>NSPinnedCAIdentities</key><array><dict><key>SPKI-SHA256-BASE64</key><string>${p1#sha256/}</string></dict></array>
  <key>NSPinnedLeafIdentities</key><array><dict><key>SPKI-SHA256-BASE64</key><string>${p2#sha256/}</string></dict></array>
 </dict></dict></dict></dict></plist>
PLIST
cat > "$c/android.xml" <<XML
A<?xml version="1.0" encoding="utf-8"?>
<network-security-config>
 <base-config cleartextTrafficPermitted="false"><trust-anchors><certificates src="system"/></trust-anchors></base-config>
 <domain-config>
  <domain includeSubdomains="true">example.com</domain>
  <pin-set expiration="2030-01-01"><pin digest="SHA-256">${p1#sha256/}</pin><pin digest="SHA-256">${p2#sha256/}</pin></pin-set>
  <domain-config><domain>api.example.com</domain></domain-config>
 </domain-config>
 <debug-overrides><trust-anchors><certificates src="user"/></trust-anchors></debug-overrides>
</network-security-config>
XML
printf 'O*.example.com %s %s\n**.example.org %s\nsha1/AAAA\n' "$p1" "$p2" "$p1" > "$c/okhttp.txt"
printf 'O.add("api.example.com", "%s", "%s")\n.add("*.example.com", "sha1/BBBB").add("x")\n' "$p1" "$p2" > "$c/okhttp.kt"

# HTTP/1.1 responses: one byte (low three bits: chunks minus one; bit 3: the request is HEAD), one
# byte per further chunk placing its start, then the server's bytes.
r="$seeds/FuzzHTTP1ResponseHead"
printf '\x00HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello' > "$r/content-length"
printf '\x02\x30\xa0HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;ext=1\r\n, w\r\n0\r\nX-Trailer: t\r\n\r\n' > "$r/chunked"
printf '\x00HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok' > "$r/interim-then-200"
printf '\x00HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n' > "$r/too-many-interim"
printf '\x08HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n' > "$r/head-request"
printf '\x00HTTP/1.0 200 OK\r\nServer: x\r\n\r\nthe body ends when the connection closes' > "$r/close-delimited"
printf '\x01\x80HTTP/1.1 204 No Content\nX-A: 1\n\nHTTP/1.1 304 Not Modified\r\nETag: "x"\r\n\r\n' > "$r/bare-lf-pipelined"
printf '\x00HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x00' > "$r/switching"
{ printf '\x00HTTP/1.1 200 OK\r\n'; for i in $(seq 1 33); do printf 'X-Field-%d: %d\r\n' "$i" "$i"; done; printf 'Content-Length: 0\r\n\r\n'; } > "$r/too-many-fields"
{ printf '\x00HTTP/1.1 200 OK\r\nX-Big: '; head -c 1100 /dev/zero | tr '\0' a; printf '\r\n\r\n'; } > "$r/field-too-large"

# HTTP/2 frames from the server, after the empty SETTINGS the harness sends first: one byte (low
# three bits: chunks minus one; bit 3: the server's SETTINGS arrive before the stream opens), one
# byte per further chunk placing its start, then frames (9-byte header: length, type, flags, stream).
f="$seeds/FuzzHTTP2Frames"
ack='\x00\x00\x00\x04\x01\x00\x00\x00\x00'
h200='\x00\x00\x01\x01\x04\x00\x00\x00\x01\x88'                        # HEADERS :status 200 (HPACK 0x88)
data_end='\x00\x00\x05\x00\x01\x00\x00\x00\x01hello'                   # DATA END_STREAM
printf "\\x00$ack$h200$data_end" > "$f/headers-data"
printf "\\x0b\\x40\\x80\\xc0$ack$h200$data_end" > "$f/headers-data-in-chunks"
printf "\\x00$ack"'\x00\x00\x01\x01\x05\x00\x00\x00\x01\x88' > "$f/headers-end-stream"
# :status 200 and content-length: 5 (literal, indexed name 28), then the body.
printf "\\x00$ack"'\x00\x00\x05\x01\x04\x00\x00\x00\x01\x88\x0f\x0d\x015'"$data_end" > "$f/content-length"
# :status 100 (literal, indexed name 8), then 200.
printf "\\x00$ack"'\x00\x00\x05\x01\x04\x00\x00\x00\x01\x08\x03100'"$h200$data_end" > "$f/interim-then-200"
# HEADERS without END_HEADERS, then CONTINUATION (server: x, literal, indexed name 54); DATA; trailers (x-t: y).
printf "\\x00$ack"'\x00\x00\x01\x01\x00\x00\x00\x00\x01\x88\x00\x00\x04\x09\x04\x00\x00\x00\x01\x0f\x27\x01x\x00\x00\x02\x00\x00\x00\x00\x00\x01hi\x00\x00\x07\x01\x05\x00\x00\x00\x01\x00\x03x-t\x01y' > "$f/continuation-trailers"
# SETTINGS with values, PING, WINDOW_UPDATE on the connection and the stream, then the response.
printf '\x00\x00\x00\x0c\x04\x00\x00\x00\x00\x00\x00\x04\x00\x00\xff\xff\x00\x03\x00\x00\x00\x64\x00\x00\x08\x06\x00\x00\x00\x00\x0012345678\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x04\x08\x00\x00\x00\x00\x01\x00\x00\x00\x01'"$ack$h200$data_end" > "$f/control-frames"
printf "\\x00$ack"'\x00\x00\x04\x03\x00\x00\x00\x00\x01\x00\x00\x00\x07' > "$f/rst-refused"
printf "\\x00$ack"'\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' > "$f/goaway"
printf "\\x08$h200"'\x00\x00\x05\x00\x00\x00\x00\x00\x01hello\x00\x00\x00\x00\x01\x00\x00\x00\x01' > "$f/settings-first-empty-end"
# Regression: a HEADERS frame whose :status is empty (literal, indexed name 8, empty value) trapped
# swift-nio-http2 1.46 (HPACKHeaders.isInformationalResponse); HTTP2ExchangeFraming refuses it.
printf "\\x00$ack"'\x00\x00\x02\x01\x04\x00\x00\x00\x01\x08\x00' > "$f/empty-status"

# ---------------------------------------------------------------------------------------------
# Runs. Leaks are checked at exit of every input that allocated more than it freed (-detect_leaks=1), a single allocation over
# 512 MB or a process over 2 GB is an out-of-memory failure, and an input running for more than 10 s
# a timeout.
# lsan.supp lists the few leaks inside Foundation that our code cannot avoid (each with why).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
# AddressSanitizer's runtime as a shared library, loaded first (the targets link it with -shared-libasan):
# the static Swift runtime's link flags (--exclude-libs ALL) would hide a static runtime's malloc and free
# from the C library, whose own allocations (vasprintf's, for asprintf) would then be glibc's, and their
# free() a false "bad free". Loaded into the targets only, not into this script's other tools.
resource_dir="$(swiftc -print-target-info | sed -n 's/.*"runtimeResourcePath": "\(.*\)".*/\1/p')"
asan_runtime="$resource_dir/clang/lib/linux/libclang_rt.asan-$(uname -m).so"
[ -f "$asan_runtime" ] || { echo "AddressSanitizer's shared runtime not found: $asan_runtime" >&2; exit 2; }
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$fuzz_dir/lsan.supp:print_suppressions=0}"
# libFuzzer reports a trap itself (and saves the input); Swift's backtracer would get in its way.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
export TRUST_FUZZ_ANCHORS="$lab/roots.pem"
# What a failed run found, for the summary: the property or sanitizer report (the log's last error and the
# stack under it) and each new crash input in base64, so that a CI log alone is enough to reproduce it
# (`base64 -d > crash; Fuzz/.build/release/TARGET crash`).
report_failure() {
  local target="$1" log="$2" input
  echo "-- $target failed; from $log:"
  grep -n -E 'Fatal error|property violated|==[0-9]+==ERROR|ERROR: libFuzzer|SUMMARY:' "$log" | tail -5 || true
  awk '/==[0-9]+==ERROR|ERROR: libFuzzer/ {show = 1; n = 0} show && n < 40 {print; n++}' "$log" | tail -40
  grep -h '^== .*: run again' "$log" || true
  while IFS= read -r input; do
    echo "-- crash input $(basename "$input") ($(wc -c < "$input") bytes), base64:"
    head -c 4096 "$input" | base64
  done < <(find "$work/artifacts/$target" -type f -newer "$work/logs/$target.start")
}
# Inputs libFuzzer saved for their time rather than for a finding: a slow unit (an input that ran for 10 s
# or more, which libFuzzer saves and goes on; exit 0) or a timeout (over -timeout, exit non-zero). The
# targets are deterministic (an EmbeddedChannel, no clock, no threads), so a real hang takes as long every
# time; an input that a stalled host made slow runs in milliseconds when run again. Each is run again three
# times on its own (libFuzzer prints their total): if the three end within 2 s, it was the host, the input moves to
# $work/unreproduced/TARGET (kept, not counted) and the log says so; otherwise it stays a finding.
recheck_slow_inputs() {
  local target="$1" log="$2" input again took all_fast=0
  while IFS= read -r input; do
    again="$work/logs/$target.recheck"
    LD_PRELOAD="$asan_runtime" "$bin/$target" -runs=3 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -detect_leaks=0 \
      "$input" > "$again" 2>&1 && all_fast=1 || all_fast=0
    took=$(awk '/^Executed .* in [0-9]+ ms$/ {ms = $(NF - 1)} END {print ms + 0}' "$again")
    if [ "$all_fast" = 1 ] && grep -q '^Executed ' "$again" && [ "$took" -lt 2000 ]; then
      mkdir -p "$work/unreproduced/$target"
      mv "$input" "$work/unreproduced/$target/"
      echo "== $(basename "$input"): run again 3 times in ${took} ms: the host was stalled, not the input (kept in $work/unreproduced/$target)" >> "$log"
      grep -q '^ERROR: libFuzzer: timeout' "$log" && [ -z "$(find "$work/artifacts/$target" -type f -newer "$work/logs/$target.start")" ] \
        && echo "== the run's only finding was that timeout: not a finding" >> "$log" && status=0
    else
      echo "== $(basename "$input"): run again 3 times in ${took} ms (exit status $([ "$all_fast" = 1 ] && echo 0 || echo non-zero)): it is the input" >> "$log"
    fi
    rm -f "$again"
  done < <(find "$work/artifacts/$target" -type f \( -name 'slow-unit-*' -o -name 'timeout-*' \) -newer "$work/logs/$target.start")
  return 0
}
# One target's run: writes its summary line to $work/logs/TARGET.summary and returns non-zero on a finding.
run_target() {
  local target="$1" log="$work/logs/$1.log" status crashes execs rate peak last cov ft corpus verdict
  touch "$work/logs/$target.start"
  set +e
  if [ "$jobs" -gt 1 ]; then
    # Parallel run: one fuzzing process per job for SECONDS, sharing the corpus. libFuzzer writes the
    # jobs' logs (fuzz-N.log) into its working directory: one per target, as targets may run at once.
    local dir="$work/logs/$target.jobs"
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && LD_PRELOAD="$asan_runtime" "$bin/$target" -jobs="$jobs" -workers="$jobs" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 \
      -timeout=10 -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$work/artifacts/$target/" \
      "$work/corpus/$target" "$seeds/$target" > "$log" 2>&1)
    status=$?
    cat "$dir"/fuzz-*.log >> "$log" 2>/dev/null
    rm -rf "$dir"
  else
    LD_PRELOAD="$asan_runtime" "$bin/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -detect_leaks=1 \
      -print_final_stats=1 -artifact_prefix="$work/artifacts/$target/" "$work/corpus/$target" "$seeds/$target" > "$log" 2>&1
    status=$?
  fi
  set -e
  recheck_slow_inputs "$target" "$log"
  crashes=$(find "$work/artifacts/$target" -type f -newer "$work/logs/$target.start" | wc -l)
  execs=$(awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}' "$log")
  rate=$(awk '/stat::average_exec_per_sec/ {s += $2} END {print s + 0}' "$log")
  peak=$(awk '/stat::peak_rss_mb/ {if ($2 > m) m = $2} END {print m + 0}' "$log")
  last=$(grep -h -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | awk '{print $2}' || true)
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | awk '{print $2}' || true)
  corpus=$(find "$work/corpus/$target" -type f | wc -l)
  verdict=ok
  rm -f "$work/logs/$target.failure"
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    verdict="FAILED (exit $status; see $log and $work/artifacts/$target/)"
    [ "$crashes" -eq 0 ] && crashes=1
    report_failure "$target" "$log" > "$work/logs/$target.failure"
  fi
  printf '%-26s %10s execs  %7s exec/s  cov %-5s ft %-6s corpus %-5s peak %4s MB  crashes %s  %s\n' \
    "$target" "$execs" "$rate" "${cov:-?}" "${ft:-?}" "$corpus" "$peak" "$crashes" "$verdict" > "$work/logs/$target.summary"
  cat "$work/logs/$target.summary"
  [ "$verdict" = ok ]
}

# FUZZ_PARALLEL targets run at once (each with FUZZ_JOBS processes), so that a short run over every
# target takes SECONDS × targets / FUZZ_PARALLEL.
failed=0
running=()
for target in "${targets[@]}"; do
  rm -f "$work/logs/$target.summary"
  run_target "$target" &
  running+=("$!")
  if [ "${#running[@]}" -ge "$parallel" ]; then
    wait "${running[0]}" || failed=1
    running=("${running[@]:1}")
  fi
done
for pid in "${running[@]}"; do wait "$pid" || failed=1; done
summary=()
for target in "${targets[@]}"; do
  if [ -f "$work/logs/$target.summary" ]; then
    summary+=("$(cat "$work/logs/$target.summary")")
  else
    summary+=("$(printf '%-26s no summary: the run stopped early (see %s)' "$target" "$work/logs/$target.log")")
    failed=1
  fi
done
finished=$(date +%s)

echo "== fuzz summary (${seconds} s per target, ${jobs} job(s) each, ${parallel} target(s) at once; build $((built - started)) s, total $((finished - started)) s)"
for line in "${summary[@]}"; do echo "$line"; done
for target in "${targets[@]}"; do
  if [ -f "$work/logs/$target.failure" ]; then cat "$work/logs/$target.failure"; fi
done
exit "$failed"
