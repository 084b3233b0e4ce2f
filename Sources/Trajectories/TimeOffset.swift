import Foundation
import Geometry
import Statistics

/// Estimates a constant time offset between two trajectories (clocks of two devices or a
/// logging delay): the offset added to the estimate's stamps that minimises the RMS of the
/// translation error after SE(3) Umeyama alignment (or, not `aligned`, without alignment:
/// for references whose rotation Umeyama cannot determine, such as a collinear stage), with
/// the estimate interpolated at the reference stamps. A coarse scan over ±`range` seconds, then golden-section refinement.
public enum TimeOffset {
    public struct Estimate: Sendable, Codable, Equatable {
        public var offset: Double
        public var rmse: Double
        public var poses: Int
    }

    public static func estimate(reference: Trajectory, estimate: Trajectory, range: Double = 0.5, maxDiff: Double = 0.01,
                                tolerance: Double = 1e-4, aligned: Bool = true) throws -> Estimate {
        func cost(_ offset: Double) -> (Double, Int)? {
            guard let r = try? Association.interpolated(reference, estimate, maxDiff: max(maxDiff, 0.5 * medianGap(estimate)), offset: offset),
                  r.first.count >= 10 else { return nil }
            var moved = r.second
            if aligned {
                guard let a = try? Umeyama.align(r.second.positions, onto: r.first.positions, withScale: false) else { return nil }
                moved = r.second.applying(scale: 1, then: a.pose)
            }
            let e = zip(moved.positions, r.first.positions).map { length($0 - $1) }
            return (ErrorStatistics(e).rmse, e.count)
        }
        let steps = 100
        var best: (offset: Double, rmse: Double)?
        for k in 0...steps {
            let o = -range + 2 * range * Double(k) / Double(steps)
            if let (c, _) = cost(o), best == nil || c < best!.rmse { best = (o, c) }
        }
        guard var (lo, hi) = best.map({ ($0.offset - 2 * range / Double(steps), $0.offset + 2 * range / Double(steps)) }) else {
            throw TrajectoryError.association("no offset within ±\(range) s gives 10 or more associated poses")
        }
        let g = (5.0.squareRoot() - 1) / 2
        var c = hi - g * (hi - lo), d = lo + g * (hi - lo)
        while hi - lo > tolerance {
            let fc = cost(c)?.0 ?? .infinity, fd = cost(d)?.0 ?? .infinity
            if fc < fd { hi = d } else { lo = c }
            c = hi - g * (hi - lo); d = lo + g * (hi - lo)
        }
        let o = (lo + hi) / 2
        guard let (rmse, n) = cost(o) else { throw TrajectoryError.association("the estimated offset \(o) s leaves too few associated poses") }
        return Estimate(offset: o, rmse: rmse, poses: n)
    }

    static func medianGap(_ t: Trajectory) -> Double {
        guard let s = t.stamps, s.count > 1 else { return 0 }
        return Median.of(zip(s.dropFirst(), s).map { $0 - $1 })
    }
}
