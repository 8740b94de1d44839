#pragma once
// KL_SIMD_CLONES (internal to core): a function compiled for AVX-512, for AVX2 with FMA and for
// baseline x86-64, the loader picking the widest the host runs (an ifunc): one binary, portable
// and fast everywhere. Elsewhere it compiles once, for the target.
#if defined(__x86_64__) && defined(__linux__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define KL_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef KL_SIMD_CLONES
#define KL_SIMD_CLONES
#endif
