// swift-tools-version: 6.0
// depthpose — offline depth and pose analytics for iPhone LiDAR scans.
import PackageDescription
import Foundation

/// On x86-64 every Swift module is compiled for the x86-64-v3 level (AVX2, FMA, BMI2:
/// Intel Haswell and AMD Excavator or later; RHEL 10's baseline): the SIMD kernels run
/// 8 lanes wide with three-operand instructions, ~15% faster end to end for `cloud`.
/// `DEPTHPOSE_PORTABLE=1` builds for baseline x86-64 instead. The binary checks the CPU
/// before `main` (CPUCheck) and exits with status 78 and a message on one without them.
let portable = ProcessInfo.processInfo.environment["DEPTHPOSE_PORTABLE"].map { !$0.isEmpty && $0 != "0" } ?? false
#if arch(x86_64)
let cpuLevel: [SwiftSetting] = portable ? [] : [.unsafeFlags(["-target-cpu", "haswell"])]
let cpuCheck: [CSetting] = portable ? [] : [.define("DEPTHPOSE_X86_64_V3")]
/// The same level for the C kernels.
let cpuLevelC: [CSetting] = portable ? [] : [.unsafeFlags(["-march=x86-64-v3"])]
#else
let cpuLevel: [SwiftSetting] = [], cpuCheck: [CSetting] = [], cpuLevelC: [CSetting] = []
#endif

/// Hot-path modules are optimised even in debug builds, so `swift test` stays fast
/// (SIMD and pointer loops are 50-1000x slower unoptimised).
let optimisedInDebug: [SwiftSetting] = cpuLevel + [.unsafeFlags(["-O"], .when(configuration: .debug))]

/// swift-algorithms' `Algorithms`: `partitioningIndex(where:)`, the binary search over sorted
/// keys, times and tables, for every module that searches one.
let algorithms: Target.Dependency = .product(name: "Algorithms", package: "swift-algorithms")

func system(_ name: String, _ pkgConfig: String, apt: [String]) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt(apt)])
}

