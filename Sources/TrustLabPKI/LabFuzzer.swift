/// Inputs for fuzzing text parsers (HTTP authentication fields, and more): random bytes, random
/// strings over a grammar's alphabet, and mutations of valid seeds — reproducible from a seed.
package struct LabFuzzer: Sendable {
    /// SplitMix64: small, fast, and the same sequence everywhere for a seed.
    package struct Generator: RandomNumberGenerator, Sendable {
        var state: UInt64
        /// A generator whose sequence is fixed by `seed`.
        package init(seed: UInt64) { state = seed }
        /// The next value of the sequence.
        package mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Valid inputs to mutate and splice.
    package var seeds: [String]
    /// Characters that matter to the grammar (weighted by repetition).
    package var alphabet: [String]
    /// Caps the size of generated inputs (mutated seeds at four times this many bytes).
    package var maximumLength: Int
    private var generator: Generator

    /// A fuzzer reproducible from `seed`, mutating `seeds` and drawing characters from `alphabet`.
    package init(seed: UInt64, seeds: [String], alphabet: [String], maximumLength: Int = 600) {
        self.generator = Generator(seed: seed)
        self.seeds = seeds
        self.alphabet = alphabet
        self.maximumLength = maximumLength
    }

    /// The `index`-th kind of input in turn: mutated seed (half), grammar soup, raw bytes, spliced seeds.
    package mutating func next() -> String {
        switch generator.next() % 8 {
        case 0, 1, 2, 3: return mutate(seeds.randomElement(using: &generator) ?? "")
        case 4, 5: return soup()
        case 6: return rawBytes()
        default:
            let a = seeds.randomElement(using: &generator) ?? ""
            let b = seeds.randomElement(using: &generator) ?? ""
            let cut = a.isEmpty ? 0 : Int.random(in: 0...a.utf8.count, using: &generator)
            return String(decoding: Array(a.utf8.prefix(cut)) + Array(b.utf8), as: UTF8.self)
        }
    }

    private mutating func soup() -> String {
        let count = Int.random(in: 0...min(maximumLength, 120), using: &generator)
        var text = ""
        for _ in 0..<count { text += alphabet.randomElement(using: &generator) ?? "" }
        return text
    }

    private mutating func rawBytes() -> String {
        let count = Int.random(in: 0...min(maximumLength, 200), using: &generator)
        return String(decoding: (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }, as: UTF8.self)
    }

    private mutating func mutate(_ seed: String) -> String {
        var bytes = Array(seed.utf8)
        let edits = Int.random(in: 1...6, using: &generator)
        for _ in 0..<edits {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
            switch generator.next() % 6 {
            case 0 where !bytes.isEmpty: bytes[position] ^= UInt8.random(in: 1...255, using: &generator)
            case 1 where !bytes.isEmpty: bytes.remove(at: position)
            case 2: bytes.insert(contentsOf: Array((alphabet.randomElement(using: &generator) ?? "").utf8), at: position)
            case 3 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...40, using: &generator))
                bytes.insert(contentsOf: bytes[position..<end], at: position)  // duplicate a span
            case 4 where !bytes.isEmpty:
                bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...20, using: &generator)))
            default:
                bytes.append(contentsOf: Array((alphabet.randomElement(using: &generator) ?? "").utf8))
            }
            if bytes.count > maximumLength * 4 { bytes.removeLast(bytes.count - maximumLength * 4) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
