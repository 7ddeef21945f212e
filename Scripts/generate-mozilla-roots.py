#!/usr/bin/env python3
"""Generates Sources/Trust/Roots/EmbeddedMozillaRoots.swift from NSS's root store (certdata.txt).

Usage:
    Scripts/generate-mozilla-roots.py [CERTDATA] [--check]

CERTDATA defaults to ../shared/data/nss-certdata.txt (NSS's lib/ckfw/builtins/certdata.txt). With --check the
generated text is compared with the committed file, byte for byte, and nothing is written (exit 1 when they differ).

Every certificate object of the file is embedded, with what NSS says about it for TLS servers:
- its server trust (CKA_TRUST_SERVER_AUTH of the trust object whose CKA_CERT_SHA1_HASH is the certificate's, else
  whose issuer and serial number are): `trusted` for CKT_NSS_TRUSTED_DELEGATOR (a trust anchor for servers),
  `distrusted` for CKT_NSS_NOT_TRUSTED, `not-trusted` for CKT_NSS_MUST_VERIFY_TRUST or no trust object (listed, but
  no anchor for servers: an e-mail-only root, or one whose server trust was withdrawn);
- its server distrust-after date (CKA_NSS_SERVER_DISTRUST_AFTER, a UTCTime): NSS refuses a chain to the root whose
  end-entity certificate has a notBefore after that date;
- the SHA-256 of its SubjectPublicKeyInfo (base64), so that the library finds a root's facts without parsing it.

The output is one PEM text with a comment header per certificate: the library indexes it as it indexes the system
bundle (each root parsed when a path search first looks it up). Hand-written, because no package reads certdata.txt
(Go's x509roots does it for Go); the file's format is NSS's (lib/ckfw/builtins/certdata.txt's own header).
"""

import base64
import calendar
import hashlib
import os
import re
import sys
import textwrap

HERE = os.path.dirname(os.path.realpath(__file__))
DEFAULT_INPUT = os.path.join(HERE, "..", "..", "shared", "data", "nss-certdata.txt")
OUTPUT = os.path.join(HERE, "..", "Sources", "Trust", "Roots", "EmbeddedMozillaRoots.swift")
# Where the input comes from: NSS's repository at the commit the file was taken from.
SOURCE = "NSS lib/ckfw/builtins/certdata.txt at commit 9d75dfd (May 2026)"
TRUST = {"CKT_NSS_TRUSTED_DELEGATOR": "trusted", "CKT_NSS_MUST_VERIFY_TRUST": "not-trusted", "CKT_NSS_NOT_TRUSTED": "distrusted"}


def objects(text):
    """Each object of the file as {attribute: value}; MULTILINE_OCTAL values as bytes."""
    current, found = None, []
    lines = iter(text.split("\n"))
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        parts = line.split(" ", 2)
        if parts[0] == "CKA_CLASS":
            current = {}
            found.append(current)
        if current is None or len(parts) < 2:
            continue
        if parts[1] == "MULTILINE_OCTAL":
            data = bytearray()
            for value in lines:
                if value.strip() == "END":
                    break
                data += bytes(int(octal, 8) for octal in re.findall(r"\\([0-7]{3})", value))
            current[parts[0]] = bytes(data)
        else:
            current[parts[0]] = parts[2] if len(parts) > 2 else ""
    return found


def element(der, offset):
    """(tag, start of contents, end) of the DER element at offset."""
    tag, length = der[offset], der[offset + 1]
    start = offset + 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(der[start:start + count], "big")
        start += count
    return tag, start, start + length


def subject_and_spki(der):
    """The subject Name's and the SubjectPublicKeyInfo's DER (RFC 5280 §4.1: tbsCertificate's 6th and 7th fields
    after the optional [0] version)."""
    _, certificate, _ = element(der, 0)
    _, tbs, tbs_end = element(der, certificate)
    fields, offset = [], tbs
    while offset < tbs_end and len(fields) < 8:
        tag, start, end = element(der, offset)
        fields.append((tag, offset, end))
        offset = end
    if fields[0][0] == 0xA0:
        fields = fields[1:]
    subject, spki = fields[4], fields[5]
    return der[subject[1]:subject[2]], der[spki[1]:spki[2]]


