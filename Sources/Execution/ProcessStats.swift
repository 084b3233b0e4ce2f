#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Facts about the running process used by benchmarks.
public enum ProcessStats {
    /// Peak resident set size so far, in MB (10^6 bytes).
    public static func peakRSSMegabytes() -> Double {
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        #if os(Linux)
        return Double(usage.ru_maxrss) * 1024 / 1e6  // KiB on Linux
        #else
        return Double(usage.ru_maxrss) / 1e6  // bytes on macOS
        #endif
    }

    /// Monotonic seconds, for measuring intervals.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// Fixes glibc's mmap threshold at 32 MiB. By default glibc raises the threshold after
    /// freeing a large block, so later large buffers land on the heap and stay resident:
    /// peak RSS then grew run after run. A fixed threshold keeps the behaviour predictable;
    /// 32 MiB keeps medium arrays (poses, file buffers) off mmap's page faults.
    public static func fixMallocMmapThreshold() {
        #if os(Linux)
        _ = glibcMallopt(-3 /* M_MMAP_THRESHOLD */, 32 << 20)
        #endif
    }

    /// Hands the free pages inside malloc's heaps back to the system (`malloc_trim(0)`).
    public static func returnFreeHeapPages() {
        #if os(Linux)
        _ = glibcMallocTrim(0)
        #endif
    }

    /// Caps this process's address space (`RLIMIT_AS`) at `megabytes` MiB: allocations
    /// beyond it fail, so one runaway scan of a batch stops instead of exhausting memory.
    public static func limitAddressSpace(megabytes: Int) {
        #if os(Linux)
        var l = rlimit(rlim_cur: rlim_t(megabytes) << 20, rlim_max: rlim_t(megabytes) << 20)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &l)
        #endif
    }

    /// Number of active processor cores.
    public static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }
}

#if os(Linux)
/// `int mallopt(int, int)` from <malloc.h>, which the Glibc module does not export.
@_silgen_name("mallopt") private func glibcMallopt(_ param: Int32, _ value: Int32) -> Int32
/// `int malloc_trim(size_t)` from <malloc.h>.
@_silgen_name("malloc_trim") private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
