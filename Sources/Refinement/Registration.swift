import Geometry
import LinearAlgebra

/// A correction of a camera's world pose by the four degrees of freedom drift has: a turn
/// `yaw` (radians) about the world's up axis through the camera's centre, then a shift
/// `translation`. Roll and pitch are not touched: gravity makes them observable to ARKit,
/// so they do not drift.
public struct YawShift: Sendable, Equatable, Codable {
    public var yaw: Double
    public var translation: Vec3
    public static let zero = YawShift(yaw: 0, translation: .zero)
    public init(yaw: Double, translation: Vec3) { self.yaw = yaw; self.translation = translation }

    /// `pose` corrected: turned about `up` through its centre, then shifted.
    public func applied(to pose: Pose, up: Vec3) -> Pose {
        Pose(rotation: Matrix3.rotation(axis: up, angle: yaw) * pose.rotation, translation: pose.translation + translation)
    }

    /// The shift's length, metres, and the turn, degrees.
    public var metres: Double { length(translation) }
    public var degrees: Double { abs(yaw) * 180 / .pi }
}

/// The outcome of registering one keyframe's depth onto another's.
public struct RegistrationResult: Sendable {
    /// The correction of the source keyframe's pose that puts its surface on the target's.
    public var correction: YawShift
    /// Share of the source's surface points that land on the target's surface (in its view,
    /// where it has a normal) and lie within `inlierNoise` noise deviations of it after
    /// registration (Open3D's "fitness", counted over the overlap).
    public var fitness: Double
    /// RMS point-to-plane distance of those inliers, metres ...
    public var rms: Double
    /// ... and in units of the two depths' noise at their depth (about 0.95 when the
    /// surfaces agree up to the noise: a normal distribution cut at 2.5).
    public var normalizedRMS: Double
    /// Inliers counted.
    public var inliers: Int
    /// The smallest eigenvalue of the normal equations per inlier (rotation scaled by 1 m):
    /// near 0 when the surfaces seen leave a direction free (one flat wall, a corridor).
    public var conditioning: Double
    /// The normal equations at the result (4×4, row-major; yaw about the source's centre,
    /// then the shift in the world): the correction's information matrix when the depth noise
    /// is what `noise` says. Surfaces that leave a direction free leave it without information.
    public var information: SIMD16<Double>
    /// The sum of the correspondences' weights in `information` (its scale per point).
    public var weightSum: Double
    /// The brightness term's share (`Registration.register(photometric:)`): its normal
    /// equations at the result (same order as `information`; zero without it), the edge points
    /// it used, and their RMS brightness difference after registration (levels).
    public var photometricInformation = SIMD16<Double>()
    public var photometricPoints = 0
    public var photometricRMS = 0.0
    /// With the brightness term, how much the depth disagrees with the result: the χ² (4
    /// degrees of freedom, the depth's noise) of the step the depth alone would take from it.
    /// Near 1 when the two agree; large where the brightness misleads (reflections on a glossy
    /// floor, colour out of step with the depth), in the directions the depth can judge.
    public var brightnessDisagreement = 0.0

    /// `information` in the directions the surfaces constrain: directions whose eigenvalue per
    /// unit weight (as `conditioning`) is below `minimum` carry none. There projective ICP
    /// slides along the free direction by the noise of the normals and reports a confidence
    /// it does not have (measured: 10–20 mm errors between neighbouring keyframes at χ² of
    /// several hundred where a floor and one wall are seen).
    public func constrainedInformation(minimum: Double) -> SIMD16<Double> {
        var m = Matrix(rows: 4, cols: 4)
        for r in 0..<4 { for c in 0..<4 { m[r, c] = information[r * 4 + c] } }
        guard let eigen = try? LAPACK.symmetricEigen(m) else { return SIMD16() }
        var out = SIMD16<Double>()
        for (k, value) in eigen.values.enumerated() where value / max(weightSum, .leastNonzeroMagnitude) >= minimum {
            for r in 0..<4 { for c in 0..<4 { out[r * 4 + c] += value * eigen.vectors[r, k] * eigen.vectors[c, k] } }
        }
        return out
    }
}

