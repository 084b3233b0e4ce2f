/// Sorting by 64-bit key with a least-significant-digit radix sort: linear time, stable,
/// and much faster than a comparison sort on the hundreds of thousands of voxel keys a
/// cloud has. Digits every key shares (the high bits of nearby voxel coordinates) cost
/// one histogram and no pass.
public enum KeySort {
    /// The permutation that sorts `keys` ascending (stable: equal keys keep their order).
    public static func order(_ keys: UnsafeBufferPointer<UInt64>) -> [Int32] {
        let n = keys.count
        precondition(n <= Int(Int32.max), "too many keys")
        var order = (0..<Int32(n)).map { $0 }
        guard n > 1 else { return order }
        let bits = 11, buckets = 1 << bits, mask = UInt64(buckets - 1)
        var scratch = [Int32](repeating: 0, count: n)
        var counts = [Int](repeating: 0, count: buckets)
        for shift in stride(from: 0, to: 64, by: bits) {
            let s = UInt64(shift)
            for i in 0..<buckets { counts[i] = 0 }
            for k in keys { counts[Int(truncatingIfNeeded: k >> s & mask)] &+= 1 }
            if counts.contains(n) { continue }  // one digit for all: nothing moves
            var sum = 0
            for i in 0..<buckets { let c = counts[i]; counts[i] = sum; sum &+= c }
            order.withUnsafeBufferPointer { src in
                scratch.withUnsafeMutableBufferPointer { dst in
                    counts.withUnsafeMutableBufferPointer { start in
                        for j in src {
                            let d = Int(truncatingIfNeeded: keys[Int(j)] >> s & mask)
                            dst[start[d]] = j
                            start[d] &+= 1
                        }
                    }
                }
            }
            swap(&order, &scratch)
        }
        return order
    }
}
