import Foundation

/// The one JSON style of every depthpose output: pretty (or one line, for JSON Lines), keys sorted, slashes unescaped,
/// and non-finite numbers as the strings "inf", "-inf" and "nan" (JSON has no such numbers).
public enum JSONOutput {
    public static func encode<T: Encodable>(_ value: T, pretty: Bool = true) throws -> Data {
        let enc = JSONEncoder()
        enc.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        enc.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try enc.encode(value)
    }

    /// `value` as JSON text.
    public static func text<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }
}