/// Projective point-to-plane ICP in the four drift degrees of freedom (`YawShift`): each
/// source point is projected into the target keyframe's grid (KinectFusion's association,
/// no search) and its distance to the target's tangent plane is minimised, coarse to fine
/// (correspondences accepted within 30, 15, 6, then 3 cm of the target's tangent plane, and
/// along it within that and two of the grid's cells' footprint). Gauss-Newton on 4 unknowns,
/// solved by LAPACK's Cholesky.
public struct Registration {
    /// Correspondence gates, metres, and Gauss-Newton steps at each.
    public static let levels: [(gate: Double, steps: Int)] = [(0.30, 8), (0.15, 8), (0.06, 8), (0.03, 10)]
    /// A source point is an inlier within 2.5 standard deviations of the two depths' noise
    /// (`noise`) of the target's plane after registration.
    public static let inlierNoise = 2.5
    /// The LiDAR's depth noise at `d` metres, σ(d) = 1 mm + 0.2% d + 0.15% d² (0.7% at 3 m,
    /// what real iPhone captures measure; synth renders the same): far points count less in
    /// registration, and are judged by their own noise.
    public static func noise(_ d: Double) -> Double { 0.001 + 0.002 * d + 0.0015 * d * d }
    /// Corresponding normals differ by at most 45°.
    static let normalAgreement = 0.7071
    /// The fewest correspondences a step needs.
    static let minimumCorrespondences = 60

    public let up: Vec3
    public init(up: Vec3) { self.up = up }

    /// Registers `source` (at world pose `sourcePose`) onto `target` (at `targetPose`, held).
    /// Nil when too few points correspond at some level. With `photometric`, and where the
    /// source has brightness edges and the target a brightness image, the finest level also
    /// asks each edge point to land where the target sees its brightness (`photometricEquations`).
    public func register(source: KeyframeDepth, sourcePose: Pose, target: KeyframeDepth, targetPose: Pose,
                         photometric: Bool = false) -> RegistrationResult? {
        // The source's surface points and normals in the world, once.
        var points: [Vec3] = [], normals: [Vec3] = []
        points.reserveCapacity(source.points.count); normals.reserveCapacity(source.points.count)
        for (p, n) in zip(source.points, source.normals) where n != .zero {
            points.append(sourcePose.apply(Vec3(Double(p.x), Double(p.y), Double(p.z))))
            normals.append(sourcePose.rotation * Vec3(Double(n.x), Double(n.y), Double(n.z)))
        }
        guard points.count >= Self.minimumCorrespondences else { return nil }
        let centre = sourcePose.translation
        let toTarget = targetPose.inverse
        // The source's brightness edges in the world, when both sides have brightness.
        var edges: [SIMD4<Double>] = []
        if photometric, let e = source.edges, target.luma != nil, e.points.count >= Self.minimumCorrespondences {
            edges = e.points.map { p in
                let w = sourcePose.apply(Vec3(Double(p.x), Double(p.y), Double(p.z)))
                return SIMD4(w.x, w.y, w.z, Double(p.w))
            }
        }
        var yaw = 0.0, shift = Vec3.zero
        for (l, level) in Self.levels.enumerated() {
            for _ in 0..<level.steps {
                guard var normal = normalEquations(points, normals, centre: centre, yaw: yaw, shift: shift, toTarget: toTarget,
                                                   targetPose: targetPose, target: target, gate: level.gate) else { return nil }
                // brightness at the finest level only: its reach is a pixel or two
                if l == Self.levels.count - 1, !edges.isEmpty {
                    if let p = photometricEquations(edges, centre: centre, yaw: yaw, shift: shift, toTarget: toTarget, targetPose: targetPose, target: target) { for k in 0..<16 { normal.h[k] += p.h[k] }; for k in 0..<4 { normal.g[k] += p.g[k] } }
                }
                guard let step = Self.solve(normal.h, normal.g) else { return nil }
                // compose: turn by step[0] about the same centre, then shift
                shift = Matrix3.rotation(axis: up, angle: step[0]) * shift + Vec3(step[1], step[2], step[3])
                yaw += step[0]
                if abs(step[0]) < 1e-6 && abs(step[1]) + abs(step[2]) + abs(step[3]) < 1e-5 { break }
            }
        }
        guard let final = normalEquations(points, normals, centre: centre, yaw: yaw, shift: shift, toTarget: toTarget,
                                          targetPose: targetPose, target: target, gate: Self.levels.last!.gate) else { return nil }
        var scaled = Matrix(rows: 4, cols: 4)
        for r in 0..<4 { for c in 0..<4 { scaled[r, c] = final.h[r * 4 + c] / max(final.weights, .leastNonzeroMagnitude) } }
        let conditioning = (try? LAPACK.symmetricEigen(scaled).values.first) ?? 0
        let n = Double(max(1, final.inliers))
        var result = RegistrationResult(correction: YawShift(yaw: yaw, translation: shift), fitness: Double(final.inliers) / Double(max(1, final.inView)),
                                        rms: final.inliers > 0 ? (final.squares / n).squareRoot() : .infinity,
                                        normalizedRMS: final.inliers > 0 ? (final.normalizedSquares / n).squareRoot() : .infinity,
                                        inliers: final.inliers, conditioning: conditioning, information: SIMD16(final.h), weightSum: final.weights)
        if !edges.isEmpty, let p = photometricEquations(edges, centre: centre, yaw: yaw, shift: shift, toTarget: toTarget, targetPose: targetPose, target: target) {
            result.photometricInformation = SIMD16(p.h)
            result.photometricPoints = p.count
            result.photometricRMS = p.rms
            // how far the depth alone would pull away from here, in its own noise: gᵀ H⁻¹ g
            if let step = Self.solve(final.h, final.g) { result.brightnessDisagreement = (0..<4).reduce(0) { $0 + step[$1] * final.g[$1] } }
        }
        return result
    }

