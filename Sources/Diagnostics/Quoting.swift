/// Untrusted text quoted in an error message: at most `limit` characters, with control
/// characters (terminal escapes, line breaks) shown as `\u{..}` and the length given when
/// cut, so a hostile token can neither flood the log nor drive the terminal.
public func quoted<S: StringProtocol>(_ text: S, limit: Int = 40) -> String {
    var out = ""
    var count = 0
    for ch in text.unicodeScalars {
        if count == limit { return out + "…(\(text.utf8.count) bytes)" }
        if ch.value < 0x20 || ch.value == 0x7F || (0x80..<0xA0).contains(ch.value) {
            out += "\\u{\(String(ch.value, radix: 16))}"
        } else {
            out.unicodeScalars.append(ch)
        }
        count += 1
    }
    return out
}