let package = Package(
    name: "depthpose",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "depthpose", targets: ["depthpose"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-algorithms", from: "1.2.0"),
    ],
    targets: [
        // MARK: - Native libraries (Debian packages)
        system("CZlib", "zlib", apt: ["zlib1g-dev"]),
        system("CLZ4", "liblz4", apt: ["liblz4-dev"]),
        system("CLibDeflate", "libdeflate", apt: ["libdeflate-dev"]),
        system("CLibPNG", "libpng", apt: ["libpng-dev"]),
        system("CTurboJPEG", "libturbojpeg", apt: ["libturbojpeg0-dev"]),

        .target(name: "CPNGBridge", dependencies: ["CLibPNG", "CLibDeflate"]),
        // Libraries most commands never need, opened with dlopen on first use: LAPACK from
        // OpenBLAS (libopenblas-dev) at the first solve, libarchive when an archive is opened.
        .target(name: "CLazyLoad", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(name: "COpenBLAS", dependencies: ["CLazyLoad"]),
        .target(name: "CLibArchive", dependencies: ["CLazyLoad"]),
        // FFmpeg (libavformat-dev, libavcodec-dev) for the scans' colour video.
        .target(name: "CFFmpeg", dependencies: ["CLazyLoad"]),
        // cairo (libcairo2-dev) for static plots: SVG, PDF and PNG.
        .target(name: "CCairo", dependencies: ["CLazyLoad"]),
        // One compiler builtin Swift lacks: the cache prefetch hint for the voxel tables.
        .target(name: "CPrefetch"),
        // Vector operations on lanes Swift's SIMD types handle badly (16-bit compares and packs,
        // widening 32-bit lanes to 64): the voxel weights' count and the search's block keys.
        .target(name: "CVectorLanes"),
        // The vector left-pack of a row's pixels with depth (a lane permute Swift's SIMD lacks).
        .target(name: "CRowPack", cSettings: cpuLevelC),
        // The LZFSE decoder (Record3D's depth and confidence frames): no Debian package has it.
        .target(name: "CLZFSE", cSettings: cpuLevelC),
        // prctl(PR_SET_PDEATHSIG) for nightly's child processes (prctl is variadic: Swift cannot call it).
        .target(name: "CProcessControl"),
        // The instruction-set check that runs before `main` (compiled for baseline x86-64).
        .target(name: "CPUCheck", cSettings: cpuCheck),

        // MARK: - Library modules, one concern each
        // Foundations, one concern each: errors and exit codes; threads, cores and process
        // limits; the median; reading inputs safely and writing outputs atomically; number text.
        .target(name: "Diagnostics", swiftSettings: optimisedInDebug),
        .target(name: "Execution", swiftSettings: optimisedInDebug),
        .target(name: "Statistics", swiftSettings: optimisedInDebug),
        .target(name: "FileIO", dependencies: ["Diagnostics"], swiftSettings: optimisedInDebug),
        .target(name: "TextNumbers", dependencies: ["Diagnostics", "FileIO"], swiftSettings: optimisedInDebug),
        .target(name: "Codecs", dependencies: ["Diagnostics", "FileIO", "CZlib", "CLZ4", "CLZFSE", "CLibDeflate", "CPNGBridge", "CTurboJPEG"],
                swiftSettings: optimisedInDebug),
        .target(name: "LinearAlgebra", dependencies: ["COpenBLAS", "Diagnostics"], swiftSettings: cpuLevel),
        .target(name: "Geometry", dependencies: ["LinearAlgebra"], swiftSettings: optimisedInDebug),
        .target(name: "ScanFormats", dependencies: ["Diagnostics", "Execution", "Statistics", "FileIO", "TextNumbers", "Codecs", "Geometry", "Trajectories", "CLibArchive", algorithms],
                swiftSettings: optimisedInDebug),
        // Colour video: streaming decode and encode through FFmpeg, colour sampling.
        .target(name: "Video", dependencies: ["CFFmpeg", "Codecs", "Diagnostics", "Execution", "FileIO", "ScanFormats", algorithms], swiftSettings: optimisedInDebug),
        // The per-sample kernels: back-projection, voxel tables, fusion.
        .target(name: "VoxelFusion", dependencies: ["Execution", "Geometry", "ScanFormats", "CPrefetch", "CRowPack", algorithms],
                swiftSettings: optimisedInDebug),
        // Pose refinement from the depth (and the colour frames' brightness): keyframes, 4-DoF projective ICP, loop closures, a 4-DoF pose graph.
        .target(name: "Refinement", dependencies: ["Execution", "Statistics", "Geometry", "LinearAlgebra", "ScanFormats", "Video", "VoxelFusion"],
                swiftSettings: optimisedInDebug),
        .target(name: "PointClouds", dependencies: ["Diagnostics", "Execution", "FileIO", "TextNumbers", "Geometry", "LinearAlgebra", "ScanFormats", "VoxelFusion", "Video", "Refinement", algorithms],
                swiftSettings: optimisedInDebug),
        // Meshes: TSDF fusion in a sparse block grid, marching cubes, PLY meshes.
        .target(name: "Meshing", dependencies: ["CPrefetch", "CVectorLanes", "Diagnostics", "Execution", "FileIO", "Geometry", "ScanFormats", "VoxelFusion", "Video", "Refinement"],
                swiftSettings: optimisedInDebug),
        .target(name: "Gestures", dependencies: ["Execution", "Statistics", "FileIO", "Geometry", "ScanFormats"], swiftSettings: optimisedInDebug),
        .target(name: "Trajectories", dependencies: ["Diagnostics", "Statistics", "FileIO", "TextNumbers", "Geometry", "LinearAlgebra", algorithms], swiftSettings: optimisedInDebug),
        .target(name: "Synthesis", dependencies: ["Execution", "FileIO", "Geometry", "ScanFormats", "Trajectories", "Gestures", "Video", algorithms],
                swiftSettings: optimisedInDebug),
        // Datasets for other tools: COLMAP's model, nerfstudio's transforms.json, Open3D's RGBD layout; the frame selection.
        .target(name: "Exports", dependencies: ["Execution", "Geometry"], swiftSettings: optimisedInDebug),
        .target(name: "Stages", dependencies: ["Diagnostics", "Execution", "Statistics", "FileIO", "Codecs", "Geometry", "ScanFormats", "Video", "PointClouds", "VoxelFusion", "Meshing", "Trajectories", "Gestures", "Plots", "Exports", "Refinement"],
                swiftSettings: optimisedInDebug),
        // Figures with round ticks, drawn as self-contained HTML pages (Debian's Chart.js inlined).
        .target(name: "Plots", dependencies: ["Diagnostics", "FileIO", "Geometry", "CCairo"]),
        // evo's result files (zips of JSON and .npy arrays), `res` over them, and eval's plots.
        .target(name: "ResultFiles", dependencies: ["Diagnostics", "Statistics", "FileIO", "Codecs", "Geometry", "Trajectories", "Plots", "CLibArchive"]),
        // A reconstructed surface against a reference (eval geometry): Open3D's voxel downsampling, an exact
        // k-d tree, NeuralRecon's accuracy, completeness, precision, recall and F-score; the error cloud and page.
        .target(name: "SurfaceMetrics", dependencies: ["Diagnostics", "Execution", "Statistics", "FileIO", "PointClouds", "Plots"],
                swiftSettings: optimisedInDebug),
        // The batch layer: `run` (all stages of one scan), scan discovery, archives, `nightly`, summaries.
        .target(name: "Batch", dependencies: ["Diagnostics", "Execution", "Statistics", "FileIO", "ScanFormats", "PointClouds", "Video", "Trajectories", "Gestures", "Refinement", "Stages", "Plots", "CLibArchive"],
                swiftSettings: cpuLevel),

        // MARK: - Command line
        .executableTarget(name: "depthpose", dependencies: [
            "CPUCheck", "CProcessControl", "Diagnostics", "Execution", "FileIO", "ScanFormats", "PointClouds", "VoxelFusion", "Video", "Meshing", "Trajectories", "Gestures", "Synthesis", "Stages", "Batch", "Plots", "ResultFiles", "Exports", "SurfaceMetrics", "Refinement",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: cpuLevel),

        // MARK: - Fuzzing: libFuzzer entry points, linked into a binary by scripts/fuzz.sh
        .target(name: "FuzzTargets", dependencies: ["Batch", "CLibDeflate", "Codecs", "PointClouds", "ResultFiles", "ScanFormats", "Trajectories"], path: "Fuzz/Targets"),

        // MARK: - Tests (mirror the modules; EndToEnd runs the built binary)
        .target(name: "TestSupport", dependencies: ["ScanFormats", "Synthesis"], path: "Tests/TestSupport"),
        .testTarget(name: "FileIOTests", dependencies: ["FileIO", "Diagnostics", "TestSupport"]),
        .testTarget(name: "TextNumbersTests", dependencies: ["TextNumbers", "Synthesis"]),
        .testTarget(name: "StatisticsTests", dependencies: ["Statistics"]),
        .testTarget(name: "ExecutionTests", dependencies: ["Execution"]),
        .testTarget(name: "CodecsTests", dependencies: ["Codecs", "CLibDeflate", "CPNGBridge", "Synthesis", "TestSupport"]),
        .testTarget(name: "PlotsTests", dependencies: ["Plots"]),
        .testTarget(name: "ResultFilesTests", dependencies: ["ResultFiles", "Codecs", "Plots", "TestSupport"]),
        .testTarget(name: "LinearAlgebraTests", dependencies: ["LinearAlgebra", "CLazyLoad"]),
        .testTarget(name: "GeometryTests", dependencies: ["Geometry", "LinearAlgebra", "Synthesis"]),
        .testTarget(name: "ScanFormatsTests", dependencies: ["ScanFormats", "Synthesis", "Codecs", "PointClouds", "Gestures", "Trajectories", "Stages", "TestSupport"]),
        .testTarget(name: "RefinementTests", dependencies: ["Refinement", "Execution", "ScanFormats", "Synthesis", "Trajectories", "Geometry", "Stages", "Video", "TestSupport"]),
        .testTarget(name: "SynthesisTests", dependencies: ["Synthesis", "ScanFormats", "TestSupport"]),
        .testTarget(name: "VoxelFusionTests", dependencies: ["VoxelFusion", "CRowPack", "Execution", "Geometry", "ScanFormats", "Synthesis"]),
        .testTarget(name: "PointCloudsTests", dependencies: ["PointClouds", "VoxelFusion", "Execution", "LinearAlgebra", "Synthesis", "ScanFormats", "Codecs", "Geometry", "Video", "TestSupport"]),
        .testTarget(name: "MeshingTests", dependencies: ["Meshing", "VoxelFusion", "Synthesis", "ScanFormats", "Geometry", "Video", "TestSupport"]),
        .testTarget(name: "TrajectoriesTests", dependencies: ["Trajectories", "Geometry", "Synthesis", "TestSupport"]),
        .testTarget(name: "GesturesTests", dependencies: ["Gestures", "Synthesis", "ScanFormats", "Codecs", "TestSupport"]),
        .testTarget(name: "StagesTests", dependencies: ["Stages", "Exports", "Execution", "Synthesis", "ScanFormats", "Trajectories", "Geometry", "Codecs", "Video", "TestSupport"]),
        .testTarget(name: "BatchTests", dependencies: ["Batch", "FileIO", "PointClouds", "Stages", "Synthesis", "TestSupport"]),
        .testTarget(name: "VideoTests", dependencies: ["Video", "Synthesis", "Geometry", "Trajectories", "TestSupport"]),
        .testTarget(name: "SurfaceMetricsTests", dependencies: ["SurfaceMetrics"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "Synthesis", "Codecs", "Geometry", "ScanFormats", "PointClouds", "Plots", "Batch", "SurfaceMetrics", "depthpose"]),
    ]
)
