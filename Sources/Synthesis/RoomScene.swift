import Foundation
import Geometry

/// A furnished room in ARKit world coordinates (metres, +y up, floor at y = 0): the
/// walls, floor and ceiling of an axis-aligned box, boxes (furniture), spheres and
/// vertical cylinders (curved objects). Ray casting returns the nearest hit.
public struct RoomScene: Sendable, Codable, Equatable {
    public struct Box: Sendable, Codable, Equatable { public var name: String; public var min: [Double]; public var max: [Double] }
    public struct Sphere: Sendable, Codable, Equatable { public var name: String; public var centre: [Double]; public var radius: Double }
    /// Vertical cylinder standing on `base` (its lowest point's centre).
    public struct Cylinder: Sendable, Codable, Equatable { public var name: String; public var base: [Double]; public var radius: Double; public var height: Double }

    /// Inside of the room: walls at min/max x and z, floor at min y, ceiling at max y.
    public var roomMin: [Double]
    public var roomMax: [Double]
    public var boxes: [Box]
    public var spheres: [Sphere]
    public var cylinders: [Cylinder]

    /// The default furnished room, with furniture positions jittered by `seed`.
    public static func furnished(seed: UInt64) -> RoomScene {
        var rng = SeededRandom(seed: seed, stream: 0xF00D)
        func j(_ s: Double = 0.1) -> Double { rng.uniform(-s ... s) }
        let cab = j(), sofa = j(), table = j(), ball = j(0.05), bin = j(0.05)
        // Walls, floor and ceiling a few mm off round coordinates: an ARKit world origin is
        // arbitrary, so real surfaces never line up with a voxel grid.
        let walls = (0..<6).map { _ in j(0.009) }
        return RoomScene(
            roomMin: [-2.6 + walls[0], walls[1], -2.1 + walls[2]], roomMax: [2.6 + walls[3], 2.6 + walls[4], 2.1 + walls[5]],
            boxes: [
                Box(name: "cabinet", min: [-2.6, 0, -0.6 + cab], max: [-2.1, 1.9, 0.6 + cab]),
                Box(name: "sofa", min: [1.2 + sofa, 0, -2.1], max: [2.6, 0.45, -1.2]),
                Box(name: "sofa back", min: [1.2 + sofa, 0.45, -2.1], max: [2.6, 0.9, -1.85]),
                Box(name: "table", min: [-0.5 + table, 0.7, 1.0], max: [0.6 + table, 0.76, 1.7]),
                Box(name: "table base", min: [-0.05 + table, 0, 1.3], max: [0.15 + table, 0.7, 1.4]),
                Box(name: "box on table", min: [0.1 + table, 0.76, 1.15], max: [0.4 + table, 0.98, 1.4]),
            ],
            spheres: [Sphere(name: "ball", centre: [1.4 + ball, 0.3, 1.2], radius: 0.3)],
            cylinders: [Cylinder(name: "pillar", base: [-1.7 + bin, 0, -1.6], radius: 0.22, height: 2.6)])
    }

