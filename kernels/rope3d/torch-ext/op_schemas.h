#pragma once
// The op schemas of rope3d: one list for both bindings (torch_binding.cpp, torch_binding_stable.cpp),
// so the two builds can never register different signatures.
namespace khub_kernels::rope3d {

inline constexpr const char* kOpSchemas[] = {
    "apply_rotary_emb(Tensor x, Tensor cos, Tensor sin) -> Tensor",
    "apply_rotary_emb_qk(Tensor q, Tensor k, Tensor cos, Tensor sin) -> (Tensor, Tensor)",
    "apply_rotary_emb_table_qk(Tensor q, Tensor k, Tensor cos_table, Tensor sin_table, Tensor index)"
    " -> (Tensor, Tensor)",
    "apply_rotary_emb_coords_qk(Tensor q, Tensor k, Tensor coords, Tensor freqs) -> (Tensor, Tensor)",
    "rms_norm_rope_table_qk(Tensor q, Tensor k, Tensor? q_weight, Tensor? k_weight, float eps,"
    " Tensor cos_table, Tensor sin_table, Tensor index) -> (Tensor, Tensor)",
    "ltx_rope_tables(Tensor positions, int dim, float theta=10000.0) -> (Tensor, Tensor)",
};

}  // namespace khub_kernels::rope3d