    /// The brightness term's normal equations at one correction.
    struct Photometric {
        var h: [Double], g: [Double]
        /// Edge points used, and their RMS brightness difference (levels).
        var count: Int, rms: Double
    }

    /// The normal equations of the brightness term at the correction (yaw, shift): each of the
    /// source's edge points (world position and brightness) is projected into the target's
    /// brightness image, and the difference of the two brightnesses is minimised (direct
    /// image alignment, as RGB-D odometry does; here in the four drift directions). Its
    /// Jacobian is the target's brightness gradient through the projection. Points hidden in
    /// the target (its depth there nearer by more than the gate) and points off its image
    /// are left out. A change of exposure between the frames is taken out as the median
    /// difference. The brightness noise is measured, not assumed: 1.4826 × the median
    /// absolute difference left (at least a level), with Huber's weight at 1.5 of it and points
    /// beyond 4 of it dropped (occlusions, reflections). Nil below `minimumCorrespondences`.
    func photometricEquations(_ edges: [SIMD4<Double>], centre: Vec3, yaw: Double, shift: Vec3, toTarget: Pose, targetPose: Pose,
                              target: KeyframeDepth) -> Photometric? {
        guard let luma = target.luma else { return nil }
        let turn = Matrix3.rotation(axis: up, angle: yaw)
        let k = target.pixelIntrinsics, fx = k.fx, fy = k.fy, cx = k.cx, cy = k.cy
        var residuals: [Double] = [], jacobians: [SIMD4<Double>] = []
        residuals.reserveCapacity(edges.count); jacobians.reserveCapacity(edges.count)
        for e in edges {
            let p = turn * (Vec3(e.x, e.y, e.z) - centre) + centre + shift
            let q = toTarget.apply(p)
            let d = -q.z
            guard d > 0.05 else { continue }
            let u = q.x / d * fx + cx, v = -q.y / d * fy + cy
            guard let sample = luma.sample(u, v) else { continue }
            // hidden behind a nearer surface of the target
            if let cell = target.cell(for: q) {
                let tz = target.points[cell].z
                if tz < 0 && Double(-tz) < d - 3 * Self.noise(d) - 0.01 { continue }
            }
            // d(u, v)/dq, then the gradient as a world direction
            let du = Vec3(fx / d, 0, fx * q.x / (d * d)), dv = Vec3(0, -fy / d, -fy * q.y / (d * d))
            let gw = targetPose.rotation * (sample.gx * du + sample.gy * dv)
            residuals.append(sample.value - e.w)
            jacobians.append(SIMD4(dot(gw, cross(up, p - centre)), gw.x, gw.y, gw.z))
        }
        guard residuals.count >= Self.minimumCorrespondences else { return nil }
        // the two frames' exposures may differ: their median difference is taken out
        let offset = residuals.sorted()[residuals.count / 2]
        for i in residuals.indices { residuals[i] -= offset }
        let magnitudes = residuals.map { abs($0) }.sorted()
        let sigma = max(1, 1.4826 * magnitudes[magnitudes.count / 2])
        var h = [Double](repeating: 0, count: 16), g = [Double](repeating: 0, count: 4)
        var count = 0, squares = 0.0
        for (r, j) in zip(residuals, jacobians) {
            let z = abs(r) / sigma
            guard z < 4 else { continue }
            let weight = (z < 1.5 ? 1 : 1.5 / z) / (sigma * sigma)
            for a in 0..<4 {
                g[a] -= weight * j[a] * r
                for b in 0..<4 { h[a * 4 + b] += weight * j[a] * j[b] }
            }
            count += 1; squares += r * r
        }
        guard count >= Self.minimumCorrespondences else { return nil }
        return Photometric(h: h, g: g, count: count, rms: (squares / Double(count)).squareRoot())
    }