    /// A bench space shaped like the real captures it stands in for (issue 18's 942-frame
    /// Stray walk spanned 5.6 x 3.2 x 7.5 m): a 5.6 x 2.7 x 7.5 m flat split by partition
    /// walls with doorways into a living room, a hall and two back rooms, each furnished,
    /// so a walk keeps reaching new space. Positions jittered by `seed`.
    public static func apartment(seed: UInt64) -> RoomScene {
        var rng = SeededRandom(seed: seed, stream: 0xF1A7)
        func j(_ s: Double = 0.1) -> Double { rng.uniform(-s ... s) }
        let walls = (0..<6).map { _ in j(0.009) }
        let t = 0.12  // partition thickness
        var boxes = [
            // Partition across the flat at z = 0.5, a doorway at x 0.3...1.3.
            Box(name: "partition west", min: [-2.8, 0, 0.5], max: [0.3, 2.7, 0.5 + t]),
            Box(name: "partition east", min: [1.3, 0, 0.5], max: [2.8, 2.7, 0.5 + t]),
            // Between the back rooms, open toward the hall for z > -1.6.
            Box(name: "back partition", min: [-0.06, 0, -3.75], max: [0.06, 2.7, -1.6]),
            // Living room (z > 0.6).
            Box(name: "sofa", min: [-2.8, 0, 1.6 + j()], max: [-1.9, 0.45, 3.4]),
            Box(name: "sofa back", min: [-2.8, 0.45, 1.6], max: [-2.55, 0.9, 3.4]),
            Box(name: "low table", min: [-1.4 + j(), 0, 2.0], max: [-0.6, 0.42, 2.9]),
            Box(name: "shelf", min: [2.35, 0, 1.2 + j()], max: [2.8, 2.1, 2.6]),
            Box(name: "tv bench", min: [-0.8 + j(), 0, 3.35], max: [1.2, 0.5, 3.75]),
            // Back rooms (z < 0.5).
            Box(name: "bed", min: [-2.8, 0, -3.6], max: [-1.2 + j(), 0.55, -1.6]),
            Box(name: "wardrobe", min: [-2.8, 0, -1.2], max: [-2.2, 2.2, 0.4 + j(0.05)]),
            Box(name: "desk", min: [1.2 + j(), 0.72, -3.75], max: [2.6, 0.76, -3.05]),
            Box(name: "desk leg", min: [1.25, 0, -3.7], max: [1.3, 0.72, -3.1]),
            Box(name: "cabinet", min: [2.3, 0, -2.6 + j()], max: [2.8, 1.2, -1.4]),
            Box(name: "boxes", min: [0.4, 0, -3.6], max: [0.9 + j(0.05), 0.6, -3.0]),
        ]
        boxes.append(Box(name: "chair", min: [1.6, 0, -2.9], max: [2.0, 0.45, -2.5]))
        // Clutter along the walls, as real rooms have it (bags, bins, stacked things).
        for k in 0..<48 {
            let side = k % 4, along = rng.uniform(0.05 ... 0.95), size = rng.uniform(0.15 ... 0.45), height = rng.uniform(0.1 ... 0.9)
            let x: Double, z: Double
            switch side {
            case 0: x = -2.8 + size / 2 + 0.02; z = -3.75 + 7.5 * along
            case 1: x = 2.8 - size / 2 - 0.02; z = -3.75 + 7.5 * along
            case 2: x = -2.8 + 5.6 * along; z = -3.75 + size / 2 + 0.02
            default: x = -2.8 + 5.6 * along; z = 3.75 - size / 2 - 0.02
            }
            boxes.append(Box(name: "clutter \(k)", min: [x - size / 2, 0, z - size / 2], max: [x + size / 2, height, z + size / 2]))
        }
        return RoomScene(
            roomMin: [-2.8 + walls[0], walls[1], -3.75 + walls[2]], roomMax: [2.8 + walls[3], 2.7 + walls[4], 3.75 + walls[5]],
            boxes: boxes,
            spheres: [Sphere(name: "ball", centre: [0.9 + j(0.05), 0.25, 1.8], radius: 0.25)],
            cylinders: [Cylinder(name: "lamp", base: [-2.4 + j(0.05), 0, 0.9], radius: 0.15, height: 1.6),
                        Cylinder(name: "plant", base: [2.3, 0, 0.9 + j(0.05)], radius: 0.25, height: 1.1)])
    }

