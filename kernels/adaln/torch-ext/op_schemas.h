#pragma once
// The op schemas of adaln: one list for both bindings (torch_binding.cpp, torch_binding_stable.cpp),
// so the two builds can never register different signatures.
namespace khub_kernels::adaln {

inline constexpr const char* kOpSchemas[] = {
    "adaln_rms(Tensor x, Tensor scale, Tensor shift, float eps) -> Tensor",
    "adaln_rms_table(Tensor x, Tensor table, Tensor temb, int shift_chunk, float eps) -> Tensor",
    "gated_residual_adaln_rms(Tensor h, Tensor delta, Tensor gate, Tensor scale, Tensor shift, float eps)"
    " -> (Tensor, Tensor)",
    "gated_residual_adaln_rms_table(Tensor h, Tensor delta, Tensor table, Tensor temb, int gate_chunk,"
    " int shift_chunk, float eps) -> (Tensor, Tensor)",
};

}  // namespace khub_kernels::adaln
