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

/// A percentile as numpy's default (`np.percentile`, linear): the value at rank
/// `p/100 · (n − 1)` of the sorted values, interpolated between neighbours; 0 for no values.
public enum Percentile {
    public static func of(_ values: [Double], _ p: Double) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        let rank = min(max(p, 0), 100) / 100 * Double(s.count - 1)
        let i = Int(rank.rounded(.down)), f = rank - Double(i)
        return i + 1 < s.count ? s[i] + f * (s[i + 1] - s[i]) : s[i]
    }
}