def utc_time(value):
    """A UTCTime's text (YYMMDDHHMMSSZ) as seconds since 1970 (RFC 5280 §4.1.2.5.1: YY < 50 is 20YY)."""
    text = value.decode("ascii")
    match = re.fullmatch(r"(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z", text)
    if not match:
        raise SystemExit(f"generate-mozilla-roots: a distrust-after date is not a UTCTime: {text!r}")
    year = int(match.group(1))
    year += 2000 if year < 50 else 1900
    parts = [int(match.group(i)) for i in range(2, 7)]
    return calendar.timegm((year, *parts, 0, 0, 0)), text


def roots(text):
    found = objects(text)
    trust_by_hash, trust_by_issuer_serial = {}, {}
    for entry in found:
        if entry.get("CKA_CLASS") == "CKO_NSS_TRUST":
            level = entry.get("CKA_TRUST_SERVER_AUTH", "").replace("CK_TRUST ", "")
            if "CKA_CERT_SHA1_HASH" in entry:
                trust_by_hash[entry["CKA_CERT_SHA1_HASH"]] = level
            trust_by_issuer_serial[(entry.get("CKA_ISSUER"), entry.get("CKA_SERIAL_NUMBER"))] = level
    result = []
    for entry in found:
        if entry.get("CKA_CLASS") != "CKO_CERTIFICATE" or "CKA_VALUE" not in entry:
            continue
        der = entry["CKA_VALUE"]
        level = trust_by_hash.get(hashlib.sha1(der).digest(), trust_by_issuer_serial.get((entry.get("CKA_ISSUER"), entry.get("CKA_SERIAL_NUMBER"))))
        trust = TRUST.get(level, "not-trusted")
        distrust = entry.get("CKA_NSS_SERVER_DISTRUST_AFTER")
        after = utc_time(distrust) if isinstance(distrust, bytes) else None
        label = re.fullmatch(r'"(.*)"', entry.get("CKA_LABEL", '""')).group(1)
        _, spki = subject_and_spki(der)
        result.append((label, trust, after, base64.b64encode(hashlib.sha256(spki).digest()).decode(), der))
    return result


def swift(entries):
    trusted = sum(1 for _, trust, _, _, _ in entries if trust == "trusted")
    dated = sum(1 for _, _, after, _, _ in entries if after)
    lines = [
        "// Generated by Scripts/generate-mozilla-roots.py from NSS's certdata.txt; do not edit.",
        "// certdata.txt is subject to the Mozilla Public License, v. 2.0 (https://mozilla.org/MPL/2.0/);",
        f"// source: {SOURCE}.",
        "",
        "extension MozillaRoots {",
        "    /// Where the embedded store comes from.",
        f'    public static let embeddedSource = "{SOURCE}"',
        "",
        f"    /// NSS's certificates ({len(entries)}: {trusted} trusted for servers, {dated} with a server distrust-after date), each",
        "    /// a PEM block after a header of `# label:`, `# server:` (`trusted`, `not-trusted` or `distrusted`),",
        "    /// `# spki-sha256:` and, when NSS sets one, `# server-distrust-after:` (seconds since 1970, then the UTCTime).",
        '    static let embeddedPEM: StaticString = """',
    ]
    for label, trust, after, spki, der in entries:
        # A label is NSS's own ASCII text; a quote or a backslash would end or escape the literal.
        safe = label.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
        lines.append(f"        # label: {safe}")
        lines.append(f"        # server: {trust}")
        lines.append(f"        # spki-sha256: {spki}")
        if after:
            lines.append(f"        # server-distrust-after: {after[0]} {after[1]}")
        lines.append("        -----BEGIN CERTIFICATE-----")
        lines += ["        " + chunk for chunk in textwrap.wrap(base64.b64encode(der).decode(), 64)]
        lines.append("        -----END CERTIFICATE-----")
    lines += ['        """', "}", ""]
    return "\n".join(lines)


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    check = "--check" in sys.argv[1:]
    path = arguments[0] if arguments else DEFAULT_INPUT
    with open(path, encoding="utf-8") as file:
        text = swift(roots(file.read()))
    if check:
        with open(OUTPUT, encoding="utf-8") as file:
            if file.read() != text:
                print(f"generate-mozilla-roots: {os.path.relpath(OUTPUT)} differs from what {path} gives: run the script again")
                sys.exit(1)
        print(f"generate-mozilla-roots: {os.path.relpath(OUTPUT)} is what {path} gives")
        return
    with open(OUTPUT, "w", encoding="utf-8") as file:
        file.write(text)
    print(f"generate-mozilla-roots: wrote {os.path.relpath(OUTPUT)}")


if __name__ == "__main__":
    main()