    /// Distance along `dir` (not necessarily unit) from `origin` to the first surface, in
    /// units of |dir|, and the surface normal there (unit, facing any way).
    public func cast(origin o: Vec3, direction d: Vec3) -> (t: Double, normal: Vec3) {
        var best = Double.infinity, normal = Vec3.zero
        // Room: the ray leaves the box through the nearest exit plane.
        for axis in 0..<3 where d[axis] != 0 {
            let plane = d[axis] > 0 ? roomMax[axis] : roomMin[axis]
            let t = (plane - o[axis]) / d[axis]
            if t > 0 && t < best { best = t; normal = .zero; normal[axis] = 1 }
        }
        for b in boxes {
            var tNear = -Double.infinity, tFar = Double.infinity, hitAxis = 0
            var miss = false
            for axis in 0..<3 {
                if d[axis] == 0 {
                    if o[axis] < b.min[axis] || o[axis] > b.max[axis] { miss = true; break }
                    continue
                }
                var t0 = (b.min[axis] - o[axis]) / d[axis], t1 = (b.max[axis] - o[axis]) / d[axis]
                if t0 > t1 { swap(&t0, &t1) }
                if t0 > tNear { tNear = t0; hitAxis = axis }
                tFar = min(tFar, t1)
            }
            if !miss && tNear <= tFar && tNear > 0 && tNear < best {
                best = tNear; normal = .zero; normal[hitAxis] = 1
            }
        }
        for s in spheres {
            let c = Vec3(s.centre[0], s.centre[1], s.centre[2]), oc = o - c
            let a = dot(d, d), bq = dot(oc, d), cq = dot(oc, oc) - s.radius * s.radius
            let disc = bq * bq - a * cq
            if disc >= 0 {
                let t = (-bq - disc.squareRoot()) / a
                if t > 0 && t < best { best = t; normal = (oc + t * d) / s.radius }
            }
        }
        for c in cylinders {
            let ox = o.x - c.base[0], oz = o.z - c.base[2]
            let a = d.x * d.x + d.z * d.z, bq = ox * d.x + oz * d.z, cq = ox * ox + oz * oz - c.radius * c.radius
            let disc = bq * bq - a * cq
            if a > 0 && disc >= 0 {
                let t = (-bq - disc.squareRoot()) / a
                let y = o.y + t * d.y
                if t > 0 && t < best && y >= c.base[1] && y <= c.base[1] + c.height {
                    best = t; normal = Vec3(ox + t * d.x, 0, oz + t * d.z) / c.radius
                }
            }
        }
        return (best, normal)
    }

    /// Distance from a world point to the nearest surface of the scene (for checking
    /// reconstructed points against the truth).
    public func distanceToSurface(_ p: Vec3) -> Double {
        var best = Double.infinity
        for axis in 0..<3 { best = min(best, abs(p[axis] - roomMin[axis]), abs(p[axis] - roomMax[axis])) }
        for b in boxes {
            let lo = Vec3(b.min[0], b.min[1], b.min[2]), hi = Vec3(b.max[0], b.max[1], b.max[2])
            let q = Vec3(max(lo.x - p.x, 0, p.x - hi.x), max(lo.y - p.y, 0, p.y - hi.y), max(lo.z - p.z, 0, p.z - hi.z))
            let outside = length(q)
            let inside = min(p.x - lo.x, hi.x - p.x, p.y - lo.y, hi.y - p.y, p.z - lo.z, hi.z - p.z)
            best = min(best, outside > 0 ? outside : inside)
        }
        for s in spheres { best = min(best, abs(length(p - Vec3(s.centre[0], s.centre[1], s.centre[2])) - s.radius)) }
        for c in cylinders {
            let r = length(Vec3(p.x - c.base[0], 0, p.z - c.base[2]))
            let dy = max(c.base[1] - p.y, 0, p.y - c.base[1] - c.height)
            best = min(best, (pow(abs(r - c.radius), 2) + dy * dy).squareRoot())
        }
        return best
    }

    /// Edge of the colour cells, metres.
    public static let colourCell = 0.25

    /// The eight albedos of the colour cells (R'G'B', 0–255): far apart in every channel
    /// pair, so a point coloured from the wrong place is told apart from the right one.
    public static let palette: [SIMD3<UInt8>] = [
        SIMD3(200, 40, 40), SIMD3(40, 170, 60), SIMD3(50, 80, 210), SIMD3(225, 205, 60),
        SIMD3(180, 60, 180), SIMD3(60, 195, 195), SIMD3(240, 140, 40), SIMD3(235, 235, 235),
    ]

    /// The true colour of the surface at `p` (what a camera sees there: unlit albedo): a
    /// 3-D checker of `colourCell` cells, each one of the palette's colours by a hash of its
    /// index, so every surface shows a checker whose colours change across cell borders.
    public func colour(at p: Vec3) -> SIMD3<UInt8> {
        let i = Int64((p.x / Self.colourCell).rounded(.down)), j = Int64((p.y / Self.colourCell).rounded(.down))
        let k = Int64((p.z / Self.colourCell).rounded(.down))
        var h = UInt64(bitPattern: i &* 73_856_093 ^ j &* 19_349_663 ^ k &* 83_492_791)
        h = (h ^ (h >> 29)) &* 0xBF58_476D_1CE4_E5B9
        return Self.palette[Int((h ^ (h >> 32)) % UInt64(Self.palette.count))]
    }
}
