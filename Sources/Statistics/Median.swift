/// The median as numpy computes it: the middle value, or the mean of the two middle
/// values for an even count; 0 for no values.
public enum Median {
    public static func of(_ values: [Double]) -> Double { of(sorted: values.sorted()) }

    /// The median of values already sorted ascending.
    public static func of(sorted s: [Double]) -> Double {
        let n = s.count
        guard n > 0 else { return 0 }
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
    }
}
