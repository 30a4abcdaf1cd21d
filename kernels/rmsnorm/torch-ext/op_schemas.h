#pragma once
// The op schemas of rmsnorm: one list for both bindings (torch_binding.cpp, torch_binding_stable.cpp),
// so the two builds can never register different signatures.
namespace khub_kernels::rmsnorm {

inline constexpr const char* kOpSchemas[] = {
    "rms_norm(Tensor x, Tensor? weight, float eps) -> Tensor",
    "rms_norm_rounding(Tensor x, Tensor? weight, float eps, str rounding) -> Tensor",
    "fused_add_rms_norm(Tensor x, Tensor residual, Tensor? weight, float eps) -> (Tensor, Tensor)",
};

}  // namespace khub_kernels::rmsnorm
