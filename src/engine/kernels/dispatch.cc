// Chooses the kernel set for this CPU at run time.
#include <cpuid.h>

#include <cstdlib>
#include <string_view>

#include "engine/kernels/sets.h"

namespace tf::engine::kernels {
namespace {

// F16C (half-precision conversions): CPUID leaf 1, ECX bit 29. Asked of CPUID itself, as clang's
// __builtin_cpu_supports does not know the name.
bool HasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

bool HasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && HasF16c();
}

bool HasAvx512() { return HasAvx2() && __builtin_cpu_supports("avx512f"); }

}  // namespace

const KernelSet* Avx2Kernels() { return HasAvx2() ? &kAvx2KernelSet : nullptr; }

const KernelSet* Avx512Kernels() {
  if (!HasAvx512()) return nullptr;
  static const KernelSet kSet = [] {
    KernelSet set = kAvx2KernelSet;
    set.name = "avx512";
    if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
      set.matmul_f16 = Avx512MatmulF16;
      set.matmul_bf16 = Avx512MatmulBf16;
      set.quantize_activations = Avx512QuantizeActivations;
      set.quantize_k_activations = Avx512QuantizeKActivations;
      if (__builtin_cpu_supports("avx512vnni")) {
        set.matmul_q8_0 = VnniMatmulQ8_0;
        set.matmul_q4_0 = VnniMatmulQ4_0;
        set.matmul_q8_0_packed = VnniMatmulQ8_0Packed;
        set.matmul_q4_0_packed = VnniMatmulQ4_0Packed;
        set.matmul_kquant = VnniMatmulKQuant;
      }
    }
    set.matmul_rows = Avx512MatmulRows;
    return set;
  }();
  return &kSet;
}

const KernelSet& BestKernels() {
  static const KernelSet* best = [] {
    const char* forced = std::getenv("TENSORFLEET_KERNELS");
    std::string_view want = forced == nullptr ? "" : forced;
    if (want == "reference") return &ReferenceKernels();
    if (want == "avx2" && Avx2Kernels() != nullptr) return Avx2Kernels();
    if (const KernelSet* set = Avx512Kernels(); set != nullptr && want != "avx2") return set;
    if (const KernelSet* set = Avx2Kernels(); set != nullptr) return set;
    return &ReferenceKernels();
  }();
  return *best;
}

}  // namespace tf::engine::kernels
