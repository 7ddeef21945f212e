/// Compressed bodies for the lab's servers, written without zlib: gzip (RFC 1952) and zlib-wrapped
/// deflate (RFC 1950) around deflate stored blocks (RFC 1951 §3.2.4), and a deflate stream of
/// zeros for a "zip bomb" (fixed-Huffman back-references, RFC 1951 §3.2.6).
///
/// Hand-written because the lab needs exact, reproducible byte streams (an endless bomb, a corrupt
/// checksum) that a compression library does not produce; the client's decoder is zlib, through
/// swift-nio-extras, so these bytes also check that the two agree.
package enum LabGzip {
    /// `data` as one gzip member: stored blocks, CRC-32 and length.
    package static func gzip(_ data: [UInt8]) -> [UInt8] {
        // ID1 ID2 CM=8 FLG=0 MTIME=0 XFL=0 OS=255 (unknown).
        var output: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 255]
        output += storedBlocks(data)
        output += littleEndian(crc32(data))
        output += littleEndian(UInt32(truncatingIfNeeded: data.count))
        return output
    }

    /// `data` as a zlib stream (HTTP's `deflate` coding, RFC 9110 §8.4.1.2): header, stored blocks, Adler-32.
    package static func zlib(_ data: [UInt8]) -> [UInt8] {
        // CMF = 0x78 (deflate, 32 KiB window), FLG = 0x01 so that (CMF * 256 + FLG) % 31 == 0.
        var output: [UInt8] = [0x78, 0x01]
        output += storedBlocks(data)
        let adler = adler32(data)
        output += [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)]
        return output
    }

    /// Deflate stored blocks of at most 65,535 bytes; the last one has BFINAL set.
    static func storedBlocks(_ data: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var offset = 0
        repeat {
            let length = min(65_535, data.count - offset)
            let final: UInt8 = offset + length == data.count ? 1 : 0
            // BFINAL, BTYPE=00, then padding to the byte boundary: one byte.
            output.append(final)
            output += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            output += data[offset..<offset + length]
            offset += length
        } while offset < data.count
        return output
    }

    /// The start of a gzip member whose deflate data decodes to zeros without end: the gzip header,
    /// then a non-final fixed-Huffman block holding a literal zero and the first back-references.
    /// Continue it with ``zeroBombUnit`` as many times as wanted: each 13-byte unit adds 2,064 zero
    /// bytes (about 159 times its size). The stream never ends, so a decoder sees only growth.
    package static let zeroBombPrefix: [UInt8] = {
        var bits = BitWriter()
        bits.write(0, count: 1)  // BFINAL = 0
        bits.write(1, count: 2)  // BTYPE = 01, fixed Huffman (written LSB first)
        bits.writeHuffman(0b0011_0000, length: 8)  // literal 0: codes 0–143 are 00110000 + value, 8 bits
        // Back-references until the writer is back on a byte boundary with a whole number of units
        // ahead: 11 bits so far, 13 per reference; 8 references make 104 bits, a multiple of 8.
        while bits.bitCount % 8 != 0 { bits.writeZeroRun() }
        return [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 255] + bits.bytes
    }()

    /// Eight back-references of 258 zeros (length code 285, distance code 0), 13 bytes; the same
    /// bytes each time because the prefix ends on a byte boundary.
    package static let zeroBombUnit: [UInt8] = {
        var bits = BitWriter()
        for _ in 0..<8 { bits.writeZeroRun() }
        return bits.bytes
    }()

    /// CRC-32 (ISO 3309, as gzip uses it).
    package static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }

    private static let crcTable: [UInt32] = (0..<256).map { index -> UInt32 in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// Adler-32 (RFC 1950 §8.2).
    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
    }

    /// Deflate's bit order: fields LSB first, Huffman codes MSB first (RFC 1951 §3.1.1).
    private struct BitWriter {
        var bytes: [UInt8] = []
        var bitCount = 0

        mutating func writeBit(_ bit: UInt32) {
            if bitCount % 8 == 0 { bytes.append(0) }
            bytes[bytes.count - 1] |= UInt8(bit & 1) << UInt8(bitCount % 8)
            bitCount += 1
        }

        mutating func write(_ value: UInt32, count: Int) {
            for index in 0..<count { writeBit(value >> UInt32(index)) }
        }

        mutating func writeHuffman(_ code: UInt32, length: Int) {
            for index in stride(from: length - 1, through: 0, by: -1) { writeBit(code >> UInt32(index)) }
        }

        /// Length 258 (code 285: 11000101, 8 bits, no extra bits), distance 1 (code 0: 00000, 5 bits).
        mutating func writeZeroRun() {
            writeHuffman(0b1100_0101, length: 8)
            writeHuffman(0, length: 5)
        }
    }
}
