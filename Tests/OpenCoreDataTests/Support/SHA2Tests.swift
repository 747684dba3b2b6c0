import Foundation
import Testing

@testable import OpenCoreDataRuntime

/// NIST FIPS 180-4 example vectors (csrc.nist.gov "Examples with intermediate values").
@Suite struct SHA2Tests {
    static let message448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
    static let message896 =
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"

    @Test func sha256Vectors() {
        #expect(hex(SHA2.sha256("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA2.sha256("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA2.sha256(Self.message448.utf8)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex(SHA2.sha256(Self.message896.utf8)) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    @Test func sha512Vectors() {
        #expect(hex(SHA2.sha512("abc".utf8)) == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(hex(SHA2.sha512("".utf8)) == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e")
        #expect(hex(SHA2.sha512(Self.message448.utf8)) == "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c33596fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445")
        #expect(hex(SHA2.sha512(Self.message896.utf8)) == "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909")
    }

    @Test func millionAsSHA256() {
        let million = Data(repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(hex(SHA2.sha256(million)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func millionAsSHA512() {
        let million = Data(repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(hex(SHA2.sha512(million)) == "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b")
    }

    /// Feeding the input in pieces of every size around the block boundaries gives the one-shot digest.
    @Test func incrementalUpdatesMatchOneShot() {
        let input = Array((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let whole256 = SHA2.sha256(input)
        let whole512 = SHA2.sha512(input)
        for piece in [1, 3, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129] {
            var h256 = SHA256Hasher()
            var h256raw = SHA256Hasher()
            var h512 = SHA512Hasher()
            var start = 0
            while start < input.count {
                let chunk = input[start..<min(start + piece, input.count)]
                h256.update(chunk)
                chunk.withUnsafeBytes { h256raw.update($0) }
                h512.update(chunk)
                start += piece
            }
            #expect(h256.finalize() == whole256, "SHA-256, pieces of \(piece)")
            #expect(h256raw.finalize() == whole256, "SHA-256 raw buffers, pieces of \(piece)")
            #expect(h512.finalize() == whole512, "SHA-512, pieces of \(piece)")
        }
    }

    private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
}