    /// The Gauss-Newton normal equations (4×4 row-major `h`, right side `g`) at the
    /// correction (yaw, shift), over the correspondences within `gate`, each weighted by the
    /// inverse of its noise variance (and Huber's weight at 1.5 deviations: a few wrong
    /// correspondences at a coarse gate pull little); with the sum of the weights, the points
    /// that land on the target's surface, the correspondences, the inliers and their summed
    /// squared residuals (metres², and in noise units). Nil below the minimum.
    func normalEquations(_ points: [Vec3], _ normals: [Vec3], centre: Vec3, yaw: Double, shift: Vec3, toTarget: Pose,
                         targetPose: Pose, target: KeyframeDepth, gate: Double)
        -> (h: [Double], g: [Double], weights: Double, inView: Int, count: Int, inliers: Int, squares: Double, normalizedSquares: Double)? {
        let turn = Matrix3.rotation(axis: up, angle: yaw)
        var h = [Double](repeating: 0, count: 16), g = [Double](repeating: 0, count: 4)
        var count = 0, inView = 0, inliers = 0, squares = 0.0, normalizedSquares = 0.0, weights = 0.0
        let gate2 = gate * gate
        for (p0, n0) in zip(points, normals) {
            let p = turn * (p0 - centre) + centre + shift
            let q = toTarget.apply(p)
            guard let cell = target.cell(for: q) else { continue }
            let tn = target.normals[cell]
            guard tn != .zero else { continue }
            inView += 1
            let tp = target.points[cell]
            let tpc = Vec3(Double(tp.x), Double(tp.y), Double(tp.z)), tnc = Vec3(Double(tn.x), Double(tn.y), Double(tn.z))
            let d = q - tpc
            let r = dot(tnc, d)
            // within the gate of the target's plane, and beside its cell: the nearest cell's
            // point lies up to a cell's footprint away along the surface (z / fx of the grid:
            // 10 cm at 5 m on a 64×48 grid), more where the surface is seen obliquely
            let along = dot(d, d) - r * r, slant = max(0.3, abs(dot(tnc, tpc)) / length(tpc))
            let reach = gate + 2 * -tpc.z / (target.intrinsics.fx * slant)
            guard r * r < gate2, along < reach * reach else { continue }
            let nw = targetPose.rotation * tnc
            guard dot(nw, turn * n0) > Self.normalAgreement else { continue }
            // a pixel's noise, twice: a grid cell's mean has less, so the inlier gate and the
            // RMS test are lenient and the information conservative (median χ² below 1 at the truth)
            let sigma = Self.noise(-tpc.z) * 2.0.squareRoot(), z = abs(r) / sigma
            let weight = (z < 1.5 ? 1 : 1.5 / z) / (sigma * sigma)
            weights += weight
            let j = SIMD4(dot(nw, cross(up, p - centre)), nw.x, nw.y, nw.z)  // no allocation per point
            for a in 0..<4 {
                g[a] -= weight * j[a] * r
                for b in 0..<4 { h[a * 4 + b] += weight * j[a] * j[b] }
            }
            count += 1
            if z < Self.inlierNoise { inliers += 1; squares += r * r; normalizedSquares += z * z }
        }
        guard count >= Self.minimumCorrespondences else { return nil }
        return (h, g, weights, inView, count, inliers, squares, normalizedSquares)
    }

    /// The 4-vector solving `h x = g`, lightly damped; nil when singular.
    static func solve(_ h: [Double], _ g: [Double]) -> [Double]? {
        var a = Matrix(rows: 4, cols: 4)
        let trace = h[0] + h[5] + h[10] + h[15]
        for r in 0..<4 { for c in 0..<4 { a[r, c] = h[r * 4 + c] } ; a[r, r] += 1e-9 * trace + 1e-12 }
        var b = Matrix(rows: 4, cols: 1)
        for r in 0..<4 { b[r, 0] = g[r] }
        return (try? LAPACK.solvePositiveDefinite(a, b))?.storage
    }
}
