/// The median as numpy computes it: the middle value, or the mean of the two middle
/// values for an even count; 0 for no values.
public enum Median {
    public static func of(_ values: [Double]) -> Double { of(sorted: values.sorted()) }

    /// The same median without sorting: Hoare's selection (expected O(n), middle-of-three
    /// pivots), reordering `values`. For large samples where a sort would dominate (the pose
    /// convention check's tens of thousands of residuals per convention).
    public static func of(selectingIn values: inout [Double]) -> Double {
        let n = values.count
        guard n > 0 else { return 0 }
        let upper = select(&values, n / 2)
        guard n % 2 == 0 else { return upper }
        // The lower middle is the largest value left of the upper one after the selection.
        return (values[..<(n / 2)].max()! + upper) / 2
    }

    /// Puts the k-th smallest value at index k, smaller or equal ones before it, and returns it.
    static func select(_ a: inout [Double], _ k: Int) -> Double {
        var lo = 0, hi = a.count - 1
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            let pivot = Swift.max(Swift.min(a[lo], a[mid]), Swift.min(Swift.max(a[lo], a[mid]), a[hi]))
            var i = lo, j = hi
            while i <= j {
                while a[i] < pivot { i += 1 }
                while a[j] > pivot { j -= 1 }
                if i <= j { a.swapAt(i, j); i += 1; j -= 1 }
            }
            if k <= j { hi = j } else if k >= i { lo = i } else { break }
        }
        return a[k]
    }

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
