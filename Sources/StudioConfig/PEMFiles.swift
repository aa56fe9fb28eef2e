import Foundation

/// The TLS files of `http:` (`tls_cert`, `tls_key`): PEM text of the right kind, read whole. What
/// GnuTLS then makes of them (a key that does not belong to the certificate) the server reports when
/// the listener starts.
public enum PEMFile {
    public enum Kind: Sendable {
        /// One or more `CERTIFICATE` blocks: the server's certificate first, then its chain.
        case certificate
        /// One unencrypted `PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY` block.
        case privateKey

        var noun: String {
            switch self {
            case .certificate: return "certificate"
            case .privateKey: return "private key"
            }
        }
    }

    /// A PEM file is a few kilobytes; anything this large is not one.
    static let maxBytes = 1 << 20

    /// The file's bytes when it is PEM of `kind`; otherwise why not, naming `path`.
    public static func read(_ path: String, as kind: Kind) throws(ValueError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw ValueError(exists ? "\(kind.noun) '\(path)' cannot be read: permission denied" : "\(kind.noun) '\(path)' not found")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maxBytes + 1)) ?? Data()
        guard data.count <= maxBytes else { throw ValueError("'\(path)' is larger than 1 MiB: not a PEM \(kind.noun)") }
        let bytes = [UInt8](data)
        let text = String(decoding: bytes, as: UTF8.self)
        let labels = Self.labels(text)
        let keyLabels = ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]
        switch kind {
        case .certificate:
            if labels.contains("CERTIFICATE") { return bytes }
            if labels.contains(where: keyLabels.contains) {
                throw ValueError("'\(path)' holds a private key, not a certificate (are tls_cert and tls_key swapped?)")
            }
        case .privateKey:
            if labels.contains("ENCRYPTED PRIVATE KEY") || text.contains("Proc-Type: 4,ENCRYPTED") {
                throw ValueError("the private key '\(path)' is encrypted, and the server starts without anyone to type its passphrase: decrypt it once (`openssl pkey -in KEY -out KEY.plain`) and keep that file 0600")
            }
            if labels.contains(where: keyLabels.contains) { return bytes }
            if labels.contains("CERTIFICATE") {
                throw ValueError("'\(path)' holds a certificate, not a private key (are tls_cert and tls_key swapped?)")
            }
        }
        let isText = bytes.allSatisfy { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0) }
        let block = kind == .certificate ? "CERTIFICATE" : "PRIVATE KEY"
        if !isText {
            throw ValueError("'\(path)' is not PEM text (binary: DER?); convert it with `openssl \(kind == .certificate ? "x509" : "pkey") -inform der -in FILE -out FILE.pem`")
        }
        throw ValueError("'\(path)' is not a PEM \(kind.noun): it has no -----BEGIN \(block)----- line")
    }

    /// The labels of the `-----BEGIN LABEL-----` lines in `text`.
    static func labels(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let line = line.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("-----BEGIN "), line.hasSuffix("-----"), line.count > 16 else { return nil }
            return String(line.dropFirst(11).dropLast(5))
        }
    }

    /// Why `path` is too open for a private key (its group or others may read it); nil when only its
    /// owner may (or it cannot be looked at: reading it says why).
    public static func exposure(_ path: String) -> String? {
        guard let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int, mode & 0o077 != 0 else {
            return nil
        }
        let who = mode & 0o007 != 0 ? "every user" : "its group"
        return "the TLS private key \(path) is readable by \(who) (mode \(String(mode & 0o777, radix: 8))): `chmod 600 \(path)`, owned by the server's user"
    }
}
